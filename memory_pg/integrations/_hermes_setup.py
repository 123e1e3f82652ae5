"""What the Hermes provider opens and how long it waits: its store, its compactor, its settings.

Hermes gives a prefetch 8 s and abandons it after that, so the provider's store
waits seconds, not the library's defaults, for a connection, and its TCP links
carry libpq keepalives so a half-open link (a host gone, a firewall dropping
packets) fails instead of hanging. Calls that must end in time run on a daemon
thread with a deadline (:func:`call_within`).
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memory_pg.config import StoreSettings, database_url_from_env

T = TypeVar("T")

#: Seconds a prefetch may take before it gives up (Hermes abandons it at 8 s).
PREFETCH_TIMEOUT_S = 6.0
#: Seconds the compaction on shutdown may take; turns it leaves stay buffered.
SHUTDOWN_TIMEOUT_S = 10.0
#: Seconds the provider's store waits for a new connection, or for a pooled one.
CONNECT_TIMEOUT_S = 3
POOL_TIMEOUT_S = 3.0

#: libpq settings of the provider's TCP links (ignored on a unix socket): a silent
#: peer is found in about 25 s, and data left unacknowledged for 20 s ends the link.
KEEPALIVES: tuple[tuple[str, str], ...] = (
    ("keepalives", "1"),
    ("keepalives_idle", "10"),
    ("keepalives_interval", "5"),
    ("keepalives_count", "3"),
    ("tcp_user_timeout", "20000"),
)

#: What ``hermes memory setup`` asks for and ``hermes memory status`` lists: all are
#: environment variables, written to Hermes' ``.env``.
CONFIG_SCHEMA: tuple[dict[str, Any], ...] = (
    {
        "key": "database_url",
        "description": "PostgreSQL URL with pgvector (empty: embedded server)",
        "secret": True,
        "env_var": "MEMORY_PG_DATABASE_URL",
    },
    {
        "key": "home",
        "description": "data folder of the embedded server",
        "env_var": "MEMORY_PG_HOME",
    },
    {
        "key": "embedding_model",
        "description": "sentence-transformers model",
        "env_var": "MEMORY_PG_EMBEDDING_MODEL",
    },
    {
        "key": "user_id",
        "description": "the user whose memories these are (empty: Hermes' user, else one "
        "per Hermes profile)",
        "env_var": "MEMORY_PG_USER_ID",
    },
    {
        "key": "agent_id",
        "description": "this agent among the user's agents (empty: hermes)",
        "env_var": "MEMORY_PG_AGENT_ID",
    },
    {
        "key": "llm_base_url",
        "description": "OpenAI-compatible API root that compacts the dialogue "
        "(empty: the offline extractor)",
        "env_var": "MEMORY_PG_LLM_BASE_URL",
    },
    {
        "key": "llm_api_key",
        "description": "API key of that endpoint",
        "secret": True,
        "env_var": "MEMORY_PG_LLM_API_KEY",
    },
    {
        "key": "llm_model",
        "description": "model name of that endpoint (deepseek-chat, qwen-plus...)",
        "env_var": "MEMORY_PG_LLM_MODEL",
    },
)


def with_keepalives(url: str) -> str:
    """``url`` with the :data:`KEEPALIVES` it does not set itself (a URL only; a
    ``key=value`` connection string is returned as it is)."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = {name for name, _ in query}
    query += [(name, value) for name, value in KEEPALIVES if name not in given]
    return urlunsplit(parts._replace(query=urlencode(query)))


def open_store() -> Any:
    """The provider's store from the ``MEMORY_PG_*`` environment, unbound (the user is
    Hermes'), waiting :data:`CONNECT_TIMEOUT_S` for a connection, with keepalives."""
    from memory_pg.store import MemoryStore

    settings = StoreSettings(
        connect_timeout_s=CONNECT_TIMEOUT_S,
        pool_timeout_s=POOL_TIMEOUT_S,
        pooler=os.environ.get("MEMORY_PG_POOLER") or None,
    )
    url = database_url_from_env()
    return MemoryStore.from_env(
        url=with_keepalives(url) if url else None, user_id=None, settings=settings
    )


def compactor_from_env() -> Any:
    """The LLM compactor when ``MEMORY_PG_LLM_*`` is set, else the offline one.

    Never from ``OPENAI_*``: those are Hermes' (or the agent's) own endpoint, and the
    user's conversation goes only where memory-pg was configured to send it.

    Raises:
        ConfigurationError: the ``MEMORY_PG_LLM_*`` settings name no endpoint, or
            the ``openai`` package is missing.
    """
    from memory_pg.compaction import MemoryCompactor
    from memory_pg.config import LLMSettings

    settings = LLMSettings.from_env()
    if settings is None:
        return MemoryCompactor()
    from memory_pg.llm import OpenAICompatibleLLM

    return MemoryCompactor(OpenAICompatibleLLM(settings))


def call_within(call: Callable[[], T], timeout_s: float, name: str) -> T:
    """``call()`` on a daemon thread: its result, or its error, if it ends within
    ``timeout_s``.

    Raises:
        concurrent.futures.TimeoutError: it did not. It goes on alone; a daemon
            thread never holds up the process's exit.
    """
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        try:
            done.set_result(call())
        except BaseException as exc:  # handed to the caller
            done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return done.result(timeout=timeout_s)


__all__ = [
    "CONFIG_SCHEMA",
    "KEEPALIVES",
    "PREFETCH_TIMEOUT_S",
    "SHUTDOWN_TIMEOUT_S",
    "call_within",
    "compactor_from_env",
    "open_store",
    "with_keepalives",
]

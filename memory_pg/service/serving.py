"""Running the HTTP service: the store opened first, then uvicorn with the guard."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from collections.abc import Coroutine
from typing import Any, cast

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings
from memory_pg.errors import ConfigurationError
from memory_pg.service.guard import Guard, protocol_class
from memory_pg.service.http import ServiceSettings, create_app

#: Connections the service keeps open: as many as a store may hold by default
#: (``pool_size + max_overflow``), none of them opened and closed again under load.
POOL_SIZE = StoreSettings.pool_size + StoreSettings.max_overflow


def service_store_settings(pooler: str | None = None) -> StoreSettings:
    """The store settings of a service process: the default ones, with a pool that keeps
    its connections.

    Under a store's default pool (5 kept, 5 more under load) a busy service opened and
    closed a PostgreSQL session every dozen or so requests: SQLAlchemy's pool closes an
    overflow connection when it comes back to a full pool, and the service's demand
    moves around the pool's size all the time. Each new session cost the server a
    backend (``benchmarks/service_load.py``, 32 clients: 0.03 to 0.07 new sessions per
    request, about a quarter of PostgreSQL's CPU on a search). The service keeps the same
    ten open instead.
    """
    settings = StoreSettings(pool_size=POOL_SIZE, max_overflow=0)
    # Without one given, the default's: MEMORY_PG_POOLER, read by StoreSettings.
    return dataclasses.replace(settings, pooler=pooler) if pooler else settings


def serve(
    *,
    database_url: str | None,
    host: str = "127.0.0.1",
    port: int = 8080,
    home: str | None = None,
    embedding_model: str | None = None,
    auto_migrate: bool = False,
    settings: ServiceSettings | None = None,
    pooler: str | None = None,
    read_urls: list[str] | None = None,
) -> None:
    """Run the service with uvicorn until SIGINT/SIGTERM (in-flight requests finish)."""
    import uvicorn

    cfg = settings or ServiceSettings()
    store = AsyncMemoryStore(
        database_url,
        home=home,
        embedding_model=embedding_model,
        auto_migrate=True if auto_migrate else None,
        settings=service_store_settings(pooler),
        read_urls=read_urls,
    )
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    app = create_app(store, cfg)
    guard: Guard = app.state.guard
    config = uvicorn.Config(
        app,
        # Uvicorn's protocol (httptools or h11) with read timeouts and connection bounds.
        http=protocol_class(AutoHTTPProtocol, guard),
        host=host,
        port=port,
        access_log=False,  # our own log line per request carries no query string
        log_config=None,
        # Uvicorn hands it to asyncio.timeout, which takes a float: int() made 0.5 into 0.
        timeout_graceful_shutdown=cast(int, cfg.graceful_timeout_s),
        lifespan="on",
    )

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # Bodies still arriving get part of the graceful timeout, then a 503.
            guard.drain(cfg.graceful_timeout_s)
            await super().shutdown(sockets)

    server = Server(config)

    async def run() -> None:
        # The database first: one that is down, unknown or not migrated is a typed
        # error here, which the command prints as one line (exit 1), not a lifespan
        # traceback from uvicorn. The lifespan finds the store open.
        await store.open()
        serving = asyncio.create_task(server.serve())
        while not (server.started or serving.done()):
            await asyncio.sleep(0.05)
        if server.started:
            print(f"memory-pg: listening on http://{host}:{port}", file=sys.stderr, flush=True)
        await serving

    _event_loop_run(run())


def _event_loop_run(main: Coroutine[Any, Any, None]) -> None:
    """Run the service's loop on uvloop where it is installed, asyncio's otherwise.

    The event loop is a sixth of a search's CPU in the service: uvloop's (libuv, in C)
    takes about 15% less CPU per search than asyncio's selector loop
    (``benchmarks/service_cpu.py``). The ``service`` extra installs it where it
    builds (not on Windows); ``MEMORY_PG_EVENT_LOOP=asyncio`` keeps asyncio's.
    """
    choice = os.environ.get("MEMORY_PG_EVENT_LOOP", "").strip().lower()
    if choice not in ("", "auto", "uvloop", "asyncio"):
        main.close()
        raise ConfigurationError(
            f"MEMORY_PG_EVENT_LOOP={choice!r}: use auto (uvloop where installed), uvloop or asyncio"
        )
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                main.close()
                raise ConfigurationError(
                    "MEMORY_PG_EVENT_LOOP=uvloop, but uvloop is not installed: "
                    "pip install 'memory-pg[service]'"
                ) from None
        else:
            run = getattr(uvloop, "run", None)  # uvloop >= 0.18
            if run is not None:
                run(main)
                return
    asyncio.run(main)


__all__ = ["POOL_SIZE", "serve", "service_store_settings"]

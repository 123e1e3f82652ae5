"""Connection poolers (PgBouncer) between memory-pg and PostgreSQL: what each mode may use.

psycopg prepares a statement on the server once it has run it five times on a
connection (``prepare_threshold``). A pooler in transaction mode hands that server
connection to another client after each transaction, and the other client's
statements collide with the names prepared there (``prepared statement "_pg3_0"
already exists``, ``bind message supplies 2 parameters, but prepared statement
"_pg3_3" requires 79``). So memory-pg needs to know what stands in between:

============== =================================================================
``pooler``     use it for
============== =================================================================
``none``       a direct connection: prepared statements, ``statement_timeout``
               sent at connection start (``options``).
``session``    a pooler that keeps prepared statements: PgBouncer in session
               mode, or PgBouncer 1.21 or later in transaction mode with
               ``max_prepared_statements`` above 0 (the default from 1.24).
               Prepared statements; settings set per transaction.
``transaction`` a pooler that hands server connections around per transaction
               and does not keep prepared statements: PgBouncer up to 1.20, or
               ``max_prepared_statements = 0``; most other poolers. No prepared
               statements; settings set per transaction; the cron jobs that hold
               a session lock (``forget``, ``consolidate``, ``migrate``) refuse.
``auto``       the default: as ``none``, but a connection whose server process id
               differs from the one it was given at start goes through a pooler,
               and gets no prepared statements.
============== =================================================================

Choose it with the URL (``postgresql://app@bouncer:6432/db?pooler=transaction``,
the parameter is removed before connecting), ``StoreSettings(pooler=...)``, or
``MEMORY_PG_POOLER`` (the CLI and ``MemoryStore.from_env``).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.engine import make_url

from memory_pg.errors import ConfigurationError

logger = logging.getLogger(__name__)

#: The values of ``pooler``.
POOLER_MODES = ("auto", "none", "session", "transaction")

#: The URL query parameter that names the mode.
URL_PARAMETER = "pooler"

#: Engines made for a mode, so the jobs can tell (a host's own engine is absent: "auto").
_engine_modes: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()

#: Non-empty once the detection has been logged at INFO (then at DEBUG only).
_said_once: list[bool] = []


def check_mode(value: object, where: str = "pooler") -> str:
    """``value`` if it is a mode, else :class:`ConfigurationError`."""
    if isinstance(value, str) and value in POOLER_MODES:
        return value
    raise ConfigurationError(f"{where} must be one of {', '.join(POOLER_MODES)}, not {value!r}")


def split_url(url: str) -> tuple[str, str | None]:
    """The URL without its ``pooler`` parameter, and that parameter's value (or None)."""
    if "://" not in url or URL_PARAMETER + "=" not in url:
        return url, None
    parsed = make_url(url)
    value = parsed.query.get(URL_PARAMETER)
    if value is None:
        return url, None
    if isinstance(value, tuple):
        if len(set(value)) != 1:
            raise ConfigurationError(f"the URL names {URL_PARAMETER} twice: {sorted(value)}")
        value = value[0]
    mode = check_mode(value, "the URL's pooler parameter")
    rest = parsed.difference_update_query([URL_PARAMETER])
    return rest.render_as_string(hide_password=False), mode


def resolve(from_url: str | None, from_settings: str | None) -> str:
    """The mode: the URL's and the settings' agree, or one is given, or ``auto``."""
    if from_settings is not None:
        check_mode(from_settings, "StoreSettings.pooler")
    if from_url is not None and from_settings is not None and from_url != from_settings:
        raise ConfigurationError(
            f"the URL says pooler={from_url}, the settings say pooler={from_settings}"
        )
    return from_url or from_settings or "auto"


def connect_args(mode: str, *, statement_timeout_ms: int) -> dict[str, Any]:
    """psycopg connection arguments of a mode (beside the timeouts every mode sets).

    A pooler refuses or drops ``options`` at connection start (PgBouncer: "unsupported
    startup parameter"), and a session setting would follow the server connection
    to other clients: there the store sets ``statement_timeout`` per transaction.
    """
    args: dict[str, Any] = {}
    if mode in ("auto", "none"):
        args["options"] = "-c statement_timeout=" + str(int(statement_timeout_ms))
    # A statement is prepared the first time a connection runs it, not the sixth
    # (psycopg's default): the store's statements are built once per shape and run
    # again and again, and each unprepared run of a search plans it anew (2-3 ms of
    # the server's CPU for the hybrid statement; half of a search).
    args["prepare_threshold"] = None if mode == "transaction" else PREPARE_THRESHOLD
    return args


#: Runs of a statement on a connection before psycopg prepares it (see connect_args).
PREPARE_THRESHOLD = 0


def settings_per_transaction(mode: str) -> bool:
    """True when session settings cannot be trusted: set them in every transaction."""
    return mode in ("session", "transaction")


def watch(engine: Engine, mode: str) -> None:
    """Remember ``engine``'s mode; under ``auto``, check each new connection for a pooler."""
    _engine_modes[engine] = mode
    if mode == "auto":
        event.listen(engine, "connect", _detect_pooler)


def engine_mode(engine: Engine) -> str:
    """The mode ``engine`` was made for (``auto`` for an engine memory-pg did not make)."""
    return _engine_modes.get(engine, "auto")


def require_session(engine: Engine, job: str, holds: str = "a session lock") -> None:
    """Refuse a job that holds session state across transactions on a per-transaction pooler.

    A session advisory lock's lock and unlock would run on different server
    connections: the lock would stay with a server connection and every later run
    would skip (or wait). ``reembed``'s session ``statement_timeout`` would be set
    on one server connection and its index build run on another.
    """
    if engine_mode(engine) == "transaction":
        raise ConfigurationError(
            f"`{job}` holds {holds}, which a transaction pooler cannot keep: "
            "connect it to PostgreSQL directly or through a session-mode pool "
            "(MEMORY_PG_MAINTENANCE_DATABASE_URL, or --database-url for migrate)"
        )


def _detect_pooler(dbapi_connection: Any, record: Any) -> None:
    """A pooler gives the client a process id of its own: compare it with the server's."""
    driver = record.driver_connection
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    finally:
        cursor.close()
        dbapi_connection.rollback()
    if row is not None and int(row[0]) != int(driver.info.backend_pid):
        # Prepared statements would follow the server connection to other clients.
        driver.prepare_threshold = None
        (logger.debug if _said_once else logger.info)(
            "connection goes through a pooler (its server process id is not the one it was "
            "given): no prepared statements on it; set pooler=transaction or pooler=session "
            "to say so"
        )
        _said_once.append(True)


__all__ = [
    "POOLER_MODES",
    "URL_PARAMETER",
    "check_mode",
    "connect_args",
    "engine_mode",
    "require_session",
    "resolve",
    "settings_per_transaction",
    "split_url",
    "watch",
]

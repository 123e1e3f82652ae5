"""One network exchange for a light call: a store's own transactions in pipeline mode.

A store runs each plan in a transaction of its own: ``BEGIN``, the tenant and
settings (:func:`memory_pg.plans.protocol.begin`: one or two statements), the plan's statements,
``COMMIT``. Sent one by one, with the pool's pre-ping before them, a search took
five network exchanges, each a full wait for the server. Here psycopg's pipeline
mode queues ``BEGIN``, the tenant statement and the plan's first statement (and
``COMMIT`` too when that statement is the plan's :class:`~memory_pg.plans.protocol.Final`
one) and sends them with one ``Sync``: a search is one exchange. A plan of more
statements continues after its first exchange in the open transaction, one
exchange per statement, then ``COMMIT``.

``BEGIN`` and the first statements (:func:`~memory_pg.plans.protocol.begin`: shared
statements and their values) go to psycopg directly, their text compiled once:
through SQLAlchemy each cost about as much client CPU as the search statement's own
execution (its result handling, its cursor description, a greenlet hand-off), and
their rows are not read. A driver error on one of them is wrapped as SQLAlchemy
would wrap it (invalidating a lost connection), so it reaches
:func:`~memory_pg.plans.protocol.translate_errors` and the retry below the same way.

The messages are the extended protocol's, as before (no multi-statement strings),
so prepared statements stay where the pooler allows them
(:mod:`memory_pg.pooling`) and a pooler in transaction mode sees one transaction
between two ``ReadyForQuery``. Errors still pass through SQLAlchemy, so they reach
:func:`~memory_pg.plans.protocol.translate_errors` and a lost connection is
invalidated in the pool.

A dead connection is kept from callers without a ping per checkout:
:func:`watch_liveness` looks at the socket (a server that ended the session has
closed it: free to see) and pings only a connection idle longer than
:data:`PING_AFTER_IDLE_S`; a call whose first exchange finds its connection lost
anyway (killed a moment before) runs that exchange again once on a fresh one,
which is safe because nothing of it can have been committed without a reply
unless the exchange carried the ``COMMIT`` of a :class:`Final` read.

Not used on a caller's connection (``conn=``: its transaction, its settings), nor
where the driver is not psycopg 3 with a libpq that has pipeline mode, nor where
the host's engine gave psycopg a cursor class of its own: there the store runs
the statements one by one as before.
"""

from __future__ import annotations

import contextlib
import functools
import select
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import pq
from sqlalchemy import Connection, Engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql import text
from sqlalchemy.sql.elements import TextClause

from memory_pg.plans.protocol import Final, Plan, Rows, Step, materialise, split_step

T = TypeVar("T")

#: A pooled connection idle longer than this is pinged at checkout (one round trip).
PING_AFTER_IDLE_S = 5.0

_IDLE_SINCE = "memory_pg_idle_since"
_COMMIT = text("COMMIT")


# -- liveness at checkout ---------------------------------------------------------------


def watch_liveness(engine: Engine) -> None:
    """Replace a dead pooled connection at checkout, pinging only one idle for long.

    Instead of ``pool_pre_ping``, which costs every call a round trip: a connection
    whose server closed it (``pg_terminate_backend``, a restart) has a readable
    socket, seen without a round trip; one idle longer than :data:`PING_AFTER_IDLE_S`
    is pinged as ``pool_pre_ping`` would. A dead one is replaced by a fresh one.
    """
    event.listen(engine, "checkin", _checked_in)
    event.listen(engine, "checkout", _check_out(engine))


def _checked_in(_dbapi: Any, record: Any) -> None:
    if record is not None:
        record.info[_IDLE_SINCE] = time.monotonic()


def _check_out(engine: Engine) -> Any:
    def check(dbapi: Any, record: Any, _proxy: Any) -> None:
        driver = record.driver_connection
        pgconn = getattr(driver, "pgconn", None)
        if pgconn is not None and closed_by_server(pgconn):
            raise sa_exc.DisconnectionError("the server closed this connection")
        since = record.info.get(_IDLE_SINCE)
        if since is not None and time.monotonic() - since > PING_AFTER_IDLE_S:
            try:
                if isinstance(driver, psycopg.Connection):
                    _ping(driver)
                else:
                    engine.dialect.do_ping(dbapi)
            except Exception as exc:  # any failure: let the pool open a fresh one
                raise sa_exc.DisconnectionError(f"ping failed: {exc}") from exc

    return check


def _ping(driver: psycopg.Connection[Any]) -> None:
    """The dialect's ping (``;`` in autocommit), never prepared: the store's engines
    prepare a statement on its first run, which costs a round trip of its own."""
    before = driver.autocommit
    driver.autocommit = True
    try:
        driver.execute(";", prepare=False)
    finally:
        if not driver.closed:
            driver.autocommit = before


def closed_by_server(pgconn: pq.abc.PGconn) -> bool:
    """True when the server has ended this idle connection (no round trip: the socket
    is readable and holds the end of the stream, or the connection is already bad)."""
    for _ in range(3):  # the server's last message, then the end of the stream
        if pgconn.status != pq.ConnStatus.OK:
            return True
        try:
            readable, _, _ = select.select([pgconn.socket], [], [], 0)
            if not readable:
                return False
            pgconn.consume_input()
        except (psycopg.Error, OSError, ValueError):
            return True
    return pgconn.status != pq.ConnStatus.OK


# -- the statement's conversion, remembered ------------------------------------------------

try:  # psycopg's own conversion of ``%(name)s`` placeholders to ``$n`` (private, so guarded)
    from psycopg._queries import PostgresQuery, _query2pg_nocache

    _CONVERT_OK = all(hasattr(PostgresQuery, name) for name in ("_ensure_bytes", "dump"))
except ImportError:  # pragma: no cover - another psycopg: its default conversion
    _CONVERT_OK = False

if _CONVERT_OK:
    #: The conversion of a statement text: memory-pg's statements are built once per shape.
    _converted = functools.lru_cache(maxsize=128)(_query2pg_nocache)

    class _SharedQuery(PostgresQuery):
        """psycopg's conversion of a statement, remembered for long ones too.

        psycopg caches it only for statements under 4 kB and 50 parameters, so it
        parsed the 9.6 kB, 91-placeholder search statement again on every call
        (about 2 ms of a search's client time here). Its text is the same for every
        search of its shape (the values vary), so the conversion is remembered.
        """

        __slots__ = ()

        def convert(self, query: Any, vars: Any) -> None:
            if vars is None or not isinstance(query, bytes | str):
                super().convert(query, vars)
                return
            bquery = self._ensure_bytes(query)
            converted = _converted(bquery, self._tx.encoding)
            self.query, self._want_formats, self._order, self._parts = converted
            self.dump(vars)


# -- the first statements, straight to psycopg -----------------------------------------


@functools.lru_cache(maxsize=64)
def _compiled(statement: TextClause, dialect: Dialect) -> str:
    """The text psycopg runs for a shared statement (placeholders and casts as
    SQLAlchemy renders them), compiled once per statement object."""
    return str(statement.compile(dialect=dialect))


def _direct(step: Step, dialect: Dialect) -> tuple[str, dict[str, Any]] | None:
    """A first statement that psycopg can run directly: a shared text statement and its
    values (a :class:`~memory_pg.sql.core.Bound`); None for any other step."""
    if isinstance(step, tuple) and not isinstance(step, Final):
        statement, values = step
        if isinstance(statement, TextClause) and values is not None:
            return _compiled(statement, dialect), values
    return None


def _wrapped(exc: psycopg.Error, sql: str, dialect: Dialect, invalidated: bool) -> Exception:
    """A driver error of a statement sent directly, as SQLAlchemy raises one of its own."""
    return sa_exc.DBAPIError.instance(
        sql,
        None,
        exc,
        psycopg.Error,
        hide_parameters=True,
        connection_invalidated=invalidated,
        dialect=dialect,
    )


def _send_first(conn: Connection, raw: psycopg.Connection[Any], first: Sequence[Step]) -> None:
    """``BEGIN`` and the first statements, queued in the pipeline."""
    _send(conn, raw, "BEGIN", None)
    for step in first:
        direct = _direct(step, conn.dialect)
        if direct is None:
            conn.execute(*split_step(step))
        else:
            _send(conn, raw, *direct)


def _send(
    conn: Connection, raw: psycopg.Connection[Any], sql: str, values: dict[str, Any] | None
) -> None:
    try:
        raw.execute(sql, values)
    except psycopg.Error as exc:
        lost = raw.closed or raw.broken  # SQLAlchemy's test for psycopg
        if lost:
            conn.invalidate(exc)
        raise _wrapped(exc, sql, conn.dialect, lost) from exc


async def _send_first_async(
    conn: AsyncConnection, raw: psycopg.AsyncConnection[Any], first: Sequence[Step]
) -> None:
    """:func:`_send_first` on an :class:`AsyncConnection`."""
    await _send_async(conn, raw, "BEGIN", None)
    for step in first:
        direct = _direct(step, conn.dialect)
        if direct is None:
            await conn.execute(*split_step(step))
        else:
            await _send_async(conn, raw, *direct)


async def _send_async(
    conn: AsyncConnection,
    raw: psycopg.AsyncConnection[Any],
    sql: str,
    values: dict[str, Any] | None,
) -> None:
    try:
        await raw.execute(sql, values)
    except psycopg.Error as exc:
        lost = raw.closed or raw.broken  # SQLAlchemy's test for psycopg
        if lost:
            await conn.invalidate(exc)
        raise _wrapped(exc, sql, conn.dialect, lost) from exc


# -- the pipelined transaction ------------------------------------------------------------


class _Ending:
    """When armed, the next cursor to execute ends the pipeline (its one Sync)."""

    def __init__(self, commit: bool) -> None:
        self.commit = commit
        self.armed = False
        self.stack: contextlib.ExitStack | None = None
        self.astack: contextlib.AsyncExitStack | None = None


class _EndingCursor(psycopg.Cursor[Any]):
    """psycopg's cursor; the armed one sends the queued statements, and reads the replies."""

    ending: _Ending | None = None

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        super().execute(*args, **kwargs)
        ending = self.ending
        if ending is not None and ending.armed and ending.stack is not None:
            ending.armed = False
            if ending.commit:
                self.connection.execute(b"COMMIT")
            ending.stack.close()  # Sync: the exchange; every queued reply is read
        return self


class _AsyncEndingCursor(psycopg.AsyncCursor[Any]):
    """The asyncio twin of :class:`_EndingCursor`."""

    ending: _Ending | None = None

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        await super().execute(*args, **kwargs)
        ending = self.ending
        if ending is not None and ending.armed and ending.astack is not None:
            ending.armed = False
            if ending.commit:
                await self.connection.execute(b"COMMIT")
            await ending.astack.aclose()
        return self


def _factory(cls: Any, ending: _Ending) -> Any:
    def make(conn: Any, *args: Any, **kwargs: Any) -> Any:
        cursor = cls(conn, *args, **kwargs)
        cursor.ending = ending
        if _CONVERT_OK:
            cursor._query_cls = _SharedQuery
        return cursor

    return make


def _can_pipeline(driver: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    default = psycopg.Cursor if isinstance(driver, psycopg.Connection) else psycopg.AsyncCursor
    return driver.cursor_factory is default and psycopg.Pipeline.is_supported()


def _first(plan: Plan[T]) -> tuple[Step | None, T | None]:
    try:
        return next(plan), None
    except StopIteration as stop:
        return None, stop.value


def _lost(exc: BaseException) -> bool:
    return isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated


def run(
    engine: Engine,
    first: Sequence[Step],
    plan: Plan[T],
    place: contextlib.AbstractContextManager[None] | None = None,
) -> T:
    """Run ``plan`` in a transaction of its own on a connection of ``engine``, holding
    ``place`` (:mod:`memory_pg.admission`) while it has one: a plan of no statement
    takes neither."""
    step, value = _first(plan)
    if step is None:  # a plan of no statement
        return value  # type: ignore[return-value]
    with place or contextlib.nullcontext():
        return _run(engine, first, plan, step)


def _run(engine: Engine, first: Sequence[Step], plan: Plan[T], step: Step) -> T:
    for attempt in (1, 2):
        with engine.connect() as conn:
            driver = conn.connection.driver_connection
            if not (isinstance(driver, psycopg.Connection) and _can_pipeline(driver)):
                with conn.begin():
                    for stmt in first:
                        conn.execute(*split_step(stmt))
                    return _finish(conn, plan, _execute(conn, step))
            with _autocommit(conn, driver) as raw:
                try:
                    rows = _pipelined(conn, raw, first, step)
                except sa_exc.DBAPIError as exc:
                    if attempt == 1 and _lost(exc):
                        continue  # killed a moment before: nothing of it committed
                    raise
                if isinstance(step, Final):
                    return _done(plan, rows)
                value = _finish(conn, plan, rows)
                conn.execute(_COMMIT)
                return value
    raise AssertionError("unreachable")  # pragma: no cover


def _pipelined(
    conn: Connection, raw: psycopg.Connection[Any], first: Sequence[Step], step: Step
) -> Rows:
    ending = _Ending(commit=isinstance(step, Final))
    raw.cursor_factory = _factory(_EndingCursor, ending)
    try:
        with contextlib.ExitStack() as stack:
            ending.stack = stack
            stack.enter_context(raw.pipeline())
            _send_first(conn, raw, first)
            ending.armed = True
            return materialise(conn.execute(*split_step(step)))
    except psycopg.Error as exc:
        # The pipeline's own Sync, outside any statement, found the session gone.
        lost = raw.closed or raw.broken
        if lost:
            conn.invalidate(exc)
        raise _wrapped(exc, "SYNC", conn.dialect, lost) from exc
    finally:
        raw.cursor_factory = psycopg.Cursor


@contextlib.contextmanager
def _autocommit(
    conn: Connection, raw: psycopg.Connection[Any]
) -> Iterator[psycopg.Connection[Any]]:
    """psycopg in autocommit, so that it sends no BEGIN of its own (ours is pipelined);
    on the way out no transaction is left open and autocommit is as it was."""
    before = raw.autocommit
    raw.autocommit = True
    try:
        yield raw
    finally:
        if not (raw.closed or raw.broken):
            try:
                if raw.info.transaction_status != pq.TransactionStatus.IDLE:
                    raw.rollback()
                raw.autocommit = before
            except psycopg.Error:
                conn.invalidate()  # never hand out a connection left in autocommit


def _execute(conn: Connection, step: Step) -> Rows:
    return materialise(conn.execute(*split_step(step)))


def _done(plan: Plan[T], rows: Rows) -> T:
    try:
        plan.send(rows)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    raise RuntimeError("a plan yielded a statement after its Final one")


def _finish(conn: Connection, plan: Plan[T], rows: Rows) -> T:
    try:
        while True:
            rows = _execute(conn, plan.send(rows))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


# -- the asyncio twin ---------------------------------------------------------------------


async def run_async(engine: AsyncEngine, first: Sequence[Step], plan: Plan[T]) -> T:
    """:func:`run` on an :class:`AsyncEngine`."""
    step, value = _first(plan)
    if step is None:
        return value  # type: ignore[return-value]
    for attempt in (1, 2):
        async with engine.connect() as conn:
            driver = (await conn.get_raw_connection()).driver_connection
            if not (isinstance(driver, psycopg.AsyncConnection) and _can_pipeline(driver)):
                async with conn.begin():
                    for stmt in first:
                        await conn.execute(*split_step(stmt))
                    return await _finish_async(conn, plan, await _execute_async(conn, step))
            async with _autocommit_async(conn, driver) as raw:
                try:
                    rows = await _pipelined_async(conn, raw, first, step)
                except sa_exc.DBAPIError as exc:
                    if attempt == 1 and _lost(exc):
                        continue
                    raise
                if isinstance(step, Final):
                    return _done(plan, rows)
                value = await _finish_async(conn, plan, rows)
                await conn.execute(_COMMIT)
                return value
    raise AssertionError("unreachable")  # pragma: no cover


async def _pipelined_async(
    conn: AsyncConnection,
    raw: psycopg.AsyncConnection[Any],
    first: Sequence[Step],
    step: Step,
) -> Rows:
    ending = _Ending(commit=isinstance(step, Final))
    raw.cursor_factory = _factory(_AsyncEndingCursor, ending)
    try:
        async with contextlib.AsyncExitStack() as stack:
            ending.astack = stack
            await stack.enter_async_context(raw.pipeline())
            await _send_first_async(conn, raw, first)
            ending.armed = True
            return materialise(await conn.execute(*split_step(step)))
    except psycopg.Error as exc:
        lost = raw.closed or raw.broken  # as in :func:`_pipelined`
        if lost:
            await conn.invalidate(exc)
        raise _wrapped(exc, "SYNC", conn.dialect, lost) from exc
    finally:
        raw.cursor_factory = psycopg.AsyncCursor


@contextlib.asynccontextmanager
async def _autocommit_async(
    conn: AsyncConnection, raw: psycopg.AsyncConnection[Any]
) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    before = raw.autocommit
    await raw.set_autocommit(True)
    try:
        yield raw
    finally:
        if not (raw.closed or raw.broken):
            try:
                if raw.info.transaction_status != pq.TransactionStatus.IDLE:
                    await raw.rollback()
                await raw.set_autocommit(before)
            except psycopg.Error:
                await conn.invalidate()


async def _execute_async(conn: AsyncConnection, step: Step) -> Rows:
    return materialise(await conn.execute(*split_step(step)))


async def _finish_async(conn: AsyncConnection, plan: Plan[T], rows: Rows) -> T:
    try:
        while True:
            rows = await _execute_async(conn, plan.send(rows))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


__all__ = ["PING_AFTER_IDLE_S", "closed_by_server", "run", "run_async", "watch_liveness"]

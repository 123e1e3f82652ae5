"""The plan protocol: a plan is a generator that yields statements and receives their rows.

A driver (:class:`~memory_pg.store.MemoryStore` on a ``Connection``,
:class:`~memory_pg.async_store.AsyncMemoryStore` on an ``AsyncConnection``) sends
each step's rows back as :class:`Rows` (:func:`materialise`) until the plan
returns its value; a plan itself does no I/O, so both drivers run the same code.
A step may also be a :class:`Bound`: a statement built once and this run's values.
Driver errors become memory-pg's typed errors at one boundary, :func:`translate_errors`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator, Iterator
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import exc as sa_exc
from sqlalchemy.sql import Executable

from memory_pg import pooling
from memory_pg.config import StoreSettings
from memory_pg.errors import (
    AccessDenied,
    DatabaseError,
    DatabaseUnavailable,
    InvalidInput,
    MemoryPgError,
    QueryTimeout,
    SchemaNotReady,
    TenantViolation,
)
from memory_pg.sql import setup
from memory_pg.sql.core import Bound

T = TypeVar("T")


class Rows(list[dict[str, Any]]):
    """Rows of a statement as plain dicts, with the statement's rowcount."""

    rowcount: int = -1


class Final(NamedTuple):
    """A plan's last statement, whose rows end it: the driver may send the ``COMMIT``
    with it, in the same network exchange (:mod:`memory_pg.exchange`), so the
    transaction commits before the plan has seen the rows. Only for a statement
    after which the plan neither raises nor writes (a read, or one that records its
    own use); a plan that yields again after it is an error."""

    statement: Executable
    values: dict[str, Any] | None = None


#: What a plan yields: a statement, or a shared statement and the values to run it with.
Step = Executable | tuple[Executable, dict[str, Any]] | Final
Plan = Generator[Step, Rows, T]


def split_step(step: Step) -> tuple[Executable, dict[str, Any] | None]:
    """The statement of a plan's step and its values (None: the statement carries them)."""
    if isinstance(step, tuple):
        return step[0], step[1]
    return step, None


def final(step: Step) -> Final:
    """``step`` marked as its plan's last statement (see :class:`Final`)."""
    return Final(*split_step(step))


def materialise(result: Any) -> Rows:
    """A driver's result (sync or async ``CursorResult``) as :class:`Rows`."""
    rows = Rows(dict(r._mapping) for r in result) if result.returns_rows else Rows()
    rows.rowcount = result.rowcount
    return rows


def one(step: Step) -> Plan[Rows]:
    """The plan of a single statement: its rows."""
    rows = yield step
    return rows


def begin(
    user_id: str | None,
    settings: StoreSettings,
    pooler: str,
    ef_search: int | None = None,
) -> tuple[Bound, ...]:
    """The first statements of every transaction: the tenant, and behind a pooler the
    statement timeout (which cannot be set when the connection starts). Each is a
    shared statement and its values (``conn.execute(*bound)``), so that
    :mod:`memory_pg.exchange` compiles it once.

    With ``ef_search`` (a search, or a write whose supersession candidates are found
    by the same kind of nearest-neighbour query), the HNSW settings too (its
    ``ef_search`` and iterative scan, so a filtered HNSW walk still finds ``k``), and
    for one user :func:`~memory_pg.sql.setup.plan_for_user`: a heavy user's plan is
    made for them.
    """
    timeout = settings.statement_timeout_ms if pooling.settings_per_transaction(pooler) else None
    tenant = setup.bound_tenant(user_id, ef_search, statement_timeout_ms=timeout)
    if ef_search is None or not user_id or pooler == "transaction":  # no prepared plans there
        return (tenant,)
    return (tenant, setup.bound_plan_for_user(user_id))


#: SQLSTATE lock_not_available: a statement waited past a ``lock_timeout``.
LOCK_NOT_AVAILABLE = "55P03"


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn driver errors into memory-pg's typed errors, chained ``from`` the original."""
    try:
        yield
    except MemoryPgError:
        raise
    except sa_exc.DBAPIError as exc:
        raise translate(exc) from exc
    except sa_exc.TimeoutError as exc:  # the pool had no free connection in time
        raise DatabaseUnavailable(f"no database connection available: {exc}") from exc


def translate(exc: sa_exc.DBAPIError) -> MemoryPgError:
    """The typed error of a driver error (by SQLSTATE)."""
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None) or ""
    name = type(orig).__name__
    if sqlstate == "57014":
        return QueryTimeout(f"statement cancelled (statement_timeout): {name}")
    if sqlstate == LOCK_NOT_AVAILABLE:
        return QueryTimeout(
            "gave up waiting for a lock that another session holds (lock_timeout): "
            f"{str(orig).strip()[:200]}; the statement was not applied: run it again "
            "when that session's work is done"
        )
    if sqlstate == "42501":
        if "row-level security" in str(orig):
            return TenantViolation(
                "row-level security refused a row outside this transaction's tenant "
                f"(memory_pg.user_id): {str(orig).strip()[:300]}"
            )
        return AccessDenied(
            f"permission denied: {str(orig).strip()[:300]}; grant the role memory_pg_app "
            "(or memory_pg_maintenance for cross-user jobs), see docs/roles.md"
        )
    if sqlstate == "42P01":
        return SchemaNotReady(
            "memory-pg tables are missing: run `memory-pg migrate` (or `alembic upgrade head`)"
        )
    if (
        exc.connection_invalidated
        or isinstance(exc, sa_exc.OperationalError)
        or (sqlstate[:2] in ("08", "57"))
    ):
        return DatabaseUnavailable(f"database unavailable: {name}: {_unreachable(orig, sqlstate)}")
    if sqlstate[:2] == "22" or sqlstate[:2] == "23":
        return InvalidInput(f"the database refused the value: {name}: {str(orig).strip()[:300]}")
    return DatabaseError(f"database error {sqlstate or name}: {str(orig).strip()[:300]}")


#: What to check when a connection cannot be made: by the SQLSTATE where the server
#: sent one, else by what libpq said (it gives none for a connection attempt).
_CONNECT_FIXES = (
    (
        ("28P01", "28000"),
        re.compile(r'authentication failed|role ".*" does not exist|no pg_hba\.conf entry'),
        "check the user name and password of the database URL",
    ),
    (
        ("3D000",),
        re.compile(r'database ".*" does not exist'),
        "create that database (createdb NAME) or fix its name in the database URL",
    ),
    (
        ("08001",),
        re.compile(r"connection failed|failed to resolve host|could not connect|timeout expired"),
        "is PostgreSQL running there? check the host and port of the database URL",
    ),
)


def _unreachable(orig: object, sqlstate: str) -> str:
    """What the driver said, on one line, and for a connection that could not be made
    what to check: the URL's user and password, its database, its host and port."""
    lines = str(orig).strip().splitlines() or [""]
    said = " ".join(lines[0].split())[:300]  # libpq's second line is a hint of its own
    for states, pattern, fix in _CONNECT_FIXES:
        if sqlstate in states or (not sqlstate and pattern.search(said)):
            return f"{said}; {fix} (--database-url or MEMORY_PG_DATABASE_URL)"
    return said


__all__ = [
    "LOCK_NOT_AVAILABLE",
    "Bound",
    "Final",
    "Plan",
    "Rows",
    "Step",
    "begin",
    "final",
    "materialise",
    "one",
    "split_step",
    "translate",
    "translate_errors",
]

"""What a job needs of its database role, checked before it starts (see docs/roles.md).

Row-level security does not fail a statement that cannot see a row: it shows
nothing. A cross-user job (``forget``, ``consolidate`` and ``stats`` of every user)
run as the application role would therefore find nothing to do and exit 0, and
``reembed`` as anything but the table owner fails halfway. Each job asks here
first, and stops with :class:`~memory_pg.errors.RoleRequired` naming the role it
needs.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, TextClause

from memory_pg.errors import MemoryPgError, RoleRequired
from memory_pg.sql import statement

#: The group role whose members see every user's rows (migration 0003).
MAINTENANCE_ROLE = "memory_pg_maintenance"


@dataclass(frozen=True)
class RolePrivileges:
    """What the connected role may do with memory-pg's tables.

    Attributes:
        role: the connected role (``current_user``).
        superuser: a superuser (no policy applies to it).
        bypassrls: a ``BYPASSRLS`` role (no policy applies to it).
        maintenance: a member of ``memory_pg_maintenance`` (its policy shows every row).
        owner: the owner of the tables, or a member of the owning role (may alter them).
        owner_name: the role that owns the tables.
    """

    role: str
    superuser: bool
    bypassrls: bool
    maintenance: bool
    owner: bool
    owner_name: str

    @property
    def sees_every_user(self) -> bool:
        """True when row-level security shows this role every user's rows."""
        return self.superuser or self.bypassrls or self.maintenance


def privileges_statement() -> TextClause:
    """The one-row query behind :class:`RolePrivileges`."""
    return statement("role_privileges")


def _from_row(row: Mapping[Any, Any]) -> RolePrivileges:
    return RolePrivileges(
        role=str(row["role"]),
        superuser=bool(row["superuser"]),
        bypassrls=bool(row["bypassrls"]),
        maintenance=bool(row["maintenance"]),
        owner=bool(row["owner"]),
        owner_name=str(row["owner_name"]),
    )


def privileges(conn: Connection) -> RolePrivileges:
    """The privileges of the role ``conn`` is logged in as."""
    from memory_pg.plans.protocol import translate_errors

    with translate_errors():
        if conn.in_transaction():
            row = conn.execute(privileges_statement()).mappings().one()
        else:  # leave no transaction open: the jobs begin their own
            with conn.begin():
                row = conn.execute(privileges_statement()).mappings().one()
    return _from_row(row)


def check_every_user(found: RolePrivileges, job: str) -> None:
    """Raise :class:`RoleRequired` unless ``found`` sees every user's rows."""
    if not found.sees_every_user:
        raise RoleRequired(
            f"memory-pg {job} works across users and needs a role that sees every "
            f"user: a member of {MAINTENANCE_ROLE} (or a superuser or BYPASSRLS role); "
            f"connected as {found.role!r}, which row-level security limits to one user "
            "per transaction, so the job would find nothing. Set "
            "MEMORY_PG_MAINTENANCE_DATABASE_URL to a login role in "
            f"{MAINTENANCE_ROLE} (docs/roles.md)",
            job=job,
            needed=MAINTENANCE_ROLE,
        )


def require_every_user(conn: Connection, job: str) -> RolePrivileges:
    """Check, before a cross-user job starts, that its role sees every user."""
    found = privileges(conn)
    check_every_user(found, job)
    return found


def require_owner(conn: Connection, job: str) -> RolePrivileges:
    """Check that the role owns the tables and sees every row (``reembed``)."""
    found = privileges(conn)
    if not found.owner:
        raise RoleRequired(
            f"memory-pg {job} alters the memory table and needs its owner: the role that "
            f"ran the migrations ({found.owner_name!r}) or a superuser; connected as "
            f"{found.role!r}. Run it with the migration role's URL (--database-url)",
            job=job,
            needed=found.owner_name,
        )
    if not found.sees_every_user:
        raise RoleRequired(
            f"memory-pg {job} re-embeds every user's rows: the owner {found.role!r} is "
            f"subject to row-level security (FORCE) and sees no user's rows; grant it "
            f"{MAINTENANCE_ROLE} (GRANT {MAINTENANCE_ROLE} TO {found.role}) or run it as "
            "a superuser",
            job=job,
            needed=MAINTENANCE_ROLE,
        )
    return found


def plan_require_every_user(job: str) -> Generator[Any, Any, RolePrivileges]:
    """:func:`require_every_user` as a store plan (for the sync and async stores)."""
    rows = yield privileges_statement()
    if not rows:  # pragma: no cover - the query always returns the current role
        raise MemoryPgError("could not read the connected role's privileges")
    found = _from_row(rows[0])
    check_every_user(found, job)
    return found


__all__ = [
    "MAINTENANCE_ROLE",
    "RolePrivileges",
    "check_every_user",
    "plan_require_every_user",
    "privileges",
    "privileges_statement",
    "require_every_user",
    "require_owner",
]

"""Helpers of the security tests: login roles made for one test, extra databases, row counts."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

#: Every table that holds user data, checked after each refused call.
USER_TABLES = ("memory_pg_memories", "memory_pg_history", "memory_pg_dialogue_buffer")

_COUNT = {
    name: sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name)) for name in USER_TABLES
}


def row_counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Rows per user-data table, as the owner (a superuser: no row-level security)."""
    return {name: conn.execute(_COUNT[name]).fetchone()[0] for name in USER_TABLES}  # type: ignore[index]


def url_as(db_url: str, role: str, password: str) -> str:
    """The same database, logged in as another role."""
    return (
        make_url(db_url).set(username=role, password=password).render_as_string(hide_password=False)
    )


@contextlib.contextmanager
def login_role(raw: psycopg.Connection[Any], group: str | None) -> Iterator[tuple[str, str]]:
    """A uniquely named LOGIN role (member of ``group``), dropped afterwards.

    Roles are cluster-wide: the random suffix keeps concurrent sessions apart.
    """
    name = "memory_pg_test_" + secrets.token_hex(6)
    password = secrets.token_hex(12)
    stmt = sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
        sql.Identifier(name), sql.Literal(password)
    )
    if group is not None:
        stmt = stmt + sql.SQL(" IN ROLE {}").format(sql.Identifier(group))
    raw.execute(stmt)
    try:
        yield name, password
    finally:
        # Sessions of the role still open would keep it "in use" for a moment.
        raw.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,)
        )
        raw.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
        raw.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


@contextlib.contextmanager
def extra_database(raw: psycopg.Connection[Any], template: str) -> Iterator[str]:
    """A database cloned from ``template`` (migrated, empty), dropped afterwards."""
    name = "memory_pg_extra_" + secrets.token_hex(6)
    raw.execute(
        sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template)
        )
    )
    try:
        yield name
    finally:
        raw.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.contextmanager
def database_closed(pg_server: Any, dbname: str) -> Iterator[None]:
    """While open, the test's database refuses connections and its sessions are ended
    (what a store meets when PostgreSQL goes down); reopened on the way out."""
    name = sql.Identifier(dbname)
    admin = psycopg.connect(
        host=pg_server.host, port=pg_server.port, user=pg_server.user, dbname="postgres"
    )
    admin.autocommit = True
    try:
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(name))
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )
        yield
    finally:
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(name))
        admin.close()

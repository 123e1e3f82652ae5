"""A bad database URL, a database that cannot be reached or logged into, or one never
migrated: every command says so in one line with the fix, and exits 1 (issue 37).

Run as a user meets it: the installed ``memory-pg`` in a subprocess, stderr read whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from psycopg import sql

from tests.conftest import PgServer

ROOT = Path(__file__).resolve().parents[2]

#: Every command that opens the database, with what it needs besides.
COMMANDS = [
    ["migrate"],
    ["add", "a note", "--user", "alice"],
    ["search", "a note", "--user", "alice"],
    ["export", "--user", "alice"],
    ["import", "-", "--user", "alice"],
    ["stats"],
    ["healthcheck"],
    ["history", "--user", "alice"],
    ["forget"],
    ["consolidate", "--offline"],
    ["erase", "--user", "alice", "--yes"],
    ["related", "0190aaaa-0000-7000-8000-000000000000", "--user", "alice"],
    ["entity", "Denver", "--user", "alice"],
    ["entities", "--user", "alice"],
    ["graph", "--entity", "Denver", "--user", "alice"],
    ["token", "create", "--user", "alice"],
    ["token", "list"],
    ["token", "revoke", "some-id", "--user", "alice"],
]


def memory_pg(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    env.pop("DATABASE_URL", None)
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "MEMORY_PG_DATABASE_URL": url})
    return subprocess.run(
        [str(Path(sys.executable).parent / "memory-pg"), *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def assert_one_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 1 (README: a memory-pg error), one line on stderr naming ``words``, no traceback."""
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("memory-pg: error: "), proc.stderr
    for word in words:
        assert word in lines[0], proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_the_readme_placeholder_url_is_named_with_the_form_to_write(argv):
    proc = memory_pg(*argv, url="postgresql://...")
    assert_one_line(proc, "postgresql://...", "MEMORY_PG_DATABASE_URL", "postgresql://USER:")


@pytest.mark.parametrize("argv", [["stats"], ["migrate"], ["token", "list"]], ids=" ".join)
def test_a_string_that_is_no_url_is_named_as_such(argv):
    assert_one_line(memory_pg(*argv, url="notaurl"), "not a URL", "MEMORY_PG_DATABASE_URL")


@pytest.mark.parametrize("argv", [["stats"], ["migrate"], ["forget"]], ids=" ".join)
def test_a_server_that_is_not_there_says_to_check_host_and_port(argv):
    proc = memory_pg(*argv, url="postgresql://memory:secret@127.0.0.1:1/memory")
    assert_one_line(proc, "Connection refused", "host and port", "MEMORY_PG_DATABASE_URL")
    assert "secret" not in proc.stderr


def test_a_role_the_server_does_not_know_says_to_check_the_login(pg_server: PgServer, db_url):
    nobody = PgServer(pg_server.host, pg_server.port, "nobody_" + uuid.uuid4().hex[:8], None)
    proc = memory_pg("stats", url=nobody.url(db_url.rsplit("/", 1)[1].split("?")[0]))
    assert_one_line(proc, "does not exist", "user name and password")


def test_a_database_that_does_not_exist_says_to_create_it(pg_server: PgServer):
    proc = memory_pg("search", "x", "--user", "alice", url=pg_server.url("no_such_db_37"))
    assert_one_line(proc, '"no_such_db_37" does not exist', "createdb")


@pytest.fixture
def empty_db_url(raw, pg_server: PgServer):
    name = "unmigrated_" + uuid.uuid4().hex[:8]
    raw.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_server.url(name)
    raw.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.parametrize("argv", [["stats"], ["add", "a note", "--user", "alice"]], ids=" ".join)
def test_a_database_never_migrated_says_to_migrate(argv, empty_db_url):
    assert_one_line(memory_pg(*argv, url=empty_db_url), "memory-pg migrate")

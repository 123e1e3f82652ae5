"""Jobs check their database role before they start, and name the role they need.

Row-level security shows the application role nothing of other users, so a
cross-user job run as it used to find nothing and exit 0; ``reembed`` as the
maintenance role died with a raw ``InsufficientPrivilege`` traceback. The logins
here are non-superuser roles made for each test, as docs/roles.md tells a DBA.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from sqlalchemy import create_engine

from memory_pg.cli import main
from memory_pg.errors import RoleRequired
from memory_pg.jobs.consolidate import consolidate
from memory_pg.jobs.forget import forget
from memory_pg.store import MemoryStore
from tests.acceptance.test_cli import run as run_installed
from tests.integration._security_support import login_role, row_counts, url_as

FRAGMENTS = ["Buy milk tomorrow", "Pick up milk at the store tomorrow"]


def cli(url: str, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["--database-url", url, *argv], out=out)
    return code, out.getvalue()


@pytest.fixture
def stale(make_store, raw) -> dict[str, Any]:
    """Alice: a stale note forget removes and two fragments consolidate merges."""
    store = make_store(user_id="alice")
    note = store.add_memory("unused old note", importance=0.1)
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days' WHERE id = %s",
        (note,),
    )
    store.add_memories(FRAGMENTS)
    return {"note": note, "counts": row_counts(raw)}


@pytest.mark.parametrize(
    "argv",
    [
        ("forget", "--json"),
        ("forget", "--json", "--user", "alice"),
        ("consolidate", "--json", "--offline"),
        ("stats", "--json"),
    ],
    ids=["forget", "forget-one-user", "consolidate", "stats"],
)
def test_cross_user_jobs_as_the_app_role_fail_and_name_the_role(app_url, raw, stale, capsys, argv):
    code, out = cli(app_url, *argv)
    err = capsys.readouterr().err
    assert code == 1 and out == ""
    assert "memory_pg_maintenance" in err and "MEMORY_PG_MAINTENANCE_DATABASE_URL" in err
    assert "Traceback" not in err
    assert row_counts(raw) == stale["counts"]


def test_the_same_jobs_as_the_maintenance_role_do_their_work(maintenance_url, raw, stale):
    code, out = cli(maintenance_url, "stats", "--json")
    assert code == 0 and json.loads(out)["memories"] == 3
    code, out = cli(maintenance_url, "forget", "--json")
    assert code == 0 and json.loads(out)["deleted"] == 1
    code, out = cli(maintenance_url, "consolidate", "--json", "--offline")
    assert code == 0 and json.loads(out)["clusters"] == 1


def test_one_users_jobs_still_run_as_the_app_role(app_url, stale):
    code, out = cli(app_url, "consolidate", "--json", "--offline", "--user", "alice")
    assert code == 0 and json.loads(out)["clusters"] == 1
    code, out = cli(app_url, "stats", "--json", "--user", "alice")
    assert code == 0 and json.loads(out)["memories"] == 2  # the note and the summary


def test_the_library_jobs_refuse_the_app_role(app_url, embedder, raw, stale):
    engine = create_engine(app_url)
    try:
        with pytest.raises(RoleRequired, match="memory_pg_maintenance") as caught:
            forget(engine)
        assert caught.value.needed == "memory_pg_maintenance"
    finally:
        engine.dispose()
    with MemoryStore(app_url, embedder=embedder) as store:
        with pytest.raises(RoleRequired, match="consolidate"):
            consolidate(store)
        with pytest.raises(RoleRequired, match="stats"):
            store.stats()
    assert row_counts(raw) == stale["counts"]


def test_reembed_as_the_maintenance_role_names_the_owner_and_changes_nothing(
    maintenance_url, raw, stale
):
    settings_before = raw.execute("SELECT key, value FROM memory_pg_settings").fetchall()
    proc = run_installed(
        ["reembed", "--model", "sentence-transformers/all-MiniLM-L6-v2", "--json"],
        {"MEMORY_PG_DATABASE_URL": maintenance_url},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "owner" in proc.stderr and "postgres" in proc.stderr
    columns = raw.execute(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'memory_pg_memories'::regclass "
        "AND attname = 'embedding_next' AND NOT attisdropped"
    ).fetchone()[0]
    assert columns == 0
    assert raw.execute("SELECT key, value FROM memory_pg_settings").fetchall() == settings_before
    assert row_counts(raw) == stale["counts"]


def test_reembed_needs_an_owner_that_sees_every_user(raw, db_url):
    from psycopg import sql

    from memory_pg.roles import privileges, require_owner

    # A non-superuser owner is bound by row-level security (FORCE): it would re-embed
    # no row and swap in an empty column. Refused until it is in memory_pg_maintenance.
    with login_role(raw, None) as (name, password):
        raw.execute(
            sql.SQL("ALTER TABLE memory_pg_memories OWNER TO {}").format(sql.Identifier(name))
        )
        engine = create_engine(url_as(db_url, name, password))
        try:
            with engine.connect() as conn:
                assert privileges(conn).owner
                with pytest.raises(RoleRequired, match="GRANT memory_pg_maintenance"):
                    require_owner(conn, "reembed")
                raw.execute(
                    sql.SQL("GRANT memory_pg_maintenance TO {}").format(sql.Identifier(name))
                )
                assert require_owner(conn, "reembed").sees_every_user
        finally:
            engine.dispose()
            # Back to the test's owner: the role's objects are dropped with it.
            raw.execute("ALTER TABLE memory_pg_memories OWNER TO CURRENT_USER")

"""Tokens bound to tenants: printed once, stored as a hash, listed, revoked, expiring."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta

import pytest
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import create_async_engine

from memory_pg.cli import main
from memory_pg.errors import AuthenticationFailed, InvalidArgument, InvalidInput
from memory_pg.service.tokens import (
    create_token,
    hash_token,
    list_tokens,
    parse_duration,
    revoke_token,
    verify_token,
)


@pytest.fixture
def engine(db_url):
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


def _verify(db_url, token):
    async def go():
        engine = create_async_engine(db_url)
        try:
            return await verify_token(engine, token)
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_token_create_prints_the_token_once_and_stores_only_its_hash(db_url, raw):
    out = io.StringIO()
    code = main(
        [
            "--database-url",
            db_url,
            "token",
            "create",
            "--user",
            "alice",
            "--agent",
            "coder",
            "--read-only",
            "--expires",
            "90d",
            "--json",
        ],
        out=out,
    )
    assert code == 0
    created = json.loads(out.getvalue())
    token = created["token"]
    assert token.startswith("mpg_") and len(token) > 40
    stored = raw.execute(
        "SELECT token_hash, user_id, agent_id, read_only FROM memory_pg_tokens"
    ).fetchall()
    assert stored == [(hash_token(token), "alice", "coder", True)]
    # The token itself is nowhere in the table.
    dump = raw.execute("SELECT memory_pg_tokens::text FROM memory_pg_tokens").fetchone()[0]
    assert token not in dump
    info = _verify(db_url, token)
    assert (info.user_id, info.agent_id, info.read_only) == ("alice", "coder", True)

    listed = io.StringIO()
    assert (
        main(["--database-url", db_url, "token", "list", "--user", "alice", "--json"], out=listed)
        == 0
    )
    rows = json.loads(listed.getvalue())
    assert [r["id"] for r in rows] == [created["id"]]
    assert "token" not in rows[0] and "token_hash" not in rows[0]


def test_a_revoked_token_stops_working_and_others_stay(engine, db_url, caplog):
    first = create_token(engine, "alice")
    second = create_token(engine, "alice")
    assert revoke_token(engine, "alice", first.info.id)
    with caplog.at_level("INFO", logger="memory_pg.service.tokens"):
        with pytest.raises(AuthenticationFailed) as refused:
            _verify(db_url, first.token)
    # The caller hears what any bad token hears; the operator's log says why.
    assert "revoked" not in str(refused.value)
    assert f"token {first.info.id} refused: revoked" in caplog.text
    assert first.token not in caplog.text
    assert _verify(db_url, second.token).user_id == "alice"
    # Revoking under another user finds nothing: the token stays live.
    assert not revoke_token(engine, "bob", second.info.id)
    assert _verify(db_url, second.token).id == second.info.id


def test_expired_unknown_and_malformed_tokens_fail_alike(engine, db_url, raw, caplog):
    old = create_token(engine, "alice", expires_in=timedelta(hours=1))
    raw.execute("UPDATE memory_pg_tokens SET expires_at = now() - interval '1 second'")
    messages = set()
    with caplog.at_level("INFO", logger="memory_pg.service.tokens"):
        for bad in (old.token, None, "", "Bearer x", "mpg_" + "a" * 43, "mpg_" + "x" * 300):
            with pytest.raises(AuthenticationFailed) as refused:
                _verify(db_url, bad)
            messages.add(str(refused.value))
    assert len(messages) == 1 and "expired" not in messages.pop()
    assert f"token {old.info.id} refused: expired" in caplog.text
    assert "refused: unknown" in caplog.text and "refused: malformed" in caplog.text
    assert old.token not in caplog.text


def test_one_users_token_list_shows_only_that_user(engine):
    create_token(engine, "alice")
    create_token(engine, "bob", agent_id="planner")
    assert [t.user_id for t in list_tokens(engine, "bob")] == ["bob"]
    assert [t.agent_id for t in list_tokens(engine, "bob")] == ["planner"]


def test_no_admin_token_exists_unless_created(engine, raw):
    assert raw.execute("SELECT count(*) FROM memory_pg_tokens").fetchone()[0] == 0
    admin = create_token(engine, "ops", admin=True)
    assert admin.info.is_admin and admin.info.agent_id is None


def test_bad_arguments_are_refused_and_write_nothing(engine, raw):
    for call in (
        lambda: create_token(engine, ""),
        lambda: create_token(engine, "alice", agent_id=""),
        lambda: create_token(engine, "alice", expires_in=timedelta(seconds=-5)),
        lambda: create_token(engine, "ops", admin=True, agent_id="a"),
        lambda: create_token(engine, "alice", expires_in=timedelta(days=999_999_999)),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert raw.execute("SELECT count(*) FROM memory_pg_tokens").fetchone()[0] == 0
    for text in ("0d", "ten days", "5y", "-3d", "36501d", "999999999d", "99999999999w"):
        with pytest.raises(InvalidArgument):
            parse_duration(text)
    assert parse_duration("90d") == timedelta(days=90)


def test_the_app_role_sees_a_token_only_by_its_hash_or_its_tenant(engine, raw):
    import psycopg

    from tests.integration._security_support import login_role

    alice = create_token(engine, "alice")
    create_token(engine, "bob")
    info = raw.info
    with login_role(raw, "memory_pg_app") as (name, password):
        with psycopg.connect(
            host=info.host, port=info.port, dbname=info.dbname, user=name, password=password
        ) as conn:
            count = "SELECT count(*) FROM memory_pg_tokens"
            assert conn.execute(count).fetchone()[0] == 0
            conn.execute(
                "SELECT set_config('memory_pg.token_hash', %s, true)", (hash_token(alice.token),)
            )
            assert conn.execute("SELECT user_id FROM memory_pg_tokens").fetchall() == [("alice",)]
            conn.rollback()
            conn.execute("SELECT set_config('memory_pg.user_id', 'bob', true)")
            assert conn.execute("SELECT user_id FROM memory_pg_tokens").fetchall() == [("bob",)]
            # A tenant cannot plant a token for another user.
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    "INSERT INTO memory_pg_tokens (user_id, token_hash) VALUES ('alice', %s)",
                    ("0" * 64,),
                )


def test_a_token_is_verified_in_one_network_exchange_as_the_app_role(
    db_url, engine, raw, embedder, make_store
):
    """BEGIN, the hash revealed, the row read and COMMIT go out together: a request's
    token costs one wait for the server (it was four), and a token revoked after one
    request is refused at the next (nothing of the row is kept between requests)."""
    from memory_pg.async_store import AsyncMemoryStore
    from tests.integration._exchanges import traced
    from tests.integration._security_support import login_role, url_as

    make_store()  # records the model (the app role may not write settings)
    alice = create_token(engine, "alice", agent_id="coder")

    async def go(app_url):
        async with AsyncMemoryStore(app_url, embedder=embedder) as store:
            await store.engine.dispose()
            with traced(store.engine.sync_engine, dispose=False) as seen:
                infos = [await verify_token(store.engine, alice.token) for _ in range(3)]
                await store.engine.dispose()
            assert revoke_token(engine, "alice", alice.info.id)
            with pytest.raises(AuthenticationFailed):
                await verify_token(store.engine, alice.token)
            return infos, seen

    with login_role(raw, "memory_pg_app") as (name, password):
        infos, seen = asyncio.run(go(url_as(db_url, name, password)))
    assert {(i.user_id, i.agent_id) for i in infos} == {("alice", "coder")}
    assert len(seen.exchanges) == 3
    for exchange in seen.exchanges:
        # Each Parse names its statement ("" unnamed), then the text.
        kinds = [s.strip('" ').split()[0].rstrip('"') for s in exchange.statements()]
        assert kinds == ["BEGIN", "SELECT", "SELECT", "COMMIT"]
        assert [kind for kind, _ in exchange.sent].count("Sync") == 1

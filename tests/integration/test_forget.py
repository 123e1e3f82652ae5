"""Expiry: `forget` removes what the policy says, in batches, once, and says why."""

from __future__ import annotations

import json
import threading

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import create_engine

from memory_pg.config import ForgetPolicy
from memory_pg.jobs.forget import forget
from memory_pg.sql.forget import FORGET_LOCK


def _set(raw, memory_id, column, expression):
    """Age or mark one row directly (``expression`` is a constant SQL expression of the test)."""
    query = sql.SQL("UPDATE memory_pg_memories SET {} = {} WHERE id = %s").format(
        sql.Identifier(column), sql.SQL(expression)
    )
    raw.execute(query, (memory_id,))


def _ids(raw, user="alice"):
    rows = raw.execute("SELECT id::text FROM memory_pg_memories WHERE user_id = %s", (user,))
    return {r[0] for r in rows}


def _scenario(store, raw):
    """One memory per rule, plus ones each rule must keep."""
    ids = {}
    ids["stale"] = store.add_memory("old unused note about lunch", importance=0.1)
    ids["used"] = store.add_memory("old note someone searched for", importance=0.1)
    ids["important"] = store.add_memory("old but important fact", importance=0.9)
    ids["young"] = store.add_memory("fresh unimportant note", importance=0.1)
    ids["expired"] = store.add_memory("temporary password hint")
    ids["old_sup"] = store.add_memory("use MySQL", "key_decision", topic="db")
    ids["new_sup"] = store.add_memory("use PostgreSQL", "key_decision", topic="db")
    ids["recent_sup"] = store.add_memory("meet on Monday", "todo", topic="meeting")
    ids["recent_new"] = store.add_memory("meet on Tuesday", "todo", topic="meeting")
    for key in ("stale", "used", "important"):
        _set(raw, ids[key], "created_at", "now() - interval '100 days'")
    _set(raw, ids["used"], "access_count", "2")
    _set(raw, ids["expired"], "expires_at", "now() - interval '1 hour'")
    _set(raw, ids["old_sup"], "superseded_at", "now() - interval '200 days'")
    # Bob's own store on the same engine: a store bound to alice refuses bob.
    with type(store)(engine=store.engine, embedder=store.embedder, user_id="bob") as bob:
        ids["bob_stale"] = bob.add_memory("bob's unused old note", importance=0.1)
    _set(raw, ids["bob_stale"], "created_at", "now() - interval '100 days'")
    return ids


def test_forget_removes_exactly_what_the_policy_says(store, raw, db_url):
    ids = _scenario(store, raw)
    engine = create_engine(db_url)
    try:
        dry = forget(engine, dry_run=True)
        assert dry.dry_run and dry.deleted == 4
        assert _ids(raw) | _ids(raw, "bob") >= set(ids.values())

        report = forget(engine, batch_size=1)
        again = forget(engine)
    finally:
        engine.dispose()
    assert report.by_reason == {"expired": 1, "superseded": 1, "stale": 2}
    assert report.by_type == {"dialogue": 3, "key_decision": 1}
    assert report.batches >= 4 and not report.skipped and report.complete
    left = _ids(raw)
    for gone in ("stale", "expired", "old_sup"):
        assert ids[gone] not in left
    for kept in ("used", "important", "young", "new_sup", "recent_sup", "recent_new"):
        assert ids[kept] in left
    assert _ids(raw, "bob") == set()
    assert again.deleted == 0

    events = store.history(ids["stale"])
    assert events[-1]["event"] == "expired"
    assert events[-1]["detail"]["reason"] == "stale"
    assert events[-1]["detail"]["job_run"] == report.run_id
    assert "lunch" not in str(events)


def test_forget_for_one_user_and_per_type_ages(store, raw, db_url):
    ids = _scenario(store, raw)
    policy = ForgetPolicy(max_age_days_by_type={"dialogue": None})
    engine = create_engine(db_url)
    try:
        report = forget(engine, policy, user_id="bob")
        assert report.deleted == 0  # dialogue is kept forever by this policy
        report = forget(engine, ForgetPolicy(), user_id="bob")
    finally:
        engine.dispose()
    assert report.deleted == 1
    assert ids["stale"] in _ids(raw)


def test_second_concurrent_run_skips_and_says_so(store, raw, db_url, pg_server):
    _scenario(store, raw)
    holder = psycopg.connect(raw.info.dsn, autocommit=True)
    try:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (FORGET_LOCK,))
        engine = create_engine(db_url)
        try:
            report = forget(engine)
        finally:
            engine.dispose()
    finally:
        holder.close()
    assert report.skipped and report.deleted == 0
    assert "lock" in report.to_dict()["message"]


def test_concurrent_runs_delete_each_row_once(store, raw, db_url):
    _scenario(store, raw)
    engine = create_engine(db_url)
    reports = []
    try:
        threads = [
            threading.Thread(target=lambda: reports.append(forget(engine, batch_size=1)))
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        engine.dispose()
    assert sum(r.deleted for r in reports) == 4
    expired = raw.execute(
        "SELECT count(*) FROM memory_pg_history WHERE event = 'expired'"
    ).fetchone()[0]
    assert expired == 4


def test_max_runtime_stops_early_and_a_rerun_finishes(store, raw, db_url):
    _scenario(store, raw)
    engine = create_engine(db_url)
    try:
        first = forget(engine, max_runtime_s=0)
        rest = forget(engine)
    finally:
        engine.dispose()
    assert not first.complete and first.deleted == 0
    assert rest.complete and rest.deleted == 4


def _buffered(raw, user="alice"):
    rows = raw.execute(
        "SELECT content FROM memory_pg_dialogue_buffer WHERE user_id = %s ORDER BY id", (user,)
    )
    return [r[0] for r in rows]


def test_forget_removes_turns_compacted_past_their_retention_and_keeps_the_rest(store, raw, db_url):
    """A buffered turn is read until its compaction; after it, nothing reads it: it goes
    ``consumed_turn_retention_days`` later, a turn waiting for compaction never."""
    old = [store.append_turn("user", t, session_id="s") for t in ("I moved to Lyon", "Nice!")]
    store.commit_compaction(
        old, [{"text": "The user moved to Lyon", "memory_type": "user_profile"}]
    )
    recent = store.append_turn("user", "I start at Airbus on Monday", session_id="s")
    store.commit_compaction([recent], ["The user starts at Airbus on Monday"])
    waiting = store.append_turn("user", "My sister visits in May", session_id="s")
    with type(store)(engine=store.engine, embedder=store.embedder, user_id="bob") as bob:
        bobs = bob.append_turn("user", "bob's old turn", session_id="b")
        bob.commit_compaction([bobs], ["bob said something"])
    raw.execute(
        "UPDATE memory_pg_dialogue_buffer SET consumed_at = now() - interval '31 days' "
        "WHERE id = ANY(%s)",
        ([*old, bobs],),
    )
    engine = create_engine(db_url)
    try:
        dry = forget(engine, dry_run=True, user_id="alice")
        assert dry.turns_deleted == 2 and len(_buffered(raw)) == 4
        kept_forever = forget(engine, ForgetPolicy(consumed_turn_retention_days=None))
        assert kept_forever.turns_deleted == 0
        report = forget(engine, user_id="alice", batch_size=1)
    finally:
        engine.dispose()
    assert report.turns_deleted == 2
    assert _buffered(raw) == ["I start at Airbus on Monday", "My sister visits in May"]
    assert _buffered(raw, "bob") == ["bob's old turn"]  # another user's run
    # The memories they became stay; the turn still waiting is still pending.
    assert {m["text"] for m in store.list_memories()} >= {"The user moved to Lyon"}
    assert [t["id"] for t in store.pending_turns()] == [waiting]


def test_forget_keeps_compacted_turns_when_told_and_refuses_a_negative_retention(
    store, raw, db_url
):
    from memory_pg.errors import InvalidArgument
    from tests.acceptance.test_cli import run as run_installed

    turn = store.append_turn("user", "I moved to Lyon", session_id="s")
    store.commit_compaction([turn], ["The user moved to Lyon"])
    raw.execute("UPDATE memory_pg_dialogue_buffer SET consumed_at = now() - interval '2 days'")
    engine = create_engine(db_url)
    try:
        with pytest.raises(InvalidArgument, match="consumed_turn_retention_days"):
            forget(engine, ForgetPolicy(consumed_turn_retention_days=-1))
    finally:
        engine.dispose()
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    kept = run_installed(["forget", "--json", "--keep-consumed-turns"], env)
    assert json.loads(kept.stdout)["turns_deleted"] == 0
    assert _buffered(raw) == ["I moved to Lyon"]
    gone = run_installed(["forget", "--json"], {**env, "MEMORY_PG_FORGET_CONSUMED_TURN_DAYS": "1"})
    assert json.loads(gone.stdout)["turns_deleted"] == 1
    assert _buffered(raw) == []


def test_the_installed_forget_reports_a_lock_it_waited_too_long_for_without_a_traceback(
    store, raw, db_url
):
    """A DBA's lock_timeout cancels the job's delete behind a held table: exit 1 with
    the reason, as the store's own errors are reported."""
    from tests.acceptance.test_cli import run as run_installed

    stale = store.add_memory("old unused note about lunch", importance=0.1)
    _set(raw, stale, "created_at", "now() - interval '100 days'")
    database = raw.execute("SELECT current_database()").fetchone()[0]
    raw.execute(
        sql.SQL("ALTER DATABASE {} SET lock_timeout = '300ms'").format(sql.Identifier(database))
    )
    holder = psycopg.connect(db_url.replace("postgresql+psycopg://", "postgresql://", 1))
    try:
        holder.execute("LOCK TABLE memory_pg_memories IN ACCESS EXCLUSIVE MODE")
        proc = run_installed(["forget", "--json"], {"MEMORY_PG_DATABASE_URL": db_url}, check=False)
    finally:
        holder.rollback()
        holder.close()
    assert proc.returncode == 1, proc.stderr
    assert "lock_timeout" in proc.stderr and "Traceback" not in proc.stderr
    assert stale in _ids(raw)  # nothing was forgotten


@pytest.mark.parametrize(
    ("policy", "named"),
    [
        (ForgetPolicy(max_age_days=-1), "max_age_days"),
        (ForgetPolicy(superseded_retention_days=-1), "superseded_retention_days"),
        (ForgetPolicy(max_age_days_by_type={"todo": -5}), "max_age_days_by_type"),
        (ForgetPolicy(importance_below=1.5), "importance_below"),
    ],
)
def test_a_policy_that_would_forget_what_was_just_written_is_refused(
    store, raw, db_url, policy, named
):
    from memory_pg.errors import InvalidArgument

    fresh = store.add_memory("fresh unimportant note", importance=0.1)
    old = store.add_memory("use MySQL", "key_decision", topic="db")
    store.add_memory("use PostgreSQL", "key_decision", topic="db")  # replaces it just now
    engine = create_engine(db_url)
    try:
        with pytest.raises(InvalidArgument, match=named):
            forget(engine, policy)
    finally:
        engine.dispose()
    assert {fresh, old} <= _ids(raw)  # nothing was deleted

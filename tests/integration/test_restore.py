"""``restore``: a wrong replacement undone through the library (sync and async), for real."""

from __future__ import annotations

import uuid

import pytest

from memory_pg import errors
from memory_pg.async_store import AsyncMemoryStore
from memory_pg.jobs.consolidate import consolidate
from memory_pg.store import MemoryStore
from tests.conftest import count_rows
from tests.integration.test_consolidate import FRAGMENTS

# Two facts the offline rules read as one changed (similar enough, same subject):
# the replacement a user may call wrong ("I like both").
DARK = "The user prefers dark mode"
LIGHT = "The user prefers light mode"


def _ids(results):
    return [r["id"] for r in results]


def test_a_replaced_memory_is_current_and_found_again_beside_its_replacement(store):
    old = store.add_memory(DARK, "user_profile")
    new = store.add_memory(LIGHT, "user_profile")
    assert store.get(old)["superseded_by"] == new
    assert old not in _ids(store.search("dark mode", top_k=5))
    replaced = {(r["id"], r["relation"]) for r in store.related(old, depth=1)}
    assert (new, "superseded_by") in replaced

    report = store.restore(old)

    assert report == {"id": old, "restored": [old], "replaced_by": new, "replacement": "kept"}
    row = store.get(old)
    assert row["superseded_at"] is None and row["superseded_by"] is None
    assert set(_ids(store.list_memories())) == {old, new}
    assert _ids(store.search("dark mode", top_k=1)) == [old]
    assert new in _ids(store.search("light mode", top_k=2))
    # The link is gone: nothing says the newer one replaced it now.
    assert (new, "superseded_by") not in {
        (r["id"], r["relation"]) for r in store.related(old, depth=1)
    }


def test_history_tells_why_it_was_replaced_and_who_restored_it_when(make_store):
    store = make_store(user_id="alice")
    old = store.add_memory(DARK, "user_profile", agent_id="planner")
    new = store.add_memory(LIGHT, "user_profile", agent_id="planner")

    store.restore(old, agent_id="helper")

    events = store.history(old)
    assert [e["event"] for e in events] == ["added", "superseded", "restored"]
    superseded, restored = events[1], events[2]
    assert superseded["detail"]["reason"] == "similar" and superseded["detail"]["by"] == new
    assert restored["detail"] == {
        "reason": "restored",
        "agent": "helper",
        "replaced_by": new,
        "replacement": "kept",
    }
    assert restored["at"] >= superseded["at"]
    # The user's whole history lists it too, last.
    assert store.history(limit=1)[0]["event"] == "restored"


def test_the_next_writes_do_not_replace_it_again(store):
    old = store.add_memory("use MySQL", "key_decision", topic="database")
    new = store.add_memory("use PostgreSQL", "key_decision", topic="database")
    store.restore(old)

    store.add_memory("The release ships in May", "project_status")  # unrelated
    assert store.add_memory("use PostgreSQL", "key_decision", topic="database") == new  # a repeat
    store.add_memories(["The team meets on Tuesdays", "Alice reviews the pull requests"])

    assert set(_ids(store.list_memories(memory_types=["key_decision"]))) == {old, new}
    assert [e["event"] for e in store.history(old)][-1] == "restored"
    # A new decision on the topic replaces both, as it would any current memory.
    latest = store.add_memory("use SQLite", "key_decision", topic="database")
    assert _ids(store.list_memories(memory_types=["key_decision"])) == [latest]


def test_restoring_a_current_memory_is_refused_and_writes_nothing(store, raw):
    current = store.add_memory(DARK, "user_profile")
    before = count_rows(raw, "memory_pg_history")
    with pytest.raises(errors.NothingToRestore, match="is current: there is no replacement"):
        store.restore(current)
    assert isinstance(errors.NothingToRestore("x"), errors.MemoryConflict)
    assert count_rows(raw, "memory_pg_history") == before


def test_unknown_deleted_and_malformed_ids_are_refused(store, raw):
    old = store.add_memory(DARK, "user_profile")
    store.add_memory(LIGHT, "user_profile")
    assert store.delete_memory(old)
    before = count_rows(raw, "memory_pg_history")
    for gone in (old, str(uuid.uuid4())):
        with pytest.raises(errors.MemoryNotFound, match=r"no memory .* for this user"):
            store.restore(gone)
    with pytest.raises(errors.InvalidArgument, match="not a memory id"):
        store.restore("not-an-id")
    assert count_rows(raw, "memory_pg_history") == before


def test_another_users_memory_is_not_found_and_not_touched(make_store, raw):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    bobs_old = bob.add_memory(DARK, "user_profile")
    bob.add_memory(LIGHT, "user_profile")
    with pytest.raises(errors.MemoryNotFound) as caught:
        alice.restore(bobs_old)
    assert DARK not in str(caught.value)
    assert bob.get(bobs_old)["superseded_at"] is not None
    assert count_rows(raw, "memory_pg_history", "alice") == 0


def test_a_private_memory_is_restored_by_its_agent_only(store):
    old = store.add_memory(DARK, "user_profile", agent_id="a1", private=True)
    new = store.add_memory(LIGHT, "user_profile", agent_id="a1", private=True)
    assert store.get(old)["superseded_by"] == new
    with pytest.raises(errors.MemoryNotFound):
        store.restore(old, agent_id="a2")
    assert store.get(old)["superseded_at"] is not None
    assert store.restore(old, agent_id="a1")["restored"] == [old]
    assert set(_ids(store.list_memories(agent_id="a1"))) == {old, new}
    assert _ids(store.list_memories(agent_id="a2")) == []


def test_an_expired_memory_is_refused_with_what_to_do(store, raw):
    old = store.add_memory(DARK, "user_profile")
    store.add_memory(LIGHT, "user_profile")
    raw.execute(
        "UPDATE memory_pg_memories SET expires_at = now() - interval '1 day' WHERE id = %s",
        (old,),
    )
    with pytest.raises(errors.NothingToRestore, match=r"expired at .*add it again"):
        store.restore(old)
    assert store.get(old)["superseded_at"] is not None


def test_a_current_memory_with_the_same_text_is_a_conflict(store):
    old = store.add_memory("use MySQL", "dialogue", topic="database")
    store.add_memory("use PostgreSQL", "dialogue", topic="database")
    again = store.add_memory("use MySQL", "dialogue")  # said again: a current memory
    assert again != old
    with pytest.raises(errors.MemoryConflict, match=f"memory {again} is current and reads"):
        store.restore(old)
    assert store.get(old)["superseded_at"] is not None


def test_a_merge_into_a_summary_is_undone(store):
    ids = store.add_memories(FRAGMENTS)
    (summary,) = consolidate(store, user_id="alice").summaries
    assert _ids(store.list_memories()) == [summary]

    report = store.restore(ids[1])

    assert report["restored"] == [ids[1], ids[0], ids[2]]
    assert (report["replaced_by"], report["replacement"]) == (summary, "retired")
    assert set(_ids(store.list_memories())) == set(ids)
    assert summary not in _ids(store.search("buy milk", top_k=5))
    sibling = store.history(ids[0])[-1]
    assert (sibling["event"], sibling["detail"]["reason"]) == ("restored", "merge_undone")
    assert sibling["detail"]["with"] == ids[1]
    retired = store.history(summary)[-1]
    assert (retired["event"], retired["detail"]["reason"]) == ("superseded", "merge_undone")


def test_row_level_security_holds_for_the_app_role(app_url, embedder, make_store, raw):
    owner = make_store(user_id="bob")
    bobs_old = owner.add_memory(DARK, "user_profile")
    owner.add_memory(LIGHT, "user_profile")
    with MemoryStore(app_url, embedder=embedder) as app:
        old = app.add_memory(DARK, "user_profile", user_id="alice")
        app.add_memory(LIGHT, "user_profile", user_id="alice")
        assert app.restore(old, user_id="alice")["restored"] == [old]
        assert [e["event"] for e in app.history(old, user_id="alice")][-1] == "restored"
        with pytest.raises(errors.MemoryNotFound):
            app.restore(bobs_old, user_id="alice")
    assert owner.get(bobs_old)["superseded_at"] is not None


async def test_the_async_store_restores_the_same_way(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        old = await store.add_memory(DARK, "user_profile")
        new = await store.add_memory(LIGHT, "user_profile")
        report = await store.restore(old, agent_id="async-agent")
        assert report["replacement"] == "kept" and report["replaced_by"] == new
        assert _ids(await store.search("dark mode", top_k=1)) == [old]
        last = (await store.history(old))[-1]
        assert (last["event"], last["detail"]["agent"]) == ("restored", "async-agent")
        with pytest.raises(errors.NothingToRestore):
            await store.restore(old)


def test_two_restores_at_once_restore_it_once(make_store):
    from concurrent.futures import ThreadPoolExecutor

    stores = [make_store(user_id="alice") for _ in range(2)]
    old = stores[0].add_memory(DARK, "user_profile")
    stores[0].add_memory(LIGHT, "user_profile")

    def attempt(store):
        try:
            return store.restore(old)["restored"]
        except errors.NothingToRestore:
            return "refused"

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(map(str, pool.map(attempt, stores)))
    assert outcomes == sorted([str([old]), "refused"])
    assert [e["event"] for e in stores[0].history(old)].count("restored") == 1

"""memory-pg as LangGraph's BaseStore: the mapping a LangGraph or LangMem user relies on.

LangGraph's own store tests, adapted, are in ``tests/integration/langgraph_upstream``;
a real graph and LangMem's tools are in ``test_langgraph_agents.py``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from langgraph.store.base import Item, PutOp, SearchItem

from memory_pg import AsyncMemoryStore
from memory_pg.errors import (
    InvalidArgument,
    InvalidMetadata,
    MissingUserScope,
    TenantMismatch,
    TextTooLong,
)
from memory_pg.integrations.langgraph import (
    AsyncMemoryPgStore,
    InvalidNamespace,
    MemoryPgStore,
)
from tests.integration._security_support import row_counts

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


@pytest.fixture
def lg(make_store):
    """A LangGraph store over an unbound memory-pg store: users come from namespaces."""
    return MemoryPgStore(make_store())


def test_an_item_round_trips_with_its_namespace_key_and_exact_value(lg):
    value = {"content": "Alice's team uses PostgreSQL 16", "tags": ["db", 2], "n": 1.5, "ok": True}
    lg.put((*ALICE, "facts"), "db", value)
    item = lg.get((*ALICE, "facts"), "db")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == ((*ALICE, "facts"), "db", value)
    assert item.created_at == item.updated_at
    assert lg.get((*ALICE, "other"), "db") is None
    assert lg.get((*ALICE, "facts"), "nope") is None


def test_the_user_is_the_label_after_memories_and_their_rows_are_theirs(lg, make_store):
    lg.put(ALICE, "food", {"content": "Alice likes green tea"})
    lg.put(BOB, "food", {"content": "Bob likes black coffee"})
    alice = make_store(user_id="alice").list_memories()
    bob = make_store(user_id="bob").list_memories()
    assert [m["text"] for m in alice] == ["Alice likes green tea"]
    assert [m["text"] for m in bob] == ["Bob likes black coffee"]
    assert lg.get(BOB, "food").value == {"content": "Bob likes black coffee"}


def test_a_put_of_a_held_key_replaces_it_and_history_keeps_the_old_one(lg, make_store):
    lg.put(ALICE, "drink", {"content": "Alice drinks green tea every morning"})
    first = lg.get(ALICE, "drink")
    lg.put(ALICE, "drink", {"content": "Alice switched to black coffee"})
    now = lg.get(ALICE, "drink")
    assert now.value == {"content": "Alice switched to black coffee"}
    assert now.created_at == first.created_at and now.updated_at > first.updated_at
    mine = make_store(user_id="alice")
    current = mine.list_memories()
    assert [m["text"] for m in current] == ["Alice switched to black coffee"]
    everything = mine.list_memories(include_inactive=True)
    old = next(m for m in everything if m["text"].startswith("Alice drinks"))
    assert old["superseded_by"] == current[0]["id"]
    events = [e["event"] for e in mine.history(str(old["id"]))]
    assert events == ["added", "superseded"]
    # Found by search as it is now, never as it was.
    hits = lg.search(ALICE, query="what does Alice drink")
    assert [h.value["content"] for h in hits] == ["Alice switched to black coffee"]


def test_the_same_value_again_is_no_new_version(lg, make_store):
    lg.put(ALICE, "k", {"content": "Alice lives in Lisbon"})
    first = lg.get(ALICE, "k")
    lg.put(ALICE, "k", {"content": "Alice lives in Lisbon"})
    again = lg.get(ALICE, "k")
    assert again.updated_at > first.updated_at
    assert len(make_store(user_id="alice").list_memories(include_inactive=True)) == 1


def test_two_keys_may_hold_the_same_value(lg):
    lg.put(ALICE, "a", {"content": "same words"})
    lg.put(ALICE, "b", {"content": "same words"})
    assert {i.key for i in lg.search(ALICE)} == {"a", "b"}


def test_delete_and_put_none_erase_every_version(lg, raw):
    lg.put(ALICE, "k", {"content": "Alice's first note"})
    lg.put(ALICE, "k", {"content": "Alice's second note"})
    lg.delete(ALICE, "k")
    assert lg.get(ALICE, "k") is None
    lg.put(ALICE, "j", {"content": "Alice's other note"})
    lg.batch([PutOp(ALICE, "j", None)])
    assert lg.get(ALICE, "j") is None
    assert row_counts(raw)["memory_pg_memories"] == 0
    assert row_counts(raw)["memory_pg_history"] == 0


def test_search_ranks_with_a_query_and_lists_by_recency_without(lg):
    lg.put((*ALICE, "a"), "tea", {"content": "Alice drinks green tea", "kind": "drink", "n": 1})
    lg.put((*ALICE, "b"), "car", {"content": "Alice drives a red car", "kind": "car", "n": 5})
    lg.put((*ALICE, "a"), "cat", {"content": "Alice has a cat named Tom", "kind": "pet", "n": 3})
    ranked = lg.search(ALICE, query="which car does Alice drive")
    assert ranked[0].key == "car" and isinstance(ranked[0], SearchItem)
    assert ranked[0].score is not None and ranked[0].score > ranked[-1].score
    assert [i.key for i in lg.search(ALICE)] == ["cat", "car", "tea"]
    assert all(i.score is None for i in lg.search(ALICE))
    assert [i.key for i in lg.search((*ALICE, "a"))] == ["cat", "tea"]
    assert [i.key for i in lg.search(ALICE, filter={"kind": "pet"})] == ["cat"]
    assert [i.key for i in lg.search(ALICE, filter={"n": {"$gte": 3}})] == ["cat", "car"]
    assert [i.key for i in lg.search(ALICE, filter={"n": {"$ne": 3}})] == ["car", "tea"]
    assert [i.key for i in lg.search(ALICE, query="pets", filter={"n": {"$lt": 3}})] == ["tea"]
    assert [i.key for i in lg.search(ALICE, limit=1, offset=1)] == ["car"]


def test_list_namespaces_of_a_user(lg):
    for ns in [(*ALICE, "a", "x"), (*ALICE, "a", "y"), (*ALICE, "b")]:
        lg.put(ns, "k", {"content": "note"})
    lg.put((*BOB, "secret"), "k", {"content": "Bob's note"})
    assert lg.list_namespaces(prefix=ALICE) == [
        (*ALICE, "a", "x"),
        (*ALICE, "a", "y"),
        (*ALICE, "b"),
    ]
    assert lg.list_namespaces(prefix=ALICE, max_depth=3) == [(*ALICE, "a"), (*ALICE, "b")]
    assert lg.list_namespaces(prefix=(*ALICE, "*", "y")) == [(*ALICE, "a", "y")]
    assert lg.list_namespaces(prefix=ALICE, suffix=("x",)) == [(*ALICE, "a", "x")]
    assert lg.list_namespaces(prefix=ALICE, limit=1, offset=1) == [(*ALICE, "a", "y")]


def test_ttl_is_the_memory_expiry(lg, make_store, raw):
    lg.put(ALICE, "short", {"content": "Alice is in a meeting"}, ttl=1.0)
    lg.put(ALICE, "long", {"content": "Alice is a chemist"})
    expires = {m["text"]: m["expires_at"] for m in make_store(user_id="alice").list_memories()}
    assert expires["Alice is a chemist"] is None
    short = expires["Alice is in a meeting"]
    assert short is not None
    raw.execute("UPDATE memory_pg_memories SET expires_at = now() - interval '1 second'")
    assert lg.get(ALICE, "short") is None
    assert lg.search(ALICE) == []


def test_a_store_bound_to_one_user_never_reaches_another(make_store, raw):
    MemoryPgStore(make_store()).put(BOB, "secret", {"content": "Bob's vault code is 4711"})
    before = row_counts(raw)
    alice = MemoryPgStore(make_store(user_id="alice"))
    for call in (
        lambda: alice.get(BOB, "secret"),
        lambda: alice.search(BOB, query="vault code"),
        lambda: alice.search(BOB),
        lambda: alice.list_namespaces(prefix=BOB),
        lambda: alice.put(BOB, "planted", {"content": "planted"}),
        lambda: alice.delete(BOB, "secret"),
    ):
        with pytest.raises(TenantMismatch):
            call()
    assert row_counts(raw) == before
    # A namespace that names no user is the bound user's: Bob's rows are not in it.
    alice.put(("notes",), "n", {"content": "Alice's note"})
    assert [i.value for i in alice.search(())] == [{"content": "Alice's note"}]
    assert [i.key for i in alice.search((), query="vault code")] == ["n"]
    assert alice.list_namespaces() == [("notes",)]


def test_an_unbound_store_needs_a_user_in_the_namespace(lg, raw):
    with pytest.raises(MissingUserScope):
        lg.put(("docs",), "k", {"content": "x"})
    with pytest.raises(MissingUserScope):
        lg.search(("memories",))
    with pytest.raises(MissingUserScope):
        lg.list_namespaces()
    assert row_counts(raw)["memory_pg_memories"] == 0


def test_bad_input_is_a_typed_error_and_writes_nothing(lg, raw):
    good = PutOp(ALICE, "ok", {"content": "fine"})
    for bad, error in [
        (PutOp(ALICE, "k", {"content": float("nan")}), InvalidArgument),
        (PutOp(ALICE, "k", {"when": object()}), InvalidArgument),
        (PutOp(ALICE, "k", ["not", "a", "dict"]), InvalidArgument),
        (PutOp(ALICE, "", {"content": "x"}), InvalidArgument),
        (PutOp(ALICE, "k", {"content": "x"}, ttl=-1), InvalidArgument),
        (PutOp(("memories", "al.ice"), "k", {"content": "x"}), InvalidNamespace),
        (PutOp((), "k", {"content": "x"}), InvalidNamespace),
        (PutOp(ALICE, "k", {"content": "x" * 9000}), TextTooLong),
        (PutOp(ALICE, "k", {"content": "x", "blob": "y" * 70_000}), InvalidMetadata),
    ]:
        with pytest.raises(error):
            lg.batch([good, bad])
    with pytest.raises(InvalidArgument):
        lg.search(ALICE, filter={"n": {"$regex": "x"}})
    assert row_counts(raw)["memory_pg_memories"] == 0


def test_index_false_is_kept_but_not_ranked(lg):
    lg.put(ALICE, "hidden", {"content": "Alice's passport number"}, index=False)
    lg.put(ALICE, "shown", {"content": "Alice's favourite colour is blue"})
    assert [i.key for i in lg.search(ALICE, query="passport number")] == ["shown"]
    assert {i.key for i in lg.search(ALICE)} == {"hidden", "shown"}


async def test_the_async_twin_does_the_same(db_url, embedder, make_store):
    async with AsyncMemoryStore(db_url, embedder=embedder) as ms:
        store = AsyncMemoryPgStore(ms)
        await store.aput(ALICE, "k", {"content": "Alice plays the cello"})
        await store.aput(ALICE, "k", {"content": "Alice plays the violin"})
        item = await store.aget(ALICE, "k")
        assert item.value == {"content": "Alice plays the violin"}
        hits = await store.asearch(ALICE, query="instrument Alice plays")
        assert [h.key for h in hits] == ["k"]
        assert await store.alist_namespaces(prefix=ALICE) == [ALICE]
        bob = AsyncMemoryStore(db_url, user_id="bob", embedder=embedder)
        with pytest.raises(TenantMismatch):
            await AsyncMemoryPgStore(bob).aget(ALICE, "k")
        await bob.close()
    history = make_store(user_id="alice").history()
    assert [e["event"] for e in history] == ["added", "added", "superseded"]


def test_without_langgraph_the_import_says_which_extra_to_install():
    probe = (
        "import sys; sys.modules['langgraph'] = None\n"
        "try:\n    import memory_pg.integrations.langgraph\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.startswith("ConfigurationError"), done.stderr[-2000:]
    assert 'pip install "memory-pg[langgraph]"' in done.stdout


def test_row_level_security_holds_under_the_langgraph_store(app_url, embedder):
    """As the application role, a statement that asks for Bob's namespaces inside a
    transaction run as Alice gets nothing: the database, not only the store, says no."""
    from memory_pg.integrations._langgraph_rows import namespaces_statement, plan_namespaces
    from memory_pg.store import MemoryStore

    with MemoryStore(app_url, embedder=embedder) as memory:
        lg = MemoryPgStore(memory)
        lg.put((*BOB, "secret"), "k", {"content": "Bob's vault code is 4711"})
        lg.put(ALICE, "k", {"content": "Alice's note"})
        asked = plan_namespaces(namespaces_statement("bob", "user_profile", (), None))
        assert memory.run_plan(asked, "alice") == []
        assert lg.list_namespaces(prefix=BOB) == [(*BOB, "secret")]
        assert [i.value for i in lg.search(ALICE, query="vault code")] == [
            {"content": "Alice's note"}
        ]

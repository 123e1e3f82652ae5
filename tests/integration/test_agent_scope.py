"""Agent scope: shared memories reach all of a user's agents; a private note stays with one."""

from __future__ import annotations

import io

import pytest

from memory_pg.errors import InvalidArgument, MemoryNotFound
from tests.conftest import count_rows


def _texts(hits):
    return [h["text"] for h in hits]


def test_shared_memories_reach_every_agent_and_private_ones_only_their_own(store):
    store.add_memory("We chose PostgreSQL for the database", "key_decision", agent_id="planner")
    store.add_memory(
        "The database migration script is flaky on CI",
        "project_status",
        agent_id="coder",
        private=True,
    )
    coder = _texts(store.search("database", top_k=10, agent_id="coder"))
    planner = _texts(store.search("database", top_k=10, agent_id="planner"))
    nobody = _texts(store.search("database", top_k=10))
    assert sorted(coder) == [
        "The database migration script is flaky on CI",
        "We chose PostgreSQL for the database",
    ]
    assert planner == nobody == ["We chose PostgreSQL for the database"]
    listed = store.list_memories(agent_id="planner")
    assert [m["agent_id"] for m in listed] == ["planner"]
    assert [m["private"] for m in store.list_memories(agent_id="coder")] == [True, False]


def test_agent_ids_filters_by_writer(store):
    store.add_memory("Alice likes green tea", "user_profile", agent_id="planner")
    store.add_memory("Alice likes black coffee", "user_profile", agent_id="coder")
    store.add_memory("Alice likes water", "user_profile")
    assert _texts(store.search("likes", top_k=10, agent_ids=["coder"])) == [
        "Alice likes black coffee"
    ]
    by_both = store.search("likes", top_k=10, agent_ids=["coder", "planner"])
    assert {h["agent_id"] for h in by_both} == {"coder", "planner"}


def test_a_private_note_never_replaces_a_shared_decision_nor_the_reverse(store):
    shared = store.add_memory(
        "Use PostgreSQL as the database", "key_decision", topic="database", agent_id="planner"
    )
    note = store.add_memory(
        "Use SQLite as the database",
        "key_decision",
        topic="database",
        agent_id="coder",
        private=True,
    )
    assert store.get(shared)["superseded_at"] is None
    assert store.get(note)["superseded_at"] is None
    # A later shared decision replaces the shared one only; the private note stays.
    newer = store.add_memory(
        "Use CockroachDB as the database", "key_decision", topic="database", agent_id="reviewer"
    )
    assert store.get(shared)["superseded_by"] == newer
    assert store.get(note)["superseded_at"] is None
    assert sorted(_texts(store.search("database", agent_id="coder", top_k=10))) == [
        "Use CockroachDB as the database",
        "Use SQLite as the database",
    ]


def test_the_same_text_shared_and_private_are_two_memories(store):
    private = store.add_memory("Deploy on Fridays", "todo", agent_id="coder", private=True)
    shared = store.add_memory("Deploy on Fridays", "todo", agent_id="planner")
    assert private != shared
    # The shared one is what the planner (and any agent) sees.
    assert [h["id"] for h in store.search("deploy", agent_id="planner")] == [shared]
    # Repeats resolve within their scope.
    assert store.add_memory("Deploy on Fridays", "todo", agent_id="coder", private=True) == private
    assert store.add_memory("deploy on fridays", "todo", agent_id="other") == shared
    assert store.add_memories(
        [{"text": "Deploy on Fridays", "memory_type": "todo", "private": True}], agent_id="coder"
    ) == [private]


def test_another_agent_cannot_read_change_or_delete_a_private_note(store, raw):
    note = store.add_memory("my scratch idea", "dialogue", agent_id="coder", private=True)
    assert store.get(note, agent_id="planner") is None
    assert store.history(note, agent_id="planner") == []
    assert store.history(agent_id="planner") == []
    assert not store.delete_memory(note, agent_id="planner")
    with pytest.raises(MemoryNotFound):
        store.replace_memory(note, "planner's text", agent_id="planner")
    assert count_rows(raw, "memory_pg_memories") == 1
    assert [e["event"] for e in store.history(note, agent_id="coder")] == ["added"]
    # Its own agent replaces it: the replacement stays private to it.
    new = store.replace_memory(note, "my better scratch idea", agent_id="coder")
    assert store.get(new)["private"] and store.get(new)["agent_id"] == "coder"
    assert store.delete_memory(new, agent_id="coder")


def test_a_private_memory_needs_an_agent_and_bad_agents_are_refused(store, raw):
    for call in (
        lambda: store.add_memory("x", private=True),
        lambda: store.add_memory("x", agent_id=""),
        lambda: store.add_memory("x", agent_id=7),
        lambda: store.add_memory("x", agent_id="a", private="yes"),
        lambda: store.search("x", agent_ids=[]),
        lambda: store.search("x", agent_id="bad\nagent"),
    ):
        with pytest.raises(InvalidArgument):
            call()
    assert count_rows(raw, "memory_pg_memories") == 0


def test_export_and_import_keep_the_agent_scope(make_store):
    a = make_store(user_id="alice")
    a.add_memory("shared fact", "user_profile", agent_id="planner")
    a.add_memory("private fact", "user_profile", agent_id="coder", private=True)
    buf = io.StringIO()
    assert a.export_user_memory(buf) == 2
    b = make_store(user_id="bob")
    assert b.import_user_memory(io.StringIO(buf.getvalue())) == 2
    rows = {m["text"]: (m["agent_id"], m["private"]) for m in b.list_memories(agent_id="coder")}
    assert rows == {"shared fact": ("planner", False), "private fact": ("coder", True)}


def test_the_wrapper_recalls_as_its_agent(store):
    from memory_pg.wrapper import MemoryWrapper

    class Echo:
        def __init__(self) -> None:
            self.prompts: list[str] = []

        def chat(self, text: str) -> str:
            self.prompts.append(text)
            return "ok"

    store.add_memory("coder's private hint: run make test", "todo", agent_id="coder", private=True)
    coder, planner = Echo(), Echo()
    MemoryWrapper(coder, store, agent_id="coder", compact_threshold=100).chat(
        "how do I run the tests?"
    )
    MemoryWrapper(planner, store, agent_id="planner", compact_threshold=100).chat(
        "how do I run the tests?"
    )
    assert "run make test" in coder.prompts[-1]
    assert "run make test" not in planner.prompts[-1]

"""A walk over the relations passes only through memories the asking agent may see.

Another agent's private memory must not connect two shared memories, take the places
of shared neighbours, or name an entity this agent is shown (security review: the
link a private memory made revealed what it said).
"""

from __future__ import annotations

import pytest

#: Two shared memories of the planner, and the coder's private note naming both.
JOINED = "Caroline Hughes joined the team"
SHIPS = "Project Zeus ships in May"
SECRET = "Caroline Hughes is secretly leading the Project Zeus acquisition talks."


@pytest.fixture
def bridged(store):
    """Shared A and B of the planner, and a private note of the coder naming both."""
    a = store.add_memory(JOINED, agent_id="planner")
    b = store.add_memory(SHIPS, agent_id="planner")
    secret = store.add_memory(SECRET, private=True, agent_id="coder")
    return a, b, secret


def _ids(rows):
    return {r["id"] for r in rows}


def test_related_does_not_walk_through_another_agents_private_memory(store, bridged):
    a, b, secret = bridged
    for agent in ("planner", None):
        assert _ids(store.related(a, depth=2, agent_id=agent)) == set()
    # The coder may see its own note: for it, the note links A to B.
    mine = {r["id"]: r for r in store.related(a, depth=2, agent_id="coder")}
    assert set(mine) == {secret, b}
    assert (mine[b]["hops"], mine[b]["entity"]) == (2, "Project Zeus")


def test_related_walks_through_the_agents_own_private_memory(store):
    a = store.add_memory(JOINED, agent_id="planner")
    b = store.add_memory(SHIPS, agent_id="planner")
    own = store.add_memory(SECRET, private=True, agent_id="planner")
    assert _ids(store.related(a, depth=2, agent_id="planner")) == {own, b}
    assert _ids(store.related(a, depth=2, agent_id="coder")) == set()


@pytest.mark.parametrize("expand", [1, 2])
def test_search_expand_does_not_walk_through_another_agents_private_memory(store, bridged, expand):
    a, b, secret = bridged
    gate = {"min_similarity": 0.6, "min_lexical": 1.0}
    query = "Who joined the team? Caroline Hughes"
    direct = store.search(query, top_k=10, agent_id="planner", **gate)
    assert _ids(direct) == {a}  # B is reached by a walk only
    for agent in ("planner", None):
        found = store.search(query, top_k=10, expand=expand, agent_id=agent, **gate)
        assert secret not in _ids(found)
        assert b not in _ids(found)
    # The coder's own note is a path for the coder.
    found = {r["id"]: r for r in store.search(query, top_k=10, expand=2, agent_id="coder", **gate)}
    assert found[b]["via"] is not None


def test_private_memories_of_another_agent_take_no_shared_neighbours_place(store):
    # More private notes naming Caroline Hughes than a walk takes from one entity,
    # newer and nearer the query than the shared memory: the shared one is still found.
    a = store.add_memory(JOINED, agent_id="planner")
    hiking = store.add_memory("Caroline Hughes likes hiking in the Alps", agent_id="planner")
    store.add_memories(
        [
            {"text": f"Caroline Hughes joined the team, private note {i}", "private": True}
            for i in range(10)
        ],
        agent_id="coder",
    )
    assert hiking in _ids(store.related(a, depth=1, agent_id="planner"))
    gate = {"min_similarity": 0.95, "min_lexical": 1.0}
    found = store.search(JOINED, top_k=10, expand=1, agent_id="planner", **gate)
    assert [r["id"] for r in found if r["via"] is None] == [a]
    assert hiking in _ids(found)


def test_private_mentions_of_another_agent_do_not_make_an_entity_too_common(store):
    from memory_pg.sql.relations import MAX_ENTITY_MENTIONS

    a = store.add_memory("Project Zeus kicked off today", agent_id="planner")
    b = store.add_memory("Project Zeus needs a designer", agent_id="planner")
    store.add_memories(
        [
            {"text": f"Project Zeus private note {i}", "private": True}
            for i in range(MAX_ENTITY_MENTIONS)
        ],
        agent_id="coder",
    )
    assert _ids(store.related(a, depth=1, agent_id="planner")) == {b}


def test_an_entity_named_only_in_another_agents_private_memory_is_not_shown(store, bridged):
    a, _, _ = bridged
    # Named by the coder's private note only: not "Caroline Hughes" for the planner
    # (A names her), but the acquisition talks are the coder's alone.
    store.add_memory("Globex Corporation made an offer", private=True, agent_id="coder")
    for agent in ("planner", None):
        names = {e["name"] for e in store.entities(agent_id=agent)}
        assert "Globex Corporation" not in names
        assert store.entity("Globex Corporation", agent_id=agent) is None
        assert store.entity("Globex Corporation", agent_id=agent, include_inactive=True) is None
        assert store.graph("Globex Corporation", agent_id=agent) is None
        caroline = store.entity("Caroline Hughes", agent_id=agent)
        assert caroline is not None and _ids(caroline["memories"]) == {a}
        graph = store.graph("Caroline Hughes", agent_id=agent)
        assert graph is not None and graph["related_entities"] == []  # Zeus only in the note
        counts = {e["name"]: e["mentions"] for e in store.entities(agent_id=agent)}
        assert counts["Caroline Hughes"] == 1 and counts["Project Zeus"] == 1
    assert "Globex Corporation" in {e["name"] for e in store.entities(agent_id="coder")}
    graph = store.graph("Caroline Hughes", agent_id="coder")
    assert graph is not None and [e["name"] for e in graph["related_entities"]] == ["Project Zeus"]


def test_a_name_only_another_agents_private_memory_uses_does_not_hide_an_alias(store):
    # "Wang Wei" is an alias of the planner's 小王 (an LLM gave it), and the key of an
    # entity only the coder's private note names: the planner finds its 小王.
    [ours] = store.add_memories(
        [
            {
                "text": "小王 joined the design team",
                "entities": [{"name": "小王", "kind": "person", "aliases": ["Wang Wei"]}],
            }
        ],
        agent_id="planner",
    )
    store.add_memory("Wang Wei is interviewing elsewhere", private=True, agent_id="coder")
    found = store.entity("Wang Wei", agent_id="planner")
    assert found is not None and found["name"] == "小王"
    assert _ids(found["memories"]) == {ours}
    theirs = store.entity("Wang Wei", agent_id="coder")
    assert theirs is not None and theirs["name"] == "Wang Wei"


def _cli(db_url, *argv):
    import io

    from memory_pg.cli import main

    out = io.StringIO()
    code = main(["--database-url", db_url, *argv], out=out)
    return code, out.getvalue()


def test_the_command_line_shows_no_private_memory_nor_its_links(store, bridged, db_url):
    a, b, secret = bridged
    code, out = _cli(db_url, "related", a, "--depth", "3", "--user", "alice")
    assert code == 0 and b not in out and secret not in out
    code, out = _cli(db_url, "graph", "--user", "alice", "--entity", "Caroline Hughes")
    assert code == 0 and "Project Zeus" not in out and "secretly" not in out
    code, out = _cli(db_url, "entities", "--user", "alice")
    assert code == 0 and "Caroline Hughes" in out and "acquisition" not in out


def _alias_note(store):
    """The planner's shared memory naming 王伟, and the coder's private note where an
    LLM gave 王伟 the alias 小王."""
    shared = store.add_memory("王伟 joined the design team", agent_id="planner")
    [private] = store.add_memories(
        [
            {
                "text": "王伟 is interviewing elsewhere",
                "private": True,
                "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
            }
        ],
        agent_id="coder",
    )
    return shared, private


def test_an_alias_only_another_agents_private_memory_gave_is_not_shown(store, db_url):
    shared, private = _alias_note(store)
    for agent in ("planner", None):
        found = store.entity("王伟", agent_id=agent)
        assert found is not None and found["aliases"] == []
        assert _ids(found["memories"]) == {shared}
        # Nor does the alias find the entity: that would say what the note said.
        assert store.entity("小王", agent_id=agent) is None
        assert store.entity("小王", agent_id=agent, include_inactive=True) is None
        listed = {e["name"]: e["aliases"] for e in store.entities(agent_id=agent)}
        assert listed["王伟"] == []
        assert store.graph("王伟", agent_id=agent)["aliases"] == []
    mine = store.entity("小王", agent_id="coder")
    assert mine is not None and mine["name"] == "王伟" and mine["aliases"] == ["小王"]
    assert _ids(mine["memories"]) == {shared, private}
    code, out = _cli(db_url, "entity", "王伟", "--user", "alice")
    assert code == 0 and "小王" not in out


def test_an_alias_a_shared_memory_gave_is_shown_to_every_agent(store):
    [shared] = store.add_memories(
        [
            {
                "text": "王伟 joined the design team",
                "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
            }
        ],
        agent_id="planner",
    )
    for agent in ("planner", "coder", None):
        found = store.entity("小王", agent_id=agent)
        assert found is not None and found["aliases"] == ["小王"]
        assert _ids(found["memories"]) == {shared}


def test_an_export_carries_each_memorys_own_aliases(store, make_store):
    import io
    import json

    shared, private = _alias_note(store)
    out = io.StringIO()
    store.export_user_memory(out)
    rows = {r["id"]: r for r in map(json.loads, out.getvalue().splitlines())}
    assert rows[shared]["entities"] == [{"name": "王伟", "kind": "person", "aliases": []}]
    assert rows[private]["entities"] == [{"name": "王伟", "kind": "person", "aliases": ["小王"]}]
    other = make_store(user_id="bob")
    assert other.import_user_memory(io.StringIO(out.getvalue())) == 2
    assert other.entity("小王", agent_id="planner") is None
    assert other.entity("小王", agent_id="coder")["aliases"] == ["小王"]


def test_an_entity_is_not_shown_by_the_name_another_agents_private_memory_gave(store):
    """The entity's recorded name is its first writer's: here the coder's private note
    ("ZEUS TEAM LEAD"), kept after the note was deleted (a review found the planner
    shown it by entity(), entities(), graph() and related())."""
    [note] = store.add_memories(
        [
            {
                "text": "Planning to leave; told only the Zeus team lead",
                "private": True,
                "entities": [{"name": "ZEUS TEAM LEAD", "kind": "person"}],
            }
        ],
        agent_id="coder",
    )
    approved, signed = store.add_memories(
        [
            {
                "text": "The Zeus team lead approved the plan",
                "entities": [{"name": "Zeus team lead", "kind": "person"}],
            },
            {
                "text": "The Zeus team lead signed the budget",
                "entities": [{"name": "Zeus team lead", "kind": "person"}],
            },
        ],
        agent_id="planner",
    )
    # The coder's own note spells it so: it is shown that name.
    assert store.entity("zeus team lead", agent_id="coder")["name"] == "ZEUS TEAM LEAD"
    for deleted in (False, True):
        if deleted:
            assert store.delete_memory(note, agent_id="coder")
        about = store.entity("zeus team lead", agent_id="planner")
        assert (about["name"], about["aliases"]) == ("Zeus team lead", [])
        listed = {e["name"] for e in store.entities(agent_id="planner")}
        assert "Zeus team lead" in listed and "ZEUS TEAM LEAD" not in listed
        assert "ZEUS TEAM LEAD" not in str(store.graph("Zeus team lead", agent_id="planner"))
        beside = store.related(approved, depth=1, agent_id="planner")
        assert signed in {r["id"] for r in beside}
        assert "ZEUS TEAM LEAD" not in {r["entity"] for r in beside}

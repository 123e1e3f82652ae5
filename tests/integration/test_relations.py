"""Relations between memories: entities and links written with the memories, walked on read."""

from __future__ import annotations

import uuid

import pytest

from memory_pg.errors import InvalidArgument, MemoryNotFound
from tests.conftest import count_rows


def turns(session: str, texts: list[str]) -> list[dict]:
    return [
        {"text": t, "memory_type": "dialogue", "metadata": {"session_id": session}} for t in texts
    ]


def test_a_write_records_entities_mentions_and_the_turns_of_a_conversation(store, raw):
    ids = store.add_memories(
        turns(
            "s1",
            [
                "Caroline: I went to the LGBTQ support group in Boston yesterday.",
                "Melanie: That sounds powerful, Caroline!",
                "小王说他下个月去北京出差",
            ],
        ),
        user_id="alice",
    )
    names = {e["name"]: e for e in store.entities(user_id="alice")}
    assert {"Caroline", "Boston", "小王", "北京"} <= set(names)
    assert names["Caroline"]["mentions"] == 2
    about = store.entity("caroline", user_id="alice")
    assert about is not None and about["name"] == "Caroline"
    assert {m["id"] for m in about["memories"]} == {ids[0], ids[1]}
    zh = store.entity("小王", user_id="alice")
    assert zh is not None and [m["id"] for m in zh["memories"]] == [ids[2]]
    # The second turn follows the first, the third the second.
    near = {r["id"]: r for r in store.related(ids[1], depth=1, user_id="alice")}
    assert near[ids[0]]["relation"] in ("follows", "mentions")
    assert near[ids[2]]["relation"] == "followed_by"
    # A later write of the same conversation follows its newest stored turn.
    [later] = store.add_memories(turns("s1", ["Caroline: and I met Jo there"]), user_id="alice")
    first_hop = {r["id"]: r["relation"] for r in store.related(later, depth=1, user_id="alice")}
    assert first_hop[ids[2]] == "follows"
    assert count_rows(raw, "memory_pg_memory_links", "alice") == 3


def test_related_walks_further_with_depth_and_refuses_bad_input(store):
    ids = store.add_memories(
        turns("s", ["first note", "second note", "third note"]), user_id="alice"
    )
    assert [r["id"] for r in store.related(ids[0], depth=1, user_id="alice")] == [ids[1]]
    two = store.related(ids[0], depth=2, user_id="alice")
    assert [(r["id"], r["hops"]) for r in two] == [(ids[1], 1), (ids[2], 2)]
    with pytest.raises(InvalidArgument):
        store.related(ids[0], depth=9, user_id="alice")
    with pytest.raises(MemoryNotFound):
        store.related(str(uuid.uuid4()), user_id="alice")

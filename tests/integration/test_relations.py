"""Relations between memories: entities and links written with the memories, walked on read."""

from __future__ import annotations

import uuid

import pytest

from memory_pg.errors import InvalidArgument, InvalidInput, MemoryNotFound
from tests.conftest import count_rows


def turns(session: str, texts: list[str], context: str | None = None) -> list[dict]:
    return [
        {
            "text": t,
            "memory_type": "dialogue",
            "metadata": {"session_id": session},
            "context": context,
        }
        for t in texts
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


def _links(raw, user="alice"):
    rows = raw.execute(
        "SELECT src::text, relation, dst::text FROM memory_pg_memory_links WHERE user_id = %s",
        (user,),
    )
    return {tuple(r) for r in rows}


def _entity_names(raw, user="alice"):
    rows = raw.execute("SELECT name FROM memory_pg_entities WHERE user_id = %s", (user,))
    return {r[0] for r in rows}


def test_a_replacement_links_the_new_memory_to_the_one_it_supersedes(store, raw):
    old = store.add_memory("We use MySQL for the Atlas project", "key_decision", topic="db")
    new = store.add_memory("We use PostgreSQL for the Atlas project", "key_decision", topic="db")
    assert (new, "supersedes", old) in _links(raw)
    replaced = store.replace_memory(new, "We use CockroachDB for the Atlas project")
    assert (replaced, "supersedes", new) in _links(raw)
    assert {r["relation"] for r in store.related(replaced, depth=1)} >= {"supersedes"}


def test_delete_and_erase_take_the_links_and_the_entities_nobody_names_any_more(store, raw):
    _, b, _ = store.add_memories(
        turns("s", ["Caroline met Jo in Boston", "Jo moved to Denver", "Caroline paints"])
    )
    assert {"Caroline", "Jo", "Boston", "Denver"} <= _entity_names(raw)
    assert store.delete_memory(b)
    assert "Denver" not in _entity_names(raw)  # named by the deleted memory only
    assert {"Caroline", "Jo", "Boston"} <= _entity_names(raw)
    assert all(b not in (src, dst) for src, _, dst in _links(raw))
    assert store.clear_user_memory() == 2
    assert _entity_names(raw) == set() and _links(raw) == set()
    assert count_rows(raw, "memory_pg_memory_entities", "alice") == 0


def test_forget_removes_the_links_and_orphan_entities_of_what_it_forgets(store, raw, db_url):
    from sqlalchemy import create_engine

    from memory_pg.jobs.forget import forget

    stale, kept = store.add_memories(
        turns("s", ["Old note: lunch with Priya at Chez Panisse", "Priya likes tea"])
    )
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days', "
        "importance = 0.1 WHERE id = %s",
        (stale,),
    )
    engine = create_engine(db_url)
    try:
        assert forget(engine).deleted == 1
    finally:
        engine.dispose()
    assert "Chez Panisse" not in _entity_names(raw)
    assert "Priya" in _entity_names(raw)
    assert _links(raw) == set()
    about = store.entity("Priya")
    assert about is not None and [m["id"] for m in about["memories"]] == [kept]


def test_a_consolidation_summary_links_to_its_fragments_both_ways(store, raw):
    from memory_pg.jobs.consolidate import consolidate

    ids = store.add_memories(
        ["Buy milk tomorrow", "Pick up milk at the store tomorrow", "Buy milk and eggs tomorrow"]
    )
    (summary,) = consolidate(store, user_id="alice").summaries
    links = _links(raw)
    for fragment in ids:
        assert (fragment, "merged_into", summary) in links
        assert (summary, "derived_from", fragment) in links
    assert {r["id"] for r in store.related(summary, depth=1)} == set(ids)


def test_export_then_import_derives_the_same_relations(store, make_store, raw):
    import io

    ids = store.add_memories(turns("s", ["小王在北京工作", "小王下个月去上海", "他喜欢喝茶"]))
    old = store.add_memory("We use MySQL", "key_decision", topic="db")
    new = store.add_memory("We use PostgreSQL", "key_decision", topic="db")
    buffer = io.StringIO()
    store.export_user_memory(buffer, include_inactive=True)
    carol = make_store(user_id="carol")
    buffer.seek(0)
    assert carol.import_user_memory(buffer) == 5
    mine, theirs = _links(raw, "alice"), _links(raw, "carol")
    assert (new, "supersedes", old) in theirs
    assert {x for x in theirs if x[1] != "follows"} == {x for x in mine if x[1] != "follows"}
    # Turns written together share their times: the chain is rebuilt over the same
    # turns, in the export's order (see docs/relations.md, "Lifecycle").
    follows = [x for x in theirs if x[1] == "follows"]
    assert len(follows) == 2 and {x[0] for x in follows} | {x[2] for x in follows} == set(ids)
    about = carol.entity("小王")
    assert about is not None and {m["id"] for m in about["memories"]} == set(ids[:2])


def test_search_expand_adds_what_hangs_from_the_best_hit_below_it(store):
    # No context (""): only the link leads from the first turn to the second.
    hit, linked, _ = store.add_memories(
        turns(
            "trip",
            [
                "Caroline adopted a puppy called Biscuit last spring",
                "Biscuit chewed through the garden hose on Sunday",
                "The quarterly tax forms are due in April",
            ],
            context="",
        )
    )
    gate = {"min_similarity": 0.45, "min_lexical": 1.0}
    direct = store.search("Which pet did Caroline adopt?", top_k=5, **gate)
    assert [r["id"] for r in direct] == [hit]
    assert "via" not in direct[0]
    wider = store.search("Which pet did Caroline adopt?", top_k=5, expand=1, **gate)
    by_id = {r["id"]: r for r in wider}
    assert wider[0]["id"] == hit and wider[0]["via"] is None
    assert by_id[linked]["via"] == hit
    assert by_id[linked]["via_relation"] in ("followed_by", "mentions")
    assert by_id[linked]["score"] < by_id[hit]["score"]
    with pytest.raises(InvalidArgument):
        store.search("pet", expand=7)


def test_one_users_entities_and_links_never_reach_another(make_store, raw):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    a = alice.add_memories(turns("s", ["Caroline's secret: the vault code is 1234", "ok"]))
    b = bob.add_memories(turns("s", ["Caroline joined our band", "she plays bass"]))
    assert [e["name"] for e in bob.entities()] == ["Caroline"]
    about = bob.entity("Caroline")
    assert about is not None and [m["id"] for m in about["memories"]] == [b[0]]
    with pytest.raises(MemoryNotFound):
        bob.related(a[0])
    found = bob.search("Caroline vault code", top_k=10, expand=2)
    assert {r["id"] for r in found} <= set(b)
    assert all((r.get("via") or b[0]) in b for r in found)
    # One entity row per user, each keyed by that user.
    rows = raw.execute("SELECT user_id FROM memory_pg_entities WHERE key = 'caroline'")
    assert sorted(r[0] for r in rows) == ["alice", "bob"]


def test_row_level_security_keeps_the_relation_tables_per_tenant(make_store, raw, db_url):
    import psycopg
    import psycopg.sql

    from tests.integration._security_support import login_role, url_as

    make_store(user_id="bob").add_memories(turns("s", ["Caroline joined our band", "she sings"]))
    with login_role(raw, "memory_pg_app") as (name, password):
        url = url_as(db_url, name, password).replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url) as conn:
            for table in (
                "memory_pg_entities",
                "memory_pg_memory_entities",
                "memory_pg_memory_links",
            ):
                query = psycopg.sql.SQL("SELECT count(*) FROM {}").format(
                    psycopg.sql.Identifier(table)
                )
                assert conn.execute(query).fetchone() == (0,)
            conn.execute("SELECT set_config('memory_pg.user_id', 'alice', true)")
            assert conn.execute("SELECT count(*) FROM memory_pg_entities").fetchone() == (0,)
            conn.execute("SELECT set_config('memory_pg.user_id', 'bob', true)")
            assert conn.execute("SELECT count(*) FROM memory_pg_entities").fetchone() == (1,)
            assert conn.execute("SELECT count(*) FROM memory_pg_memory_links").fetchone() == (1,)


def test_bad_names_and_kinds_are_typed_errors(store):
    with pytest.raises(InvalidInput):
        store.entity("")
    with pytest.raises(InvalidArgument):
        store.entities(kinds=["planet"])
    assert store.entity("nobody we know") is None
    assert store.graph("nobody we know") is None


def _cli(db_url, *argv):
    import io

    from memory_pg.cli import main

    out = io.StringIO()
    code = main(["--database-url", db_url, *argv], out=out)
    return code, out.getvalue()


def test_the_command_line_shows_entities_links_and_the_graph(store, db_url):
    ids = store.add_memories(
        turns("s", ["小王在北京找到了新工作", "小王和张伟下周去上海", "天气不错"])
    )
    code, out = _cli(db_url, "entities", "--user", "alice")
    assert code == 0 and "小王 [person]" in out and "    2  小王" in out
    code, out = _cli(db_url, "entity", "小王", "--user", "alice")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("小王 [person]") and len(lines) == 3
    code, out = _cli(db_url, "related", ids[2], "--depth", "1", "--user", "alice")
    assert code == 0 and "followed_by" not in out and "follows" in out and ids[1] in out
    code, out = _cli(db_url, "graph", "--user", "alice", "--entity", "小王")
    assert code == 0 and out.startswith("小王 (person)") and "张伟 (person) ×1" in out
    code, out = _cli(db_url, "graph", "--user", "alice", "--entity", "小王", "--format", "dot")
    assert code == 0 and out.startswith("graph memory_pg {") and '"张伟"' in out
    assert out.count("[shape=box") == 2
    code, out = _cli(db_url, "search", "小王 工作", "--user", "alice", "--expand", "1")
    assert code == 0 and "1. " in out
    code, _ = _cli(db_url, "graph", "--user", "alice", "--entity", "nobody")
    assert code == 1

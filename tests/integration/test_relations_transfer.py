"""Export and import carry the entities each memory names, the LLM's aliases included."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from memory_pg.errors import InvalidImport
from tests.conftest import count_rows

# What an LLM found: an alias the text does not write, and an entity no rule finds.
LISTED = [
    {"name": "小王", "kind": "person", "aliases": ["王伟"]},
    {"name": "Project Atlas", "kind": "project", "aliases": []},
]


def _export(store: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    store.export_user_memory(out, include_inactive=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _import(store: Any, records: list[dict[str, Any]]) -> int:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return int(store.import_user_memory(io.StringIO(text)))


def _entities(store: Any) -> list[tuple[str, str, list[str], int]]:
    return sorted(
        (e["name"], e["kind"], sorted(e["aliases"]), e["mentions"]) for e in store.entities()
    )


def _written(store: Any) -> list[str]:
    return store.add_memories(
        [
            {"text": "小王下个月去北京出差，顺便看看数据库迁移", "entities": LISTED},
            {"text": "Caroline moved to Boston"},
            {"text": "nothing named here at all"},
        ]
    )


def test_an_import_restores_the_entities_an_llm_found_with_their_aliases(store, make_store):
    ids = _written(store)
    records = _export(store)
    by_id = {r["id"]: r for r in records}
    named = {e["name"]: e for e in by_id[ids[0]]["entities"]}
    assert set(named) == {"小王", "Project Atlas", "北京"}
    assert named["小王"] == {"name": "小王", "kind": "person", "aliases": ["王伟"]}
    assert "entities" not in by_id[ids[2]]  # names nothing: no field

    carol = make_store(user_id="carol")
    assert _import(carol, records) == 3
    assert _entities(carol) == _entities(store)
    # The alias only the LLM knew still finds 小王's memory, and so does its project.
    by_alias = carol.entity("王伟")
    assert by_alias is not None and by_alias["name"] == "小王"
    assert [m["id"] for m in by_alias["memories"]] == [ids[0]]
    atlas = carol.entity("project atlas")
    assert atlas is not None and atlas["kind"] == "project"


def test_an_export_without_entities_still_imports_and_the_rules_find_them(store, make_store):
    _written(store)
    records = [{k: v for k, v in r.items() if k != "entities"} for r in _export(store)]
    carol = make_store(user_id="carol")
    assert _import(carol, records) == 3
    names = {e[0] for e in _entities(carol)}
    assert {"小王", "北京", "Caroline", "Boston"} <= names
    assert "Project Atlas" not in names and carol.entity("王伟") is None


DAMAGED: list[tuple[str, object]] = [
    ("not-a-list", {"name": "小王", "kind": "person"}),
    ("a-string", "小王"),
    ("no-name", [{"kind": "person"}]),
    ("empty-name", [{"name": "  ", "kind": "person"}]),
    ("bad-kind", [{"name": "小王", "kind": "alien"}]),
    ("aliases-not-a-list", [{"name": "小王", "kind": "person", "aliases": "王伟"}]),
    ("alias-not-text", [{"name": "小王", "kind": "person", "aliases": [5]}]),
    ("nul", [{"name": "小\x00王", "kind": "person"}]),
    ("separator", [{"name": "小王", "kind": "person", "aliases": ["王\x1f伟"]}]),
    ("surrogate", [{"name": "小王", "kind": "person", "aliases": ["\ud800"]}]),
    ("too-long", [{"name": "王" * 81, "kind": "person"}]),
    ("key-too-long", [{"name": "\ufdfa" * 12, "kind": "person"}]),
]


@pytest.mark.parametrize(("case", "entities"), DAMAGED, ids=[c for c, _ in DAMAGED])
def test_damaged_entities_are_an_invalid_import_naming_the_line(
    store, make_store, raw, case, entities
):
    _written(store)
    records = _export(store)
    records[1] = {**records[1], "entities": entities}
    carol = make_store(user_id="carol")
    with pytest.raises(InvalidImport, match="line 2"):
        _import(carol, records)
    for table in ("memory_pg_memories", "memory_pg_entities", "memory_pg_memory_entities"):
        assert count_rows(raw, table, "carol") == 0


def test_links_that_the_export_carries_come_back(store, make_store, raw):
    """``supersedes`` (from ``superseded_by``) and ``follows`` (from the session) come
    back; so do a consolidation's ``merged_into`` / ``derived_from`` (the summary's
    ``consolidated_from`` says it was one)."""
    from memory_pg.jobs.consolidate import consolidate

    old = store.add_memory("We use MySQL", "key_decision", topic="db")
    new = store.add_memory("We use PostgreSQL", "key_decision", topic="db")
    fragments = store.add_memories(
        ["Buy milk tomorrow", "Pick up milk at the store tomorrow", "Buy milk and eggs tomorrow"]
    )
    (summary,) = consolidate(store, user_id="alice").summaries
    carol = make_store(user_id="carol")
    _import(carol, _export(store))
    rows = raw.execute(
        "SELECT src::text, relation, dst::text FROM memory_pg_memory_links WHERE user_id = 'carol'"
    )
    links = {tuple(r) for r in rows}
    assert (new, "supersedes", old) in links
    assert {(summary, "derived_from", f) for f in fragments} <= links
    assert {(f, "merged_into", summary) for f in fragments} <= links
    assert not any(src == summary and rel == "supersedes" for src, rel, _ in links)
    assert {r["id"] for r in carol.related(summary, depth=1)} == set(fragments)

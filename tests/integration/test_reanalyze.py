"""``memory-pg reanalyze``: rows written before the ``attributes`` column (or read by
an older text layer) get the attributes their text states, and then rank by them."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from memory_pg.jobs.reanalyze import REANALYZE_LOCK, reanalyze
from memory_pg.sql.locks import session_unlock, try_session_lock

NOTES = [
    "我堂哥在工地当电工，干了快二十年了",
    "我堂哥特别喜欢钓鱼，周末基本都泡在水库边",
    "我堂哥今年四十岁了",
    "舅舅住在苏州工业园区那边",
]


def _as_before_0016(raw: psycopg.Connection[Any]) -> None:
    """The rows as a database migrated before 0016 holds them: no attributes read."""
    raw.execute("UPDATE memory_pg_memories SET attributes = NULL")


def _attributes(raw: psycopg.Connection[Any]) -> dict[str, list[str] | None]:
    return dict(raw.execute("SELECT text, attributes FROM memory_pg_memories").fetchall())


def test_old_rows_get_their_attributes_and_rank_by_them(
    store: Any, raw: psycopg.Connection[Any]
) -> None:
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in NOTES])
    before = _attributes(raw)
    _as_before_0016(raw)
    question = "我堂哥多大年纪了？"
    old = store.search(question, top_k=1, track_access=False)[0]
    assert not old.get("attribute_match")  # nothing known of what it states

    dry = reanalyze(store.engine, dry_run=True)
    assert (dry.read, dry.updated) == (4, 4) and dry.dry_run
    assert set(_attributes(raw).values()) == {None}  # a dry run writes nothing

    report = reanalyze(store.engine, batch_size=3)
    assert (report.read, report.updated, report.batches) == (4, 4, 2)
    assert report.by_attribute.get("age") == 1
    assert _attributes(raw) == before  # what the write itself reads
    hit = store.search(question, top_k=1, track_access=False)[0]
    assert hit["text"] == "我堂哥今年四十岁了" and hit["attribute_match"] == 1.0
    # Run again: nothing is left without attributes.
    assert reanalyze(store.engine).read == 0


def test_all_rewrites_only_the_rows_whose_reading_changed(
    store: Any, raw: psycopg.Connection[Any]
) -> None:
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in NOTES])
    raw.execute("UPDATE memory_pg_memories SET attributes = '{count}' WHERE text = %s", (NOTES[2],))
    report = reanalyze(store.engine, every=True)
    assert (report.read, report.updated) == (4, 1) and report.every
    assert _attributes(raw)[NOTES[2]] == ["age"]


def test_one_user_only(make_store: Any, raw: psycopg.Connection[Any]) -> None:
    store = make_store()
    store.add_memory(NOTES[2], "user_profile", user_id="ann")
    store.add_memory(NOTES[2], "user_profile", user_id="ben")
    _as_before_0016(raw)
    assert reanalyze(store.engine, user_id="ann").updated == 1
    rows = dict(raw.execute("SELECT user_id, attributes FROM memory_pg_memories").fetchall())
    assert rows == {"ann": ["age"], "ben": None}


def test_a_second_run_at_the_same_time_exits_at_once(store: Any, db_url: str) -> None:
    from sqlalchemy import create_engine

    holder = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with holder.connect() as conn:
            assert conn.execute(try_session_lock(REANALYZE_LOCK)).scalar()
            report = reanalyze(store.engine)
            conn.execute(session_unlock(REANALYZE_LOCK))
            conn.commit()
        assert report.skipped and report.read == 0
    finally:
        holder.dispose()


def test_bad_batch_size_is_refused(store: Any) -> None:
    from memory_pg.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="batch_size"):
        reanalyze(store.engine, batch_size=0)


@pytest.mark.slow
def test_the_command_prints_its_report(
    db_url: str, raw: psycopg.Connection[Any], embedder: Any
) -> None:
    from memory_pg import MemoryStore
    from tests.acceptance.test_cli import run

    with MemoryStore(db_url, user_id="cat", embedder=embedder) as store:
        store.add_memory(NOTES[2], "user_profile")
    _as_before_0016(raw)
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    dry = json.loads(run(["reanalyze", "--dry-run", "--json"], env).stdout)
    assert (dry["updated"], dry["dry_run"]) == (1, True)
    done = json.loads(run(["reanalyze", "--json"], env).stdout)
    assert done["updated"] == 1 and done["by_attribute"] == {"age": 1}
    assert _attributes(raw) == {NOTES[2]: ["age"]}


def test_chinese_rows_indexed_without_sounds_get_them(
    store: Any, raw: psycopg.Connection[Any]
) -> None:
    classes = ["女儿每周三下午学游泳", "女儿每周六下午学钢琴", "女儿每周日上午学围棋"]
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in classes])
    store.add_memory("Standup moved to 9:30", "project_status")
    # As a row written before sounds were indexed holds it: its words, no pinyin.
    raw.execute("UPDATE memory_pg_memories SET search_tsv = ts_filter(search_tsv, '{a,c,d}')")
    question = "女儿那个 gang qin 课是星期几"
    assert "钢琴" not in store.search(question, top_k=1, track_access=False)[0]["text"]

    # Their attributes were read when written: only --all reads them again.
    assert reanalyze(store.engine).read == 0
    dry = reanalyze(store.engine, every=True, dry_run=True)
    assert (dry.read, dry.updated) == (4, 3)  # the English row's words are the same
    report = reanalyze(store.engine, every=True)
    assert (report.read, report.updated, report.by_attribute) == (4, 3, {})
    assert "钢琴" in store.search(question, top_k=1, track_access=False)[0]["text"]
    assert reanalyze(store.engine, every=True).updated == 0

"""Entities are found before a write's transaction opens, so no lock waits for jieba."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from memory_pg import entities


@pytest.fixture
def extractions(store: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """For each text the rules read: whether a transaction of the store was open then."""
    open_now = [False]
    seen: list[bool] = []
    real = entities.extract

    def extract(text: str) -> list[entities.Entity]:
        seen.append(open_now[0])
        return real(text)

    def opened(*_: Any) -> None:
        open_now[0] = True

    def closed(*_: Any) -> None:
        open_now[0] = False

    monkeypatch.setattr(entities, "extract", extract)
    handlers = {"begin": opened, "commit": closed, "rollback": closed}
    for name, fn in handlers.items():
        event.listen(store.engine, name, fn)
    yield seen
    for name, fn in handlers.items():
        event.remove(store.engine, name, fn)


def test_a_write_finds_its_entities_before_its_transaction_opens(store, extractions):
    ids = store.add_memories(["小王下个月去北京出差", "Caroline moved to Boston"])
    store.replace_memory(ids[0], "小王下个月去上海出差")
    store.commit_compaction([store.append_turn("user", "老张在深圳")], ["老张在深圳工作"])
    assert len(extractions) == 4  # every new memory's text was read ...
    assert not any(extractions)  # ... and none inside a transaction
    assert store.entity("上海") is not None and store.entity("深圳") is not None


def test_an_import_and_a_consolidation_find_them_before_theirs(store, make_store, extractions):
    from memory_pg.jobs.consolidate import consolidate

    line = json.dumps({"text": "小王在杭州工作", "embedding_model": store.embedder.model_name})
    assert store.import_user_memory(io.StringIO(line + "\n")) == 1
    store.add_memories(
        ["Buy milk tomorrow", "Pick up milk at the store tomorrow", "Buy milk and eggs tomorrow"]
    )
    (summary,) = consolidate(store, user_id="alice").summaries
    assert len(extractions) == 5
    assert not any(extractions)
    about = store.entity("杭州")
    assert about is not None and about["memories"]
    assert store.get(summary) is not None

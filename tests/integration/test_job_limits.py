"""Jobs that one user's data cannot stop, and writers that notice a reembed.

* an LLM summary over the text limit (8000 characters) is cut at a sentence end,
  instead of stopping ``consolidate`` for every user after it, on every run;
* a user whose summary fails all the same is reported, and the others go on;
* a store opened before a same-dimension ``reembed`` refuses to write vectors of
  the model the database no longer records.
"""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import pytest
from sqlalchemy import create_engine

from memory_pg import AsyncMemoryStore
from memory_pg.cli import main
from memory_pg.errors import EmbeddingModelMismatch
from memory_pg.jobs.reembed import reembed
from tests.fake_openai import FakeOpenAI, fake_openai_fixture, reply  # noqa: F401
from tests.integration._security_support import row_counts

FRAGMENTS = ["Buy milk tomorrow", "Pick up milk at the store tomorrow"]
SENTENCE = "Buy milk at the store tomorrow morning. "


@pytest.fixture
def two_users(make_store):
    """aaron (consolidated first) and zoe, each with the same two fragments."""
    store = make_store()
    for user in ("aaron", "zoe"):
        store.add_memories(FRAGMENTS, user_id=user)
    return store


def consolidate_with_llm(monkeypatch, db_url, fake: FakeOpenAI) -> tuple[int, dict]:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MEMORY_PG_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_PG_LLM_BASE_URL", fake.base_url)
    monkeypatch.setenv("MEMORY_PG_LLM_MODEL", "fake-model")
    out = io.StringIO()
    code = main(["--database-url", db_url, "consolidate", "--json"], out=out)
    return code, json.loads(out.getvalue())


def current_texts(store, user):
    return [m["text"] for m in store.list_memories(user_id=user)]


def test_an_oversized_summary_is_capped_and_every_user_consolidated(
    monkeypatch, db_url, two_users, fake_openai
):
    fake_openai.script(reply(SENTENCE * 250), reply("Buy milk at the store tomorrow"))
    code, report = consolidate_with_llm(monkeypatch, db_url, fake_openai)

    assert code == 0, report
    assert (report["clusters"], report["capped"], report["failed"]) == (2, 1, [])
    (aaron,) = current_texts(two_users, "aaron")
    assert len(SENTENCE * 250) > 8000 >= len(aaron)
    assert aaron.endswith("morning.") and len(aaron) > 7900
    assert current_texts(two_users, "zoe") == ["Buy milk at the store tomorrow"]


def test_one_users_failure_is_reported_and_the_others_go_on(
    monkeypatch, db_url, two_users, fake_openai
):
    # A summary PostgreSQL cannot store (a NUL byte) fails aaron's cluster.
    fake_openai.script(reply("Buy milk\x00 tomorrow"), reply("Buy milk at the store tomorrow"))
    code, report = consolidate_with_llm(monkeypatch, db_url, fake_openai)

    assert code == 1  # cron hears of it
    assert [(f["user_id"], f["error"]) for f in report["failed"]] == [("aaron", "InvalidText")]
    assert report["clusters"] == 1
    assert sorted(current_texts(two_users, "aaron")) == sorted(FRAGMENTS)  # untouched
    assert current_texts(two_users, "zoe") == ["Buy milk at the store tomorrow"]


class Renamed:
    """The bundled model under another name: a second model of the same dimension."""

    model_name = "test/minilm-renamed-384"

    def __init__(self, base):
        self.base = base
        self.dimension = base.dimension

    def embed_documents(self, texts):
        return np.asarray(self.base.embed_documents(texts))

    def embed_query(self, text):
        return np.asarray(self.base.embed_query(text))


def test_a_store_opened_before_a_same_dimension_reembed_refuses_to_write(
    make_store, db_url, embedder, raw
):
    old = make_store(user_id="alice")
    old.add_memory("The cat is called Miso")
    old.append_turn("user", "We moved to Berlin")
    (turn,) = old.pending_turns()

    async def open_async():
        store = AsyncMemoryStore(db_url, user_id="alice", embedder=embedder)
        await store.open()
        return store

    old_async = asyncio.run(open_async())
    engine = create_engine(db_url)
    try:
        reembed(engine, Renamed(embedder))
    finally:
        engine.dispose()
    before = row_counts(raw)

    with pytest.raises(EmbeddingModelMismatch, match="test/minilm-renamed-384"):
        old.add_memory("The dog is called Rex")
    with pytest.raises(EmbeddingModelMismatch):
        old.commit_compaction([turn["id"]], ["The user moved to Berlin"])
    line = json.dumps({"text": "imported fact", "memory_type": "dialogue"})
    with pytest.raises(EmbeddingModelMismatch):
        old.import_user_memory(io.StringIO(line))

    async def write_async():
        try:
            with pytest.raises(EmbeddingModelMismatch):
                await old_async.add_memory("The dog is called Rex")
        finally:
            await old_async.close()

    asyncio.run(write_async())
    assert row_counts(raw) == before
    assert len(old.pending_turns()) == 1  # the turn is still waiting

    reopened = make_store(user_id="alice", embedder=Renamed(embedder))
    assert reopened.add_memory("The dog is called Rex")
    models = raw.execute("SELECT DISTINCT embedding_model FROM memory_pg_memories").fetchall()
    assert models == [("test/minilm-renamed-384",)]

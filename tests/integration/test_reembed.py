"""Re-embedding: every row gets a new vector, the model switches, an interrupted run resumes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import create_engine

from memory_pg.errors import EmbeddingDimensionMismatch, EmbeddingError, InvalidArgument
from memory_pg.jobs.reembed import reembed


class Projected:
    """MiniLM projected to 128 dimensions by a fixed random matrix: a real second model."""

    model_name = "test/minilm-projected-128"
    dimension = 128

    def __init__(self, base):
        self.base = base
        rng = np.random.default_rng(7)
        self.matrix = rng.standard_normal((base.dimension, self.dimension)).astype("float32")

    def _project(self, vectors):
        out = np.asarray(vectors, dtype="float32") @ self.matrix
        return out / np.linalg.norm(out, axis=-1, keepdims=True)

    def embed_documents(self, texts):
        return self._project(self.base.embed_documents(texts))

    def embed_query(self, text):
        return self._project(self.base.embed_query(text))


TEXTS = [
    "The user prefers green tea in the morning",
    "Deploy the billing service on Friday",
    "The cat is called Miso",
    "Use PostgreSQL with pgvector for memories",
    "Book the flight to Berlin",
]


def _column_dim(raw):
    return raw.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memory_pg_memories'::regclass "
        "AND attname = 'embedding' AND NOT attisdropped"
    ).fetchone()[0]


def _index_ok(raw):
    row = raw.execute(
        "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
        "WHERE c.relname = 'memory_pg_memories_embedding_hnsw_idx'"
    ).fetchone()
    return bool(row and row[0])


def test_reembed_to_the_same_model_makes_every_vector_again(store, raw, db_url, embedder):
    ids = store.add_memories(TEXTS)
    # Make every vector the same stale one: only a real re-embed finds the cat again.
    raw.execute(
        "UPDATE memory_pg_memories SET embedding = "
        "(SELECT embedding FROM memory_pg_memories ORDER BY text LIMIT 1)"
    )
    seen = []
    engine = create_engine(db_url)
    try:
        report = reembed(engine, embedder, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    finally:
        engine.dispose()
    assert report.reembedded == 5 and report.batches == 3
    assert report.model == report.previous_model == embedder.model_name
    assert seen[-1] == (5, 5)
    distinct = raw.execute("SELECT count(DISTINCT embedding::text) FROM memory_pg_memories")
    assert distinct.fetchone()[0] == 5
    assert _index_ok(raw) and _column_dim(raw) == embedder.dimension
    assert store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]


def test_reembed_embeds_a_memory_with_its_context(store, raw, db_url, embedder):
    memory_id = store.add_memory("Yes, last Friday", context="Did you go to the pottery class?")
    stale = str([1.0] + [0.0] * (embedder.dimension - 1))
    raw.execute("UPDATE memory_pg_memories SET embedding = %s::vector", [stale])
    engine = create_engine(db_url)
    try:
        reembed(engine, embedder, batch_size=10)
    finally:
        engine.dispose()
    expected = embedder.embed_documents(["Did you go to the pottery class?\nYes, last Friday"])[0]
    stored = raw.execute(
        "SELECT embedding::text FROM memory_pg_memories WHERE id = %s", [memory_id]
    ).fetchone()[0]
    got = np.array(json.loads(stored), dtype=np.float32)
    assert float(np.dot(got, expected)) > 0.999


def test_reembed_to_another_dimension_resumes_and_switches(
    store, make_store, raw, db_url, embedder
):
    ids = store.add_memories(TEXTS)
    target = Projected(embedder)

    class Interrupt(Exception):
        pass

    def stop_after_first_batch(done, total):
        if done >= 2:
            raise Interrupt

    engine = create_engine(db_url)
    try:
        with pytest.raises(Interrupt):
            reembed(engine, target, batch_size=2, progress=stop_after_first_batch)
        # Interrupted: the old model still serves searches.
        assert store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]
        report = reembed(engine, target, batch_size=2)
    finally:
        engine.dispose()
    assert report.resumed and report.reembedded == 3
    assert (report.previous_dimension, report.dimension) == (384, 128)
    assert _column_dim(raw) == 128 and _index_ok(raw)
    models = {r[0] for r in raw.execute("SELECT DISTINCT embedding_model FROM memory_pg_memories")}
    assert models == {target.model_name}
    cols = {
        r[0]
        for r in raw.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'memory_pg_memories'"
        )
    }
    assert "embedding_next" not in cols

    new_store = make_store(user_id="alice", embedder=target)
    assert new_store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]
    new_store.add_memory("Water the plants on Sunday")
    with pytest.raises(EmbeddingDimensionMismatch):
        make_store(user_id="alice", embedder=embedder)


class ZeroForCats:
    """The real model, except that it gives a zero vector for any text about a cat."""

    def __init__(self, base):
        self.base = base
        self.model_name = base.model_name
        self.dimension = base.dimension

    def embed_documents(self, texts):
        out = np.array(self.base.embed_documents(texts))
        out[["cat" in t for t in texts]] = 0.0
        return out

    def embed_query(self, text):
        return self.base.embed_query(text)


def test_reembed_refuses_a_vector_with_no_direction_and_keeps_the_old_one(store, db_url, embedder):
    store.add_memories(TEXTS)
    engine = create_engine(db_url)
    try:
        with pytest.raises(EmbeddingError, match="no direction"):
            reembed(engine, ZeroForCats(embedder), batch_size=10)
    finally:
        engine.dispose()
    hit = store.search("what is the cat called", top_k=1, min_similarity=0.3)[0]
    assert hit["text"] == "The cat is called Miso"


def _graph_options(raw):
    row = raw.execute(
        "SELECT reloptions FROM pg_class WHERE relname = 'memory_pg_memories_embedding_hnsw_idx'"
    ).fetchone()
    return sorted(row[0]) if row else None


def test_reembed_rebuilds_the_graph_with_the_settings_a_dba_gave_it(store, raw, db_url, embedder):
    ids = store.add_memories(TEXTS)
    # A DBA raised ef_construction for users holding many memories (benchmarks/README.md).
    raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx SET (ef_construction = 200)")
    engine = create_engine(db_url)
    try:
        reembed(engine, embedder, batch_size=10)
        assert _graph_options(raw) == ["ef_construction=200", "m=16"]
        assert _index_ok(raw)
        # A run that stopped after the swap, before the rebuild, left no index: the
        # next run still rebuilds it with the DBA's settings.
        raw.execute("DROP INDEX memory_pg_memories_embedding_hnsw_idx")
        reembed(engine, embedder, batch_size=10)
    finally:
        engine.dispose()
    assert _graph_options(raw) == ["ef_construction=200", "m=16"]
    assert _index_ok(raw)
    assert store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]


def test_reembed_forgets_settings_the_dba_took_back(store, raw, db_url, embedder):
    store.add_memories(TEXTS)
    raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx SET (ef_construction = 200)")
    engine = create_engine(db_url)
    try:
        reembed(engine, embedder, batch_size=10)
        # Back to pgvector's default: the next rebuild must not bring 200 back.
        raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx RESET (m, ef_construction)")
        reembed(engine, embedder, batch_size=10)
    finally:
        engine.dispose()
    assert _graph_options(raw) == ["ef_construction=64", "m=16"]


class MustNotEmbed:
    """A model of another dimension that fails the test if reembed starts embedding."""

    model_name = "test/must-not-embed"
    dimension = 128

    def embed_documents(self, texts):
        raise AssertionError("reembed embedded before refusing")

    def embed_query(self, text):
        raise AssertionError("reembed embedded before refusing")


VECTORS = "SELECT id, embedding::text FROM memory_pg_memories ORDER BY id"


def _nothing_written(raw, before, embedder):
    assert raw.execute(VECTORS).fetchall() == before
    columns = raw.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'memory_pg_memories'::regclass "
        "AND NOT attisdropped"
    ).fetchall()
    assert ("embedding_next",) not in columns
    assert raw.execute("SELECT 1 FROM memory_pg_settings WHERE key = 'reembed'").fetchall() == []
    assert _column_dim(raw) == embedder.dimension


def test_reembed_refuses_a_graph_pgvector_cannot_build_before_writing(store, raw, db_url, embedder):
    ids = store.add_memories(TEXTS)
    # pgvector accepts this ALTER, but a build needs ef_construction >= 2 * m.
    raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx SET (m = 48)")
    before = raw.execute(VECTORS).fetchall()
    engine = create_engine(db_url)
    try:
        with pytest.raises(InvalidArgument, match=r"ef_construction at least twice m \(here 96\)"):
            reembed(engine, MustNotEmbed(), batch_size=10)
    finally:
        engine.dispose()
    _nothing_written(raw, before, embedder)
    assert _index_ok(raw)
    assert store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]


def test_reembed_refuses_recorded_settings_it_could_not_build_with_no_index(
    store, raw, db_url, embedder
):
    store.add_memories(TEXTS)
    # No index (a rebuild that failed) and a record pgvector could not build with.
    raw.execute("DROP INDEX memory_pg_memories_embedding_hnsw_idx")
    raw.execute("INSERT INTO memory_pg_settings (key, value) VALUES ('hnsw_index', '{\"m\": 48}')")
    before = raw.execute(VECTORS).fetchall()
    engine = create_engine(db_url)
    try:
        with pytest.raises(InvalidArgument, match="settings row 'hnsw_index'"):
            reembed(engine, MustNotEmbed(), batch_size=10)
    finally:
        engine.dispose()
    _nothing_written(raw, before, embedder)


def test_the_installed_cli_refuses_an_unbuildable_graph_and_a_transaction_pooler(
    store, raw, db_url, embedder
):
    from tests.acceptance.test_cli import run as run_installed

    store.add_memories(TEXTS)
    before = raw.execute(VECTORS).fetchall()
    command = ["reembed", "--model", "sentence-transformers/all-MiniLM-L6-v2", "--json"]
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx SET (m = 48)")
    proc = run_installed(command, env, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "ef_construction at least twice m" in proc.stderr
    raw.execute("ALTER INDEX memory_pg_memories_embedding_hnsw_idx RESET (m)")
    proc = run_installed(command, {**env, "MEMORY_PG_POOLER": "transaction"}, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "statement_timeout" in proc.stderr and "session-mode pool" in proc.stderr
    _nothing_written(raw, before, embedder)
    assert _index_ok(raw)


def test_reembed_waits_a_bounded_time_for_a_busy_table_keeps_its_work_and_finishes_later(
    store, make_store, raw, db_url, embedder, monkeypatch
):
    """Adding the new column and the swap take the table's ACCESS EXCLUSIVE lock. The
    request waits for every transaction that holds the table, and every later search
    waits behind it: so each gives up after a bounded wait."""
    from memory_pg.errors import QueryTimeout
    from memory_pg.jobs import reembed as reembed_module

    monkeypatch.setattr(reembed_module, "SWAP_LOCK_TIMEOUT_MS", 100)
    ids = store.add_memories(TEXTS)
    projected = Projected(embedder)
    engine = create_engine(db_url)
    reader = create_engine(db_url)
    held = []

    def hold_the_table(*_):  # a long transaction that read the table, begun mid-run
        if not held:
            held.append(reader.connect())
            held[0].exec_driver_sql("SELECT count(*) FROM memory_pg_memories")

    try:
        # Held before the run: the column is not added and nothing is written.
        hold_the_table()
        with pytest.raises(QueryTimeout, match="nothing was changed"):
            reembed(engine, projected, batch_size=2)
        assert not raw.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = 'memory_pg_memories'::regclass "
            "AND attname = 'embedding_next' AND NOT attisdropped"
        ).fetchone()
        held.pop().close()
        # Held from the first batch on: the swap gives up, the new vectors are kept.
        with pytest.raises(QueryTimeout, match="new vectors are kept"):
            reembed(engine, projected, batch_size=2, progress=hold_the_table)
        # Searches still run on the old vectors meanwhile.
        assert store.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]
        held.pop().close()
        assert _column_dim(raw) == embedder.dimension
        filled = raw.execute(
            "SELECT count(*) FROM memory_pg_memories WHERE embedding_next IS NOT NULL"
        ).fetchone()[0]
        assert filled == len(TEXTS)
        report = reembed(engine, projected, batch_size=2)
    finally:
        for conn in held:
            conn.close()
        engine.dispose()
        reader.dispose()
    assert report.resumed and report.reembedded == 0
    assert _column_dim(raw) == projected.dimension and _index_ok(raw)
    moved = make_store(user_id="alice", embedder=projected)
    assert moved.search("what is my kitten's name", top_k=1)[0]["id"] == ids[2]

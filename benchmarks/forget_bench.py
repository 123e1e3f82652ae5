"""Benchmark: a ``forget`` run over many memories while searches keep running.

Loads ``--rows`` synthetic memories (random unit vectors, as every embedder's are,
made by ``generate_series`` in the database, not by the embedder) of which
``--expirable`` are stale (100 days old, never retrieved, importance 0.1), builds
the HNSW index, then:

1. measures search latency (the store's hybrid search statement, one user at a
   time) while idle for ``--idle-s`` seconds;
2. runs ``forget`` while the same search loop keeps going, and measures both;
3. with ``--vacuum``, runs ``VACUUM memory_pg_memories`` next, as autovacuum will
   after a large forget, while the searches go on: pgvector repairs every HNSW
   node that lost a neighbour, so this is where the graph pays for the deletes;
   with ``--reindex-first`` it first rebuilds the graph without the deleted rows
   (``REINDEX INDEX CONCURRENTLY``, pgvector's advice), and times both.

Prints a JSON report. Example (from a checkout: ``PYTHONPATH=.``)::

    PYTHONPATH=. python benchmarks/forget_bench.py --rows 100000 --expirable 10000

Measured on 2 shared CPU cores (other jobs running), PostgreSQL 18 embedded:

* ``--rows 100000`` (384-d, 10k expirable): forget 1.7 s, 13 batches; search p95
  32.5 ms idle, 41.3 ms during forget (x1.27). Load and HNSW build: 213 s.
* ``--rows 1000000 --dim 64`` (100k expirable): forget 15.3 s, 103 batches; search
  p95 105 ms idle, 83 ms during forget (x0.79: the machine's other load dominates
  the noise). Load and HNSW build: 1590 s, which is why 1M ran at 64-d.

Runs on the embedded server in a temporary folder (``--home`` to keep it), or on
``--database-url`` (a database it may fill and empty).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, create_engine, text

from memory_pg import schema
from memory_pg.config import ForgetPolicy
from memory_pg.jobs.forget import forget
from memory_pg.server import EmbeddedServer
from memory_pg.sql import search as sql_search
from memory_pg.sql import setup as sql_setup
from memory_pg.text.query import analyse

LOAD = text(
    """
    INSERT INTO memory_pg_memories (
        user_id, memory_type, text, embedding, embedding_model, search_tsv, content_hash,
        importance, created_at, updated_at, valid_from, event_time)
    SELECT 'user' || (g % CAST(:users AS int)),
           'dialogue',
           'synthetic memory number ' || g,
           l2_normalize((SELECT array_agg(random() - 0.5)::vector
                           FROM generate_series(1, CAST(:dim AS int)) WHERE g > 0)),
           'bench',
           to_tsvector('simple', 'synthetic memory number ' || g),
           md5(g::text),
           CASE WHEN g <= :expirable THEN 0.1 ELSE 0.5 END,
           now() - CASE WHEN g <= :expirable THEN interval '100 days' ELSE interval '1 day' END,
           now(), now(), now()
      FROM generate_series(CAST(:lo AS int), CAST(:hi AS int)) AS g
    """
)


def hnsw_build_mb(rows: int, dim: int) -> int:
    """``maintenance_work_mem`` (MB) for building an HNSW index over ``rows`` vectors.

    pgvector builds the graph in memory while it fits in maintenance_work_mem and
    far more slowly on disk after: at 1M x 384-d, 1 GB holds roughly 600k vectors
    (estimated from their size). Room for every vector and its neighbour lists
    (1 kB a row, enough for ``m`` up to 32), at least 1 GB; a parallel build
    reserves all of it as shared memory, so at most a quarter of the machine's.
    """
    return min(
        max(1024, rows * (dim * 4 + 1024) * 3 // 2 // 2**20),
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4 // 2**20,
    )


def load(engine: Engine, rows: int, expirable: int, users: int, dim: int) -> float:
    """Fill the table; returns seconds (the HNSW index is built after the load)."""
    started = time.monotonic()
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX IF EXISTS memory_pg_memories_embedding_hnsw_idx"))
    chunk = 50_000
    for lo in range(1, rows + 1, chunk):
        hi = min(rows, lo + chunk - 1)
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL statement_timeout = 0"))
            conn.execute(
                LOAD, {"users": users, "dim": dim, "expirable": expirable, "lo": lo, "hi": hi}
            )
    graph_mb = hnsw_build_mb(rows, dim)
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL statement_timeout = 0"))
        conn.execute(
            text("SELECT set_config('maintenance_work_mem', :mb, true)"),
            {"mb": str(graph_mb) + "MB"},
        )
        conn.execute(
            text(
                "CREATE INDEX memory_pg_memories_embedding_hnsw_idx ON memory_pg_memories "
                "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
        )
        conn.execute(text("ANALYZE memory_pg_memories"))
    return time.monotonic() - started


def search_loop(
    engine: Engine, users: int, dim: int, stop: threading.Event, out: list[float]
) -> None:
    """Search one random user after another until ``stop``; latencies (ms) go to ``out``."""
    rng = np.random.default_rng(1)
    filters = sql_search.SearchFilters()
    while not stop.is_set():
        user = "user" + str(int(rng.integers(users)))
        vector = rng.standard_normal(dim).astype(np.float32)
        stmt = sql_search.search_memories(
            user, analyse("synthetic memory"), vector, top_k=5, filters=filters
        )
        started = time.perf_counter()
        with engine.begin() as conn:
            conn.execute(sql_setup.set_tenant(user, 100))
            conn.execute(stmt).all()
        out.append((time.perf_counter() - started) * 1000)


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 / p95 / p99 in milliseconds, and the count (only the count when none)."""
    if not values:
        return {"n": 0}
    arr = np.asarray(values)
    return {
        "n": len(values),
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "p99_ms": round(float(np.percentile(arr, 99)), 2),
    }


def main() -> None:
    """Run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--expirable", type=int, default=None, help="default: rows / 10")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--pause", type=float, default=0.0, help="forget's pause between batches")
    parser.add_argument("--home", default=None, help="embedded server folder (default: temp)")
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--vacuum", action="store_true", help="then VACUUM the table beside the searches"
    )
    parser.add_argument(
        "--reindex-first", action="store_true", help="with --vacuum: REINDEX the graph first"
    )
    args = parser.parse_args()
    expirable = args.expirable if args.expirable is not None else args.rows // 10

    server = None
    tmp = None
    url = args.database_url
    if url is None:
        tmp = tempfile.mkdtemp(prefix="memory-pg-bench-")
        server = EmbeddedServer(Path(args.home or tmp))
        url = server.start()
    engine = create_engine(url, pool_size=4)
    try:
        schema.upgrade(engine, embedding_dim=args.dim)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "TRUNCATE memory_pg_memories, memory_pg_history, memory_pg_memory_entities, "
                    "memory_pg_memory_links, memory_pg_entities"
                )
            )
        load_s = load(engine, args.rows, expirable, args.users, args.dim)

        idle: list[float] = []
        stop = threading.Event()
        worker = threading.Thread(
            target=search_loop, args=(engine, args.users, args.dim, stop, idle)
        )
        worker.start()
        time.sleep(args.idle_s)
        stop.set()
        worker.join()

        busy: list[float] = []
        stop = threading.Event()
        worker = threading.Thread(
            target=search_loop, args=(engine, args.users, args.dim, stop, busy)
        )
        worker.start()
        report = forget(engine, ForgetPolicy(), batch_size=args.batch_size, pause_s=args.pause)
        stop.set()
        worker.join()

        result: dict[str, Any] = {
            "command": "PYTHONPATH=. python benchmarks/forget_bench.py " + " ".join(sys.argv[1:]),
            "rows": args.rows,
            "expirable": expirable,
            "users": args.users,
            "dim": args.dim,
            "load_and_index_s": round(load_s, 1),
            "forget": {
                "deleted": report.deleted,
                "batches": report.batches,
                "batch_size": args.batch_size,
                "pause_s": args.pause,
                "duration_s": report.duration_s,
                "rows_per_s": round(report.deleted / max(report.duration_s, 1e-9)),
            },
            "search_idle": percentiles(idle),
            "search_during_forget": percentiles(busy),
        }
        result["p95_ratio"] = round(
            result["search_during_forget"]["p95_ms"] / result["search_idle"]["p95_ms"], 2
        )
        if args.vacuum:
            during: list[float] = []
            stop = threading.Event()
            worker = threading.Thread(
                target=search_loop, args=(engine, args.users, args.dim, stop, during)
            )
            worker.start()
            started = time.monotonic()
            reindex_s = None
            with engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(text("SET statement_timeout = 0"))
                if args.reindex_first:
                    conn.execute(
                        text("SELECT set_config('maintenance_work_mem', :mb, false)"),
                        {"mb": str(hnsw_build_mb(args.rows, args.dim)) + "MB"},
                    )
                    conn.execute(
                        text("REINDEX INDEX CONCURRENTLY memory_pg_memories_embedding_hnsw_idx")
                    )
                    reindex_s = time.monotonic() - started
                conn.execute(text("VACUUM memory_pg_memories"))
            vacuum_s = time.monotonic() - started - (reindex_s or 0.0)
            stop.set()
            worker.join()
            result["vacuum"] = {
                "reindex_first_s": None if reindex_s is None else round(reindex_s, 1),
                "duration_s": round(vacuum_s, 1),
                "search_during": percentiles(during),
                "p95_ratio": round(
                    percentiles(during)["p95_ms"] / result["search_idle"]["p95_ms"], 2
                )
                if during
                else None,
            }
        print(json.dumps(result, indent=2))
    finally:
        engine.dispose()
        if server is not None:
            server.stop()
        if tmp is not None and args.home is None:
            shutil.rmtree(tmp, ignore_errors=True)  # a 1M-row run leaves gigabytes


if __name__ == "__main__":
    main()

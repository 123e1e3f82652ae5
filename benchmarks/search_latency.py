"""SQL time of one search for a user with many memories (synthetic vectors and words).

Embedding 100k texts on two CPU cores takes too long, so rows get random unit
vectors and random words (a Zipf-like vocabulary); the statement is the real
search statement. Reports EXPLAIN ANALYZE planning + execution time (p50, p95)
and the client round trip, and writes JSON under ``benchmarks/results/``.

    python benchmarks/search_latency.py --rows 100000
    python benchmarks/search_latency.py --rows 100000 --home /tmp/lat --keep   # reuse the fill
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory_pg.sql import core as sql_core  # noqa: E402
from memory_pg.sql import search as sql_search  # noqa: E402
from memory_pg.sql import setup as sql_setup  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402
from memory_pg.text.query import analyse  # noqa: E402

#: ``created_at``: row ``g`` of ``rows`` is written ``(rows - g) * step_s`` seconds
#: before now, the last row newest (0: every row at the fill's one time).
FILL = text(
    """
    INSERT INTO memory_pg_memories (user_id, id, memory_type, text, embedding,
        embedding_model, search_tsv, content_hash, event_time, importance, access_count,
        created_at)
    SELECT :user_id, gen_random_uuid(),
           (ARRAY['dialogue','todo','user_profile','key_decision','project_status'])[1 + g % 5],
           t.words, v.vec, 'synthetic', to_tsvector('english', t.words), md5(t.words || g),
           now() - (g % 2000) * interval '6 hours', 0.5, g % 3,
           now() - (CAST(:rows AS int) - g) * make_interval(secs => CAST(:step_s AS float8))
    FROM generate_series(CAST(:start AS int), CAST(:stop AS int)) AS g
    CROSS JOIN LATERAL (
        SELECT string_agg('w' || floor(power(random(), 3) * 20000)::int, ' ') AS words
        FROM generate_series(1, 12) WHERE g IS NOT NULL) AS t
    CROSS JOIN LATERAL (
        SELECT array_agg(random() - 0.5)::vector AS vec
        FROM generate_series(1, CAST(:dim AS int)) WHERE g IS NOT NULL) AS v
    """
)


def fill(conn: Any, user: str, rows: int, dim: int, step_s: float = 0.0) -> None:
    """``rows`` synthetic memories of ``user`` (:data:`FILL`), 5000 to a statement."""
    for start in range(1, rows + 1, 5_000):
        stop = min(rows, start + 4_999)
        conn.execute(
            FILL,
            {
                "user_id": user,
                "start": start,
                "stop": stop,
                "dim": dim,
                "rows": rows,
                "step_s": step_s,
            },
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", default=os.environ.get("MEMORY_PG_DATABASE_URL"))
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "search_latency.json"))
    p.add_argument("--home", default=None, help="embedded server folder (default: a temp dir)")
    p.add_argument(
        "--keep", action="store_true", help="keep the rows, and reuse them when already there"
    )
    args = p.parse_args(argv)
    scratch = None  # a folder of our own, removed at the end
    if args.database_url:
        store = MemoryStore(
            args.database_url, embedding_model="all-MiniLM-L6-v2", auto_migrate=True
        )
    else:
        scratch = None if args.home else tempfile.mkdtemp(prefix="memory-pg-lat-")
        store = MemoryStore(
            home=args.home or scratch,
            embedding_model="all-MiniLM-L6-v2",
        )
    dim = store.embedder.dimension
    user = "latency-bench"
    rng = np.random.default_rng(7)
    try:
        t0 = time.perf_counter()
        with store.engine.begin() as c:
            c.execute(sql_setup.set_tenant(user))
            have = c.execute(
                text("SELECT count(*) FROM memory_pg_memories WHERE user_id = :u"), {"u": user}
            ).scalar_one()
        refill = not (args.keep and have == args.rows)
        with store.engine.begin() as c:
            # Filling 100k rows (HNSW maintained row by row) outlasts the store's timeout.
            c.execute(text("SET LOCAL statement_timeout = 0"))
            if refill:
                c.execute(text("DELETE FROM memory_pg_memories WHERE user_id = :u"), {"u": user})
                fill(c, user, args.rows, dim)
        with store.engine.connect() as c:
            c.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM ANALYZE memory_pg_memories")
            )
        fill_s = time.perf_counter() - t0
        plan_ms, exec_ms, trip_ms, touch_ms = [], [], [], []
        hot_before = _updates(store)
        for _ in range(args.queries):
            v = rng.standard_normal(dim).astype(np.float32)
            v /= np.linalg.norm(v)
            words = " ".join(f"w{int(rng.random() ** 3 * 20000)}" for _ in range(3))
            stmt = sql_search.search_memories(
                user,
                analyse(words),
                v,
                top_k=10,
                filters=sql_search.SearchFilters(),
                ranking=store.ranking,
            )
            with store.engine.begin() as c:
                c.execute(sql_setup.set_tenant(user, store.ef_search))
                compiled = stmt.compile(dialect=c.dialect)
                params: dict[str, Any] = dict(compiled.params)
                params["query_vector"] = sql_core.vector_literal(v)
                t1 = time.perf_counter()
                c.exec_driver_sql(str(compiled), params).fetchall()
                trip_ms.append(1000 * (time.perf_counter() - t1))
                row = c.exec_driver_sql(
                    "EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled), params
                ).scalar_one()
                plan_ms.append(row[0]["Planning Time"])
                exec_ms.append(row[0]["Execution Time"])
            # What the store runs: the same search recording the use of its results in
            # the same statement (a data-modifying CTE), in its own committed transaction.
            with_touch = sql_search.search_memories(
                user,
                analyse(words),
                v,
                top_k=10,
                filters=sql_search.SearchFilters(),
                ranking=store.ranking,
                touch=True,
            )
            t1 = time.perf_counter()
            with store.engine.begin() as c:
                c.execute(sql_setup.set_tenant(user, store.ef_search))
                c.execute(with_touch).fetchall()
            touch_ms.append(1000 * (time.perf_counter() - t1))

        hot_after = _updates(store)
        updates = hot_after[0] - hot_before[0]

        def pct(xs: list[float], q: float) -> float:
            return round(float(np.percentile(xs, q)), 2)

        report = {
            "benchmark": "search SQL time, one user",
            "rows": args.rows,
            "dimension": dim,
            "fill_and_index_s": round(fill_s, 1),
            "queries": args.queries,
            "explain_analyze_execution_ms": {"p50": pct(exec_ms, 50), "p95": pct(exec_ms, 95)},
            "explain_analyze_planning_ms": {"p50": pct(plan_ms, 50), "p95": pct(plan_ms, 95)},
            "round_trip_ms": {"p50": pct(trip_ms, 50), "p95": pct(trip_ms, 95)},
            "search_with_use_recorded_and_commit_ms": {
                "p50": pct(touch_ms, 50),
                "p95": pct(touch_ms, 95),
            },
            "use_updates": updates,
            "use_updates_hot_share": round((hot_after[1] - hot_before[1]) / max(updates, 1), 3),
            "ranking_candidates": store.ranking.candidates,
            "ef_search": store.ef_search,
            "command": "python benchmarks/search_latency.py " + " ".join(argv or sys.argv[1:]),
            "machine": f"{os.cpu_count()} cpus, shared",
            "note": "median of all: " + str(round(statistics.median(trip_ms), 2)),
        }
        if not args.keep:
            with store.engine.begin() as c:
                c.execute(sql_setup.set_tenant(user))
                c.execute(text("DELETE FROM memory_pg_memories WHERE user_id = :u"), {"u": user})
    finally:
        store.close()
        if scratch:  # a folder of our own: nothing to --keep
            shutil.rmtree(scratch, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


def _updates(store: MemoryStore) -> tuple[int, int]:
    """Row updates and HOT updates of the memories table so far (statistics flushed)."""
    with store.engine.begin() as c:
        c.execute(text("SELECT pg_stat_force_next_flush()"))
    time.sleep(2.5)  # other backends flush their counters when idle, about every second
    with store.engine.begin() as c:
        row = c.execute(
            text(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
                " WHERE relname = 'memory_pg_memories'"
            )
        ).one()
    return int(row[0]), int(row[1])


if __name__ == "__main__":
    raise SystemExit(main())

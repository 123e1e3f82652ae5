"""The vector leg's Recall@10 and the store's search time by ``hnsw.ef_search``, for
the one heavy user of a database that ``run.py`` filled and kept.

``run.py --database-url URL --scenarios one`` leaves its last scenario's rows in the
database. This rebuilds that scenario's data (same pool, same seeds: the texts are
unique, so each returned row maps back to its vector), then for each ``ef_search``:

* the vector leg alone (``ORDER BY embedding <=> q LIMIT 10`` under the user's
  filters, iterative scan as the store sets it), Recall@10 against exact, tie-aware
  as ``run.py`` counts it;
* the public ``store.search`` (top 10, precomputed query vector), p50 / p95 / p99.

    python benchmarks/run.py --sizes 1000000 --scenarios one --heavy-max 1000000 \\
        --systems memory-pg --e2e-size 0 --database-url URL
    python benchmarks/ef_search_sweep.py --database-url URL --size 1000000 \\
        --ef 100,200,400,800 --out benchmarks/results/ef_search_sweep.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sqlalchemy import text  # noqa: E402

from benchmarks.data import build_dataset, embed_pool, make_texts  # noqa: E402
from benchmarks.systems import LookupEmbedder  # noqa: E402

VECTOR_LEG = text(
    "SELECT text FROM memory_pg_memories WHERE user_id = :user_id "
    "AND superseded_at IS NULL ORDER BY embedding <=> CAST(:q AS vector) LIMIT 10"
)
HNSW = text(
    "SELECT set_config('hnsw.ef_search', :ef, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true)"
)


def main() -> None:
    """Sweep ``--ef`` and print (and write) one JSON report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", required=True)
    p.add_argument("--size", type=int, required=True, help="the run.py scenario's size")
    p.add_argument("--pool", type=int, default=10_000, help="run.py's --pool")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--ef", default="100,200,400,800")
    p.add_argument("--out")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from memory_pg.embedding import get_embedder
    from memory_pg.store import MemoryStore

    real = get_embedder("all-MiniLM-L6-v2")
    pool_texts = make_texts(min(args.pool, args.size))
    pool_vectors = embed_pool(
        [t for t, _ in pool_texts],
        real.embed_documents,
        REPO / "benchmarks" / "results" / "tmp",
        real.model_name,
    )
    # run.py builds its one-user scenario with 100 queries; the first --queries are used.
    data = build_dataset(f"one-{args.size}", args.size, 1, pool_texts, pool_vectors, queries=100)
    row_of = {t: i for i, t in enumerate(data.texts)}
    queries = list(zip(data.query_texts, data.query_vectors, strict=True))[: args.queries]
    # The 10th exact similarity per query (minus run.py's tie tolerance).
    floors = [float(np.partition(data.vectors @ qv, -10)[-10]) - 1e-5 for _, qv in queries]
    lookup = LookupEmbedder(real)
    lookup.table = {qt: qv for qt, qv in queries}
    store = MemoryStore(args.database_url, embedder=lookup)
    user = data.query_users[0]
    report: dict[str, Any] = {
        "size": args.size,
        "queries": len(queries),
        "load_1min": round(os.getloadavg()[0], 2),
        "ef_search": {},
    }
    try:
        for ef in (int(x) for x in args.ef.split(",")):
            recalls = []
            with store.engine.connect() as conn:
                for (_, qv), floor in zip(queries, floors, strict=True):
                    with conn.begin():
                        conn.execute(HNSW.bindparams(ef=str(ef)))
                        vector = "[" + ",".join(f"{x:.7g}" for x in qv.tolist()) + "]"
                        found = conn.execute(
                            VECTOR_LEG.bindparams(user_id=user, q=vector)
                        ).scalars()
                        near = sum(1 for t in found if float(data.vectors[row_of[t]] @ qv) >= floor)
                    recalls.append(near / 10)
            store.ef_search = ef
            for qt, _ in queries[:5]:  # warm
                store.search(qt, top_k=10, user_id=user)
            samples = []
            for qt, _ in queries:
                t0 = time.perf_counter()
                store.search(qt, top_k=10, user_id=user)
                samples.append((time.perf_counter() - t0) * 1000)
            samples.sort()
            row = {
                "vector_leg_recall_at_10": round(statistics.fmean(recalls), 3),
                "search_p50_ms": round(samples[len(samples) // 2], 1),
                "search_p95_ms": round(samples[int(len(samples) * 0.95)], 1),
                "search_p99_ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.99))], 1),
            }
            report["ef_search"][ef] = row
            print(ef, row, flush=True)
    finally:
        store.close()
    print(json.dumps(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

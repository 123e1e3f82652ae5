"""The vector leg's Recall@10 and the store's search time by ``hnsw.ef_search``, for
the one heavy user of a database that ``run.py`` filled and kept.

``run.py --database-url URL --scenarios one`` leaves its last scenario's rows in the
database. This rebuilds that scenario's data (same pool, same seeds: the texts are
unique, so each returned row maps back to its vector), then for each ``ef_search``:

* the vector leg alone (``run.py``'s own: the search's filters, the tenant and
  the HNSW settings as the store sets them, the planner's choice of index),
  Recall@10 against exact, tie-aware as ``run.py`` counts it;
* the public ``store.search`` (top 10, precomputed query vector), p50 / p95 / p99,
  timed as ``run.py`` times it.

    python benchmarks/run.py --sizes 1000000 --scenarios one --heavy-max 1000000 \\
        --systems memory-pg --e2e-size 0 --pool 10000 --database-url URL
    python benchmarks/ef_search_sweep.py --database-url URL --size 1000000 \\
        --pool 10000 --ef 100,200,400,800 --out benchmarks/results/ef_search_sweep.json

``--size`` and ``--pool`` must be ``run.py``'s: the rows are found again by their
texts. Over 60 queries the p99 is close to the slowest search.

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import build_dataset, exact_top_k  # noqa: E402
from benchmarks.run import _latencies, _recall  # noqa: E402
from benchmarks.systems import LookupEmbedder, MemoryPg, real_pool  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Sweep ``--ef``; print, write (``--out``) and return one JSON report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", required=True)
    p.add_argument("--size", type=int, required=True, help="the run.py scenario's size")
    p.add_argument("--pool", type=int, default=20_000, help="run.py's --pool (its default)")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--ef", default="100,200,400,800")
    p.add_argument("--out")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from memory_pg.store import MemoryStore

    real, pool_texts, pool_vectors = real_pool(min(args.pool, args.size))
    # run.py builds its one-user scenario with 100 queries; the first --queries are used.
    data = build_dataset(f"one-{args.size}", args.size, 1, pool_texts, pool_vectors, queries=100)
    queries = list(zip(data.query_texts, data.query_vectors, strict=True))[: args.queries]
    exact = exact_top_k(data, 10)[: len(queries)]
    lookup = LookupEmbedder(real)
    lookup.table = {qt: qv for qt, qv in queries}
    store = MemoryStore(args.database_url, embedder=lookup)
    harness = MemoryPg(store, lookup, None)
    row_of = harness.id_of(data)
    user = data.query_users[0]
    report: dict[str, Any] = {
        "size": args.size,
        "queries": len(queries),
        "load_1min": round(os.getloadavg()[0], 2),
        "ef_search": {},
    }
    try:
        for ef in (int(x) for x in args.ef.split(",")):
            store.ef_search = ef
            found = [
                [row_of(i) for i in harness.vector_leg(user, qv, "planner")] for _, qv in queries
            ]
            recall = _recall(found, exact, data)
            latency, _ = _latencies(harness.search, [(user, qt) for qt, _ in queries])
            row = {"vector_leg_recall_at_10": recall, "search_ms": latency}
            report["ef_search"][ef] = row
            print(ef, row, flush=True)
    finally:
        store.close()
    print(json.dumps(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()

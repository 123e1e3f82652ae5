"""A user loaded in bulk, with and without the analyze a bulk write asks for (migration 0009).

Each way on a fresh embedded server: ``--light-users`` users of 10 memories, an
``ANALYZE`` (the table as autovacuum would have seen it), then one user loaded
with ``--bulk`` memories in calls of ``--batch`` (supersession off, as an import
would write them), then that user's searches (``--queries``) and writes of two
memories (supersession on), timed, p50 / p95:

* ``as_shipped``: a call of 500 rows or more asks the database to analyze the
  memories table when enough of it changed (``memory_pg_analyze_memories_v1``);
* ``before``: nothing asked (``sql.setup.BULK_ROWS`` out of reach), so the
  statistics know the user only once autovacuum gets to it (not within the run).

Vectors are precomputed (``benchmarks/results/tmp``), so the model is not timed.

Example (from the repository root)::

    python benchmarks/bulk_load_stats.py --bulk 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.systems import LookupEmbedder, real_pool, timing_summary, write_result


def _one_way(way: str, args: argparse.Namespace, lookup: Any, pool: list[tuple[str, str]]) -> Any:
    from sqlalchemy import text

    from memory_pg.config import SupersedePolicy
    from memory_pg.sql import setup
    from memory_pg.store import MemoryStore

    shipped = setup.BULK_ROWS
    setup.BULK_ROWS = shipped if way == "as_shipped" else 10**12
    samples: dict[str, list[float]] = {f"search_{way}": [], f"write_{way}": []}
    try:
        with tempfile.TemporaryDirectory(prefix="memory-pg-bulk-") as tmp:
            os.chmod(tmp, 0o755)  # the embedded server may run as another user
            store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
            try:
                store.supersede = SupersedePolicy(enabled=False)
                light = pool[args.bulk : args.bulk + 500]
                for i in range(args.light_users):
                    items = [{"text": t, "memory_type": k} for t, k in light[i % 50 :: 50][:10]]
                    store.add_memories(items, user_id=f"light-{i}")
                with store.engine.connect() as conn:
                    conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                    conn.execute(text("ANALYZE memory_pg_memories"))
                t0 = time.perf_counter()
                for start in range(0, args.bulk, args.batch):
                    chunk = pool[start : start + args.batch]
                    store.add_memories(
                        [{"text": t, "memory_type": k} for t, k in chunk], user_id="bulk"
                    )
                load_s = time.perf_counter() - t0
                queries = [t for t, _ in pool[args.bulk + 500 : args.bulk + 500 + args.queries]]
                for query in queries:
                    t0 = time.perf_counter()
                    store.search(query, 10, user_id="bulk", track_access=False)
                    samples[f"search_{way}"].append(time.perf_counter() - t0)
                store.supersede = SupersedePolicy()
                fresh = pool[args.bulk + 500 + args.queries :]
                for k in range(args.writes):
                    pair = fresh[2 * k : 2 * k + 2]
                    t0 = time.perf_counter()
                    store.add_memories(
                        [{"text": t, "memory_type": m} for t, m in pair], user_id="bulk"
                    )
                    samples[f"write_{way}"].append(time.perf_counter() - t0)
            finally:
                store.close()
    finally:
        setup.BULK_ROWS = shipped
    return samples, load_s


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run both ways, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--light-users", type=int, default=300)
    p.add_argument("--bulk", type=int, default=10_000, help="memories of the user loaded")
    p.add_argument("--batch", type=int, default=500, help="memories per call while loading")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--writes", type=int, default=40)
    p.add_argument("--out", default="benchmarks/results/bulk_load_stats.json")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    size = args.bulk + 500 + args.queries + 2 * args.writes
    real, pool, vectors = real_pool(size)
    lookup = LookupEmbedder(real)
    lookup.table.update(zip((t for t, _ in pool), vectors, strict=True))
    samples: dict[str, list[float]] = {}
    load: dict[str, float] = {}
    for way in ("as_shipped", "before"):
        got, load_s = _one_way(way, args, lookup, pool)
        samples.update(got)
        load[way] = round(load_s, 1)
    result: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/bulk_load_stats.py", *(argv or sys.argv[1:])]),
        "light_users": args.light_users,
        "bulk_memories": args.bulk,
        "batch": args.batch,
        "load_s": load,
        "load_1min": round(os.getloadavg()[0], 2),
        **timing_summary(samples),
    }
    write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()

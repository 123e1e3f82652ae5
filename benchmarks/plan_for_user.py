"""A heavy user beside many light ones: their searches with and without a plan of their own.

psycopg prepares a statement it has run five times on a connection; PostgreSQL
then may reuse one generic plan for every user, made for the average user. This
loads ``--light-users`` users of ``--light`` memories each (``run.py``'s
many-users scenario) and one user holding ``--heavy`` memories, warms the pool on
light users' searches, then times, p50 / p95 over ``--queries`` searches each,
the two ways taking turns in blocks of ``--block``, each way its own searches
(light users first, then the heavy one):

* the heavy user's search with the per-user plan (``memory_pg.sql.setup.plan_for_user``,
  the store's default) and without it (the tenant statement alone, as before);
* a light user's search the same two ways (the cost of the extra statement);
* with ``--writes N``, N writes of two memories each, supersession on, the same two
  ways: a write looks for the memories it may replace with a nearest-neighbour
  query planned like a search's (``ef_search`` on its ``Run``, ``memory_pg.operations``).

Vectors are precomputed (``benchmarks/results/tmp``), so the model is not timed.

Example (from the repository root)::

    python benchmarks/plan_for_user.py --heavy 30000 --queries 200
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

import numpy as np

from benchmarks.data import build_dataset
from benchmarks.systems import lookup_of, real_pool, timing_summary, write_result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Load both kinds of users, time both ways, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--light-users", type=int, default=1000)
    p.add_argument("--light", type=int, default=10, help="memories per light user")
    p.add_argument("--heavy", type=int, default=30_000, help="memories of the heavy user")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--block", type=int, default=20)
    p.add_argument("--writes", type=int, default=0, help="writes per user kind and way")
    p.add_argument("--pool", type=int, default=10_000, help="distinct texts the data draws on")
    p.add_argument("--out", default="benchmarks/results/plan_for_user.json")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from sqlalchemy import text

    from memory_pg import store as store_module
    from memory_pg.config import SupersedePolicy
    from memory_pg.plans import protocol
    from memory_pg.store import MemoryStore

    real, pool, vectors = real_pool(args.pool)
    light = build_dataset(
        "light",
        args.light_users * args.light,
        args.light_users,
        pool,
        vectors,
        queries=2 * args.queries,
    )
    heavy = build_dataset("heavy", args.heavy, 1, pool, vectors, queries=2 * args.queries, seed=13)
    lookup = lookup_of(real, light, heavy)

    def tenant_only(*a: Any, **k: Any) -> Any:
        return protocol.begin(*a, **k)[:1]

    def as_before(*a: Any) -> Any:  # the tenant alone: no HNSW settings, no plan
        return protocol.begin(*a[:3])

    rng = np.random.default_rng(5)
    fresh: list[dict[str, str]] = []  # the writes: pool texts, their vectors moved a little
    for n in range(8 * args.writes):
        base = pool[n % len(pool)]
        fresh.append({"text": f"{base[0]} (write {n})", "memory_type": base[1]})
        vec = vectors[n % len(pool)] + rng.normal(0, 0.02, vectors.shape[1]).astype(np.float32)
        lookup.table[fresh[-1]["text"]] = vec / np.linalg.norm(vec)

    with tempfile.TemporaryDirectory(prefix="memory-pg-plan-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
        try:
            store.supersede = SupersedePolicy(enabled=False)
            t0 = time.perf_counter()
            for data, name in ((light, None), (heavy, "heavy")):
                for user, ix in data.user_batches(500):
                    items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
                    store.add_memories(items, user_id=name or user)
            load_s = time.perf_counter() - t0
            with store.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(text("VACUUM ANALYZE memory_pg_memories"))
            light_q = list(zip(light.query_users, light.query_texts, strict=True))
            heavy_q = [("heavy", q) for q in heavy.query_texts]
            for user, query in light_q[:100]:  # every pooled connection prepares the statement
                store.search(query, 10, user_id=user, track_access=False)

            samples: dict[str, list[float]] = {
                f"{who}_{way}": [] for who in ("heavy", "light") for way in ("own_plan", "before")
            }
            # Each way its own searches: a memory's first recorded use may move it to
            # another page, and its next fits where it is (benchmarks/search_use_cost.py).
            for who, queries in (("light", light_q), ("heavy", heavy_q)):
                for start in range(0, 2 * args.queries, 2 * args.block):
                    for w, way in enumerate(("own_plan", "before")):
                        store_module.begin = protocol.begin if way == "own_plan" else tenant_only
                        first = start + w * args.block
                        for user, query in queries[first : first + args.block]:
                            t0 = time.perf_counter()
                            store.search(query, 10, user_id=user)
                            samples[f"{who}_{way}"].append(time.perf_counter() - t0)
            store_module.begin = protocol.begin
            store.supersede = SupersedePolicy()  # as shipped: writes look for what they replace
            texts = iter(fresh)
            for who, users in (("light", light.query_users), ("heavy", ["heavy"])):
                for start in range(0, args.writes, args.block):
                    for way in ("own_plan", "before"):
                        store_module.begin = protocol.begin if way == "own_plan" else as_before
                        for k in range(start, min(start + args.block, args.writes)):
                            batch = [next(texts), next(texts)]
                            t0 = time.perf_counter()
                            store.add_memories(batch, user_id=users[k % len(users)])
                            samples.setdefault(f"{who}_write_{way}", []).append(
                                time.perf_counter() - t0
                            )
            store_module.begin = protocol.begin
        finally:
            store.close()

    result: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/plan_for_user.py", *(argv or sys.argv[1:])]),
        "light_users": args.light_users,
        "memories_per_light_user": args.light,
        "heavy_user_memories": args.heavy,
        "queries": args.queries,
        "load_s": round(load_s, 1),
        "load_1min": round(os.getloadavg()[0], 2),
        **timing_summary(samples),
    }
    write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()

"""What recording a search's use costs a light user, at the table's fillfactor.

Every search adds one to ``access_count`` of what it returns: batched and written
after the search (the default, :mod:`memory_pg.usage`), or in its own statement
(``use_flush_s=0``). This loads ``--users`` users of ``--per-user`` memories (``run.py``'s
many-users data, precomputed vectors), optionally with ``--fillfactor`` set on the
table first, and times ``MemoryStore.search`` p50 / p95 over ``--queries``
searches each, the ways taking turns in blocks of ``--block`` (each way its own
searches):

* ``no_use_recorded``: ``track_access=False`` (nothing written);
* ``use_in_statement``: ``use_flush_s=0``, the search's own statement counts;
* ``use_batched``: the default: the search only reads, a thread writes the uses
  every ``use_flush_s`` seconds.

It reports the WAL each way writes per search too (each way alone, after the timed
blocks, its batches written).

It also reports the share of the use updates PostgreSQL made HOT (the new row
version on the same page: no index entry written) and the table's size after.

    python benchmarks/search_use_cost.py --fillfactor 80 --out /tmp/ff80.json
    python benchmarks/search_use_cost.py --fillfactor 70 --out /tmp/ff70.json
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

from benchmarks.data import build_dataset
from benchmarks.systems import lookup_of, real_pool, timing_summary, write_result

_TABLE = (
    "SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot, "
    "pg_relation_size('memory_pg_memories') AS heap, "
    "pg_total_relation_size('memory_pg_memories') AS total "
    "FROM pg_stat_user_tables WHERE relname = 'memory_pg_memories'"
)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Load the users, time the three ways, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--per-user", type=int, default=10)
    p.add_argument("--queries", type=int, default=600)
    p.add_argument("--block", type=int, default=20)
    p.add_argument(
        "--fillfactor", type=int, default=0, help="set on the table before loading (0: as migrated)"
    )
    p.add_argument("--pool", type=int, default=10_000, help="distinct texts the data draws on")
    p.add_argument("--out", default="benchmarks/results/search_use_cost.json")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from sqlalchemy import text

    from memory_pg.config import StoreSettings, SupersedePolicy
    from memory_pg.store import MemoryStore

    real, pool, vectors = real_pool(args.pool)
    size = args.users * args.per_user
    data = build_dataset("many", size, args.users, pool, vectors, queries=args.queries * 3)
    lookup = lookup_of(real, data)

    ways = ("no_use_recorded", "use_in_statement", "use_batched")
    batched, in_statement = StoreSettings(), StoreSettings(use_flush_s=0)
    samples: dict[str, list[float]] = {w: [] for w in ways}
    with tempfile.TemporaryDirectory(prefix="memory-pg-use-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
        try:
            store.supersede = SupersedePolicy(enabled=False)
            if args.fillfactor:
                with store.engine.begin() as conn:
                    conn.execute(
                        text("SELECT set_config('memory_pg.fillfactor', :f, true)"),
                        {"f": str(args.fillfactor)},
                    )
                    conn.execute(
                        text(
                            "DO $$ BEGIN EXECUTE format('ALTER TABLE memory_pg_memories "
                            "SET (fillfactor = %s)', "
                            "current_setting('memory_pg.fillfactor')::int); END $$"
                        )
                    )
            for user, ix in data.user_batches(500):
                items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
                store.add_memories(items, user_id=user)
            with store.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(text("VACUUM ANALYZE memory_pg_memories"))
            searches = list(zip(data.query_users, data.query_texts, strict=True))
            for user, query in searches[:50]:  # prepare the statements on the pool
                for settings in (batched, in_statement):
                    store.settings = settings
                    store.search(query, 10, user_id=user, track_access=True)
                store.search(query, 10, user_id=user, track_access=False)
            # Each way its own searches (a memory's first use may move it to another
            # page, its second then fits where it is): way w takes every third block.
            for start in range(0, len(searches), args.block * len(ways)):
                for w, way in enumerate(ways):
                    store.settings = in_statement if way == ways[1] else batched
                    first = start + w * args.block
                    for user, query in searches[first : first + args.block]:
                        t0 = time.perf_counter()
                        store.search(query, 10, user_id=user, track_access=way != ways[0])
                        samples[way].append(time.perf_counter() - t0)
            store.flush_uses()
            wal: dict[str, float] = {}
            for w, way in enumerate(ways):  # each way alone: the WAL it writes per search
                store.settings = in_statement if way == ways[1] else batched
                alone = searches[w :: len(ways)][:100]
                with store.engine.connect() as conn:
                    before = conn.execute(text("SELECT pg_current_wal_lsn()")).scalar_one()
                for user, query in alone:
                    store.search(query, 10, user_id=user, track_access=way != ways[0])
                store.flush_uses()
                with store.engine.connect() as conn:
                    written = conn.execute(
                        text("SELECT pg_current_wal_lsn() - CAST(:lsn AS pg_lsn)"), {"lsn": before}
                    ).scalar_one()
                wal[way] = round(float(written) / len(alone), 1)
            with store.engine.begin() as conn:
                conn.execute(text("SELECT pg_stat_force_next_flush()"))
            time.sleep(1.5)
            with store.engine.begin() as conn:
                table = conn.execute(text(_TABLE)).one()
        finally:
            store.close()

    result: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/search_use_cost.py", *(argv or sys.argv[1:])]),
        "users": args.users,
        "memories_per_user": args.per_user,
        "queries": args.queries,
        "load_1min": round(os.getloadavg()[0], 2),
        **timing_summary(samples),
        "fillfactor": args.fillfactor or "as migrated (70)",
        "wal_bytes_per_search": wal,
        "use_updates": int(table.updates),
        "hot_share": round(int(table.hot) / max(1, int(table.updates)), 3),
        "heap_mb": round(int(table.heap) / 2**20, 1),
        "table_with_indexes_mb": round(int(table.total) / 2**20, 1),
    }
    write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()

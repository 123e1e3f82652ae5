"""Where a light user's search time goes: the server's part and the client's.

``run.py``'s many-users scenario (1000 users, 10 memories each at 10k) has
memory-pg's whole search near ChromaDB's in-process one; this splits it. On the
same data and queries it times, p50 over ``--queries`` searches of random users:

* ``store_search``: ``MemoryStore.search`` with a precomputed query vector;
* its steps, taken one by one as the store took them before issue 18 item 2 (it
  now pipelines them in one exchange, ``memory_pg/exchange.py``): ``checkout``
  (the pool's checkout; it pre-pinged before), ``settings`` (tenant and HNSW
  settings, one statement), ``statement`` (the search statement, sent and
  fetched), ``commit`` (of the use it records);
* ``exchanges_per_search``: network exchanges (messages sent, then the server's
  replies waited for) per ``MemoryStore.search``, counted from libpq's protocol
  trace of the pool's connections over ``--traced`` searches;
* ``server_planning`` and ``server_execution``: ``EXPLAIN (ANALYZE, FORMAT JSON)`` of
  the same statement with the same values (a custom plan, as the first
  executions of a prepared statement get).

Example (from the repository root; the pool vectors are embedded once and cached
in ``benchmarks/results/tmp``)::

    python benchmarks/search_overhead.py --size 10000 --queries 300
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.data import build_dataset, embed_pool, make_texts
from benchmarks.systems import LookupEmbedder
from memory_pg.text.query import analyse


def main() -> None:
    """Load the scenario, time the search and its parts, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--pool", type=int, default=10_000)
    p.add_argument("--traced", type=int, default=20, help="searches traced for exchanges")
    p.add_argument("--out", default="benchmarks/results/search_overhead.json")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from sqlalchemy import text

    from memory_pg.config import SupersedePolicy
    from memory_pg.embedding import get_embedder
    from memory_pg.plans.protocol import materialise
    from memory_pg.sql import core as sql_core
    from memory_pg.sql import search as sql_search
    from memory_pg.sql import setup as sql_setup
    from memory_pg.store import MemoryStore

    real = get_embedder("all-MiniLM-L6-v2")
    pool = make_texts(min(args.pool, args.size))
    cache = Path("benchmarks/results/tmp")
    vectors = embed_pool([t for t, _ in pool], real.embed_documents, cache, real.model_name)
    data = build_dataset(
        f"many-{args.size}", args.size, args.users, pool, vectors, queries=args.queries
    )
    lookup = LookupEmbedder(real)
    lookup.table = dict(zip(data.texts, data.vectors, strict=True))
    lookup.table.update(zip(data.query_texts, data.query_vectors, strict=True))

    with tempfile.TemporaryDirectory(prefix="memory-pg-overhead-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
        try:
            store.supersede = SupersedePolicy(enabled=False)  # the peers keep every row
            for user, ix in data.user_batches(500):
                items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
                store.add_memories(items, user_id=user)
            with store.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(text("VACUUM ANALYZE memory_pg_memories"))
            searches = list(
                zip(data.query_users, data.query_texts, data.query_vectors, strict=True)
            )

            def statement(user: str, query: str, vector: Any) -> Any:
                return sql_search.search_statement(
                    user,
                    analyse(query),
                    vector,
                    top_k=10,
                    filters=sql_search.SearchFilters(),
                    ranking=store.ranking,
                    touch=True,
                )

            samples: dict[str, list[float]] = {
                k: []
                for k in (
                    "store_search",
                    "checkout",
                    "settings",
                    "statement",
                    "commit",
                    "server_planning",
                    "server_execution",
                )
            }
            for user, query, _ in searches[:30]:  # warm the pool, caches and prepared plans
                store.search(query, 10, user_id=user)
            for user, query, vector in searches:
                t0 = time.perf_counter()
                store.search(query, 10, user_id=user)
                samples["store_search"].append(time.perf_counter() - t0)

                stmt, values = statement(user, query, vector)
                t0 = time.perf_counter()
                conn = store.engine.connect()
                t1 = time.perf_counter()
                tx = conn.begin()
                conn.execute(sql_setup.set_tenant(user, store.ef_search))
                t2 = time.perf_counter()
                materialise(conn.execute(stmt, values))
                t3 = time.perf_counter()
                tx.commit()
                conn.close()
                t4 = time.perf_counter()
                for key, secs in (
                    ("checkout", t1 - t0),
                    ("settings", t2 - t1),
                    ("statement", t3 - t2),
                    ("commit", t4 - t3),
                ):
                    samples[key].append(secs)

                with store.engine.connect() as conn:
                    tx = conn.begin()
                    conn.execute(sql_setup.set_tenant(user, store.ef_search))
                    compiled = stmt.compile(dialect=conn.dialect)
                    params = compiled.construct_params(values)
                    params["query_vector"] = sql_core.vector_literal(vector)
                    plan = conn.exec_driver_sql(
                        "EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled), params
                    ).scalar_one()
                    tx.rollback()  # EXPLAIN ANALYZE ran the use update: leave no trace
                samples["server_planning"].append(plan[0]["Planning Time"] / 1000)
                samples["server_execution"].append(plan[0]["Execution Time"] / 1000)
            traced = searches[: args.traced]
            exchanges = count_exchanges(
                store, lambda: [store.search(q, 10, user_id=u) for u, q, _ in traced]
            )
        finally:
            store.close()

    result: dict[str, Any] = {
        "command": "python benchmarks/search_overhead.py " + " ".join(sys.argv[1:]),
        "size": args.size,
        "users": args.users,
        "queries": args.queries,
        "load_1min": round(os.getloadavg()[0], 2),
        "exchanges_per_search": round(exchanges / max(1, len(traced)), 2),
        "p50_ms": {k: round(statistics.median(v) * 1000, 3) for k, v in samples.items()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


def count_exchanges(store: Any, work: Any) -> int:
    """Network exchanges of one more round of ``work()`` on warm connections: the
    waits for the server (:func:`waits`) in libpq's trace of each of the pool's
    connections (a file each: their buffers are written out at different times),
    for two rounds less one round, both from a fresh pool."""
    from psycopg import pq
    from sqlalchemy import event

    def bursts(rounds: int) -> int:
        with tempfile.TemporaryDirectory(prefix="memory-pg-trace-") as folder:

            def trace(_dbapi: Any, record: Any) -> None:
                log = Path(folder) / f"{id(record)}-{time.monotonic_ns()}.trace"
                fd = os.open(log, os.O_WRONLY | os.O_CREAT)
                pgconn = record.driver_connection.pgconn
                pgconn.trace(fd)  # libpq owns the descriptor now
                pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

            store.engine.dispose()
            event.listen(store.engine, "connect", trace)
            try:
                for _ in range(rounds):
                    work()
            finally:
                store.engine.dispose()  # closes the connections and their traces
                event.remove(store.engine, "connect", trace)
            total = 0
            for log in Path(folder).iterdir():
                total += waits(log.read_text())
            return total

    return bursts(2) - bursts(1)


def waits(trace: str) -> int:
    """How often a connection waited for the server, in libpq's trace of it: the
    frontend messages that ask for replies (``Query``, ``Sync``, a ``Flush`` not
    right after a ``Sync``). psycopg's pipeline mode reads early replies while it
    still sends, which is no wait: replies between messages are not counted."""
    kinds = [line.split("\t")[2] for line in trace.splitlines() if line.startswith("F\t")]
    return sum(
        1
        for i, kind in enumerate(kinds)
        if kind in ("Query", "Sync") or (kind == "Flush" and (i == 0 or kinds[i - 1] != "Sync"))
    )


if __name__ == "__main__":
    main()

"""A heavy user's search with the full-text leg bounded (LEXICAL_SCAN_MAX) beside unbounded.

One user holding ``--rows`` synthetic memories (``search_latency.py``'s fill:
random unit vectors, 12 words each from a Zipf-like vocabulary, so ``w0``..``w9``
are in a large share of the rows). Each query is searched with the bound and
without it (``LEXICAL_SCAN_MAX`` = 10**9, the previous statement), taking turns,
on the same data: server execution time (EXPLAIN ANALYZE) p50/p95 per side, and
what the bound costs in recall: the share of the unbounded search's top 10
that the bounded one also returns. A third side, ``windowed``, is the statement
with the bound and the time window on what is read (``PULL_WINDOW``: the
statement a store sends for a user it has seen holding more than the sample,
``--pull-window`` here); ``bounded`` is the bound alone (the statement of a
user's first search in a store, and of every search before the window).

``--step-s``: seconds between consecutive rows' ``created_at`` (0, the default:
every row written at one time, so the window never applies and "the most recent
4000" is an arbitrary 4000).

Three kinds of query: ``common``, three of the ten most common words (the
template text's worst case, every word common, so thousands of memories hold all
three); ``zipf``, words drawn like the rows'; ``pull``, five of ``w20``..``w199``
(each in 0.4-2% of the rows): no memory holds all five, so all five pull their
matches (the heavy user's slowest searches at 1M, benchmarks/README.md).

    python benchmarks/lexical_bound.py --rows 100000 --home /tmp/lex --keep
    python benchmarks/lexical_bound.py --rows 200000 --step-s 60 --home /tmp/lex2 --keep
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
from sqlalchemy.schema import CreateIndex

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.search_latency import fill  # noqa: E402
from memory_pg.sql import lexical, search  # noqa: E402
from memory_pg.sql.core import vector_literal  # noqa: E402
from memory_pg.sql.setup import set_tenant  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402
from memory_pg.tables import memories  # noqa: E402
from memory_pg.text.query import analyse  # noqa: E402

UNBOUNDED = 10**9
HNSW = "memory_pg_memories_embedding_hnsw_idx"


def main(argv: list[str] | None = None) -> int:
    """Fill (or reuse) the user, time both statements per query, write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--home", default=None)
    p.add_argument("--keep", action="store_true", help="reuse the rows when already there")
    p.add_argument("--step-s", type=float, default=0.0, help="seconds between rows' times")
    p.add_argument(
        "--pull-window", type=float, default=1.5, help="PULL_WINDOW of the windowed side"
    )
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "lexical_bound.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scratch = None if args.home else tempfile.mkdtemp(prefix="memory-pg-lex-")
    store = MemoryStore(
        home=args.home or scratch,
        embedding_model="all-MiniLM-L6-v2",
    )
    dim = 384
    user = "lexical-bench"
    rng = np.random.default_rng(11)
    bound = lexical.LEXICAL_SCAN_MAX
    window = lexical.PULL_WINDOW  # restored at the end
    sides = {
        "unbounded": (UNBOUNDED, 0.0),
        "bounded": (bound, 0.0),
        "windowed": (bound, args.pull_window),
    }
    report: dict[str, Any] = {
        "benchmark": "full-text leg bound, one heavy user",
        "rows": args.rows,
        "bound": bound,
        "pull_window": args.pull_window,
        "step_s": args.step_s,
        "command": "python benchmarks/lexical_bound.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{os.cpu_count()} cpus, shared",
        "load_average_before": os.getloadavg(),
    }
    try:
        with store.engine.begin() as c:
            c.execute(set_tenant(user))
            c.execute(text("SET LOCAL statement_timeout = 0"))
            have = c.execute(
                text("SELECT count(*) FROM memory_pg_memories WHERE user_id = :u"), {"u": user}
            ).scalar_one()
        if not (args.keep and have == args.rows):
            t0 = time.perf_counter()
            with store.engine.begin() as c:
                c.execute(text("SET LOCAL statement_timeout = 0"))
                c.execute(text("DELETE FROM memory_pg_memories WHERE user_id = :u"), {"u": user})
                # The graph is built after the rows, in bulk: inserting a million rows
                # into it one by one took most of an hour.
                c.execute(text("DROP INDEX IF EXISTS " + HNSW))
                fill(c, user, args.rows, dim, args.step_s)
            with store.engine.connect() as c:
                c.execution_options(isolation_level="AUTOCOMMIT").execute(
                    text("VACUUM ANALYZE memory_pg_memories")
                )
            report["fill_s"] = round(time.perf_counter() - t0, 1)
            print("filled", report["fill_s"], "s", flush=True)
        with store.engine.begin() as c:
            if c.execute(text("SELECT to_regclass('" + HNSW + "')")).scalar_one() is None:
                # Built here also when a run stopped between its fill and this.
                t0 = time.perf_counter()
                # Smaller than the graph (1M vectors: ~2 GB), the build spills and
                # slows several times over.
                c.execute(text("SET LOCAL maintenance_work_mem = '4GB'"))
                c.execute(text("SET LOCAL statement_timeout = 0"))
                c.execute(CreateIndex(next(i for i in memories.indexes if i.name == HNSW)))
                report["index_s"] = round(time.perf_counter() - t0, 1)
                print("indexed", report["index_s"], "s", flush=True)
        for kind in ("common", "zipf", "pull"):
            ms: dict[str, list[float]] = {side: [] for side in sides}
            overlap: dict[str, list[float]] = {"bounded": [], "windowed": []}
            same = 0  # queries whose windowed top 10 is the bounded one, in order
            for _ in range(args.queries):
                v = rng.standard_normal(dim).astype(np.float32)
                v /= np.linalg.norm(v)
                if kind == "common":
                    picks = rng.choice(10, size=3, replace=False)
                elif kind == "pull":
                    picks = rng.choice(np.arange(20, 200), size=5, replace=False)
                else:
                    picks = [int(rng.random() ** 3 * 20000) for _ in range(3)]
                words = " ".join(f"w{int(w)}" for w in picks)
                top: dict[str, list[Any]] = {}
                for side, (limit, span) in sides.items():
                    lexical.LEXICAL_SCAN_MAX, lexical.PULL_WINDOW = limit, span
                    stmt, values = search.search_statement(
                        user,
                        analyse(words),
                        v,
                        top_k=10,
                        filters=search.SearchFilters(),
                        ranking=store.ranking,
                        window=span > 0,
                    )
                    with store.engine.begin() as c:
                        c.execute(set_tenant(user, store.ef_search))
                        compiled = stmt.compile(dialect=c.dialect)
                        params: dict[str, Any] = compiled.construct_params(values)
                        params["query_vector"] = vector_literal(v)
                        top[side] = [r[0] for r in c.exec_driver_sql(str(compiled), params)]
                        row = c.exec_driver_sql(
                            "EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled), params
                        ).scalar_one()
                        ms[side].append(row[0]["Planning Time"] + row[0]["Execution Time"])
                lexical.LEXICAL_SCAN_MAX, lexical.PULL_WINDOW = bound, window
                same += top["windowed"] == top["bounded"]
                if top["unbounded"]:
                    for side, kept in overlap.items():
                        both = set(top[side]) & set(top["unbounded"])
                        kept.append(len(both) / len(top["unbounded"]))
            report[kind] = {
                side: {
                    "p50_ms": round(statistics.median(v), 1),
                    "p95_ms": round(float(np.percentile(v, 95)), 1),
                }
                for side, v in ms.items()
            }
            for side, kept in overlap.items():
                report[kind][f"top10_kept_{side}"] = round(statistics.mean(kept), 3)
            report[kind]["windowed_top10_same_as_bounded"] = f"{same} of {args.queries}"
            print(kind, report[kind], flush=True)
        report["load_average_after"] = os.getloadavg()
    finally:
        lexical.LEXICAL_SCAN_MAX, lexical.PULL_WINDOW = bound, window
        store.close()
        if scratch:  # a folder of our own: nothing to --keep
            shutil.rmtree(scratch, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

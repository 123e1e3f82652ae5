"""A heavy user's search with full matches first, beside the words always pulling.

One user holding ``--rows`` memories of the benchmark's template text
(``benchmarks/data.py``: every word is in thousands of the user's memories, the
full-text leg's worst case), with real vectors from the pool. Each query (a pool
text, as ``run.py`` asks) runs through the public ``MemoryStore.search`` twice,
the two sides taking turns on the same data:

* ``full matches first``: the shipped leg (``lexical.FULL_MATCHES_ENOUGH``);
* ``words always pull``: the same statement with that threshold out of reach, so
  the words pull the memories that hold only some of them, as before it existed
  (both sides score the vector leg's candidates, which came with the threshold).

Reported: store p50 / p95 / p99 per side, and what the first side costs in
results: the share of the second side's top 10 it also returns, how many top 10s
are the same in the same order, and how many have the same first hit.

    python benchmarks/full_matches.py --rows 100000 --home /tmp/fm --keep
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.data import build_dataset, embed_pool, make_texts  # noqa: E402
from benchmarks.systems import LookupEmbedder, MemoryPg  # noqa: E402
from memory_pg.sql import lexical  # noqa: E402

OUT_OF_REACH = 10**9


def _pct(xs: list[float], q: float) -> float:
    """The ``q``-th percentile of ``xs``, to 0.1 ms."""
    return round(float(np.percentile(xs, q)), 1)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Fill (or reuse) the user, run both sides per query, write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--pool", type=int, default=10_000, help="texts embedded for real")
    p.add_argument("--home", default=None, help="the embedded server's folder")
    p.add_argument("--keep", action="store_true", help="reuse the rows when already there")
    p.add_argument(
        "--database-url",
        default=None,
        help="a scratch database instead of --home: its memory tables are emptied "
        "unless --keep finds the rows",
    )
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "full_matches.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from memory_pg.embedding import get_embedder
    from memory_pg.store import MemoryStore

    real = get_embedder("all-MiniLM-L6-v2")
    pool = make_texts(min(args.pool, args.rows))
    vectors = embed_pool(
        [t for t, _ in pool],
        real.embed_documents,
        REPO / "benchmarks" / "results" / "tmp",
        real.model_name,
    )
    data = build_dataset("one", args.rows, 1, pool, vectors, queries=args.queries)
    lookup = LookupEmbedder(real)
    scratch = None  # a folder of our own, removed at the end
    if args.database_url:
        store = MemoryStore(args.database_url, embedder=lookup, auto_migrate=True)
    else:
        scratch = None if args.home else tempfile.mkdtemp(prefix="memory-pg-full-matches-")
        home = Path(args.home or scratch)
        home.mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o755)  # the embedded server may run as another user
        store = MemoryStore(home=home / "pg", embedder=lookup)
    system = MemoryPg(store, lookup, None)
    system.remember(data)
    for text, vec in zip(data.query_texts, data.query_vectors, strict=True):
        lookup.table[text] = vec
    user = data.users[0]
    enough = lexical.FULL_MATCHES_ENOUGH
    report: dict[str, Any] = {
        "benchmark": "full matches first, one heavy user, template text",
        "rows": args.rows,
        "full_matches_enough": enough,
        "command": "python benchmarks/full_matches.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{os.cpu_count()} cpus, shared",
        "load_average_before": list(os.getloadavg()),
    }
    try:
        if not (args.keep and store.stats(user_id=user)["memories"] == args.rows):
            t0 = time.perf_counter()
            system.reset()
            system.set_supersession(False)
            system.load_batched(data, np.arange(data.size))
            system.settle()
            report["fill_s"] = round(time.perf_counter() - t0, 1)
            print("filled", report["fill_s"], "s", flush=True)
        sides = {"full matches first": enough, "words always pull": OUT_OF_REACH}
        ms: dict[str, list[float]] = {side: [] for side in sides}
        tops: dict[str, list[list[Any]]] = {side: [] for side in sides}
        # Each side's statement is built and its pages read once before timing.
        for threshold in sides.values():
            lexical.FULL_MATCHES_ENOUGH = threshold
            for query in data.query_texts[:5]:
                store.search(query, top_k=10, user_id=user, track_access=False)
        for query in data.query_texts:
            for side, threshold in sides.items():
                lexical.FULL_MATCHES_ENOUGH = threshold
                t0 = time.perf_counter()
                hits = store.search(query, top_k=10, user_id=user, track_access=False)
                ms[side].append(1000 * (time.perf_counter() - t0))
                tops[side].append([h["id"] for h in hits])
        lexical.FULL_MATCHES_ENOUGH = enough
        pairs = list(zip(tops["full matches first"], tops["words always pull"], strict=True))
        report["store_ms"] = {
            side: {"p50": _pct(v, 50), "p95": _pct(v, 95), "p99": _pct(v, 99), "n": len(v)}
            for side, v in ms.items()
        }
        report["top10_kept"] = round(
            statistics.mean(len(set(a) & set(b)) / len(b) for a, b in pairs if b), 3
        )
        report["same_top10_in_order"] = sum(a == b for a, b in pairs)
        report["same_first_hit"] = sum(bool(a and b) and a[0] == b[0] for a, b in pairs)
        report["queries"] = len(pairs)
        report["load_average_after"] = list(os.getloadavg())
    finally:
        lexical.FULL_MATCHES_ENOUGH = enough
        store.close()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()

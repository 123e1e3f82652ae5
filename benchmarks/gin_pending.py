"""A heavy user's search while memories keep arriving: the GIN pending list on and off.

A GIN index with ``fastupdate`` on (PostgreSQL's default, memory-pg's until
migration 0011) keeps new entries in an unordered pending list that every scan of
the index reads in full, until the list passes ``gin_pending_list_limit`` (4 MB)
and the write that pushed it merges it, or a vacuum does, or an ANALYZE that
autovacuum runs. A user holding more
memories than the full-text leg's sample (``lexical.IDF_SAMPLE``) has the index
read on every search. This loads ``run.py``'s heavy user (``build_dataset``, one
user, ``--rows`` rows from ``--pool`` pool texts, precomputed vectors, supersession
off as in ``run.py``'s bulk load), ``VACUUM ANALYZE``, then runs blocks of traffic
with the index's ``fastupdate`` on and off in turn (``on, off`` then ``off, on``,
``--rounds`` times), each block starting from a merged list:

* ``--writes`` new memories of that user through ``MemoryStore.add_memories``,
  ``--batch`` per call (an agent's write after a turn), copies of the user's texts
  with a new suffix and the same vectors;
* after every ``--search-every``-th call, one search of that user through
  ``MemoryStore.search`` (the query vector precomputed), timed;
* at the block's end, the pages left in the list (``gin_clean_pending_list``,
  which merges them, untimed) and how many times autovacuum vacuumed and
  analyzed the table during the block (it runs as configured, and either merges
  the list).

Supersession stays off for the writes too (the new rows are near-copies of the
user's rows, which it would replace): the write times are an insert's, without
the lookup for what a memory replaces.

The index is left with ``fastupdate`` off (the schema's state since 0011).

    python benchmarks/gin_pending.py --rows 100000 --writes 30000 --rounds 2 \\
        --out benchmarks/results/gin_pending.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import build_dataset  # noqa: E402
from benchmarks.forget_bench import percentiles  # noqa: E402
from benchmarks.systems import lookup_of, real_pool  # noqa: E402
from memory_pg.config import SupersedePolicy  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

SET_MODE = {
    "on": text("ALTER INDEX memory_pg_memories_search_tsv_idx SET (fastupdate = on)"),
    "off": text("ALTER INDEX memory_pg_memories_search_tsv_idx SET (fastupdate = off)"),
}
MERGE = text("SELECT gin_clean_pending_list('memory_pg_memories_search_tsv_idx'::regclass)")
AUTOVACUUMS = text(
    "SELECT autovacuum_count, autoanalyze_count FROM pg_stat_user_tables "
    "WHERE relname = 'memory_pg_memories'"
)


def _block(
    store: MemoryStore,
    lookup: Any,
    admin: Any,
    data: Any,
    mode: str,
    tag: str,
    seed: int,
    args: Any,
) -> dict:
    """One block of writes and searches with ``fastupdate`` = ``mode``; ``seed`` picks
    which of the user's texts its writes copy."""
    with admin.begin() as conn:
        conn.execute(SET_MODE[mode])
        conn.execute(MERGE)
        vacuums_before, analyzes_before = conn.execute(AUTOVACUUMS).one()
    user = data.users[0]
    rng = np.random.default_rng(seed)
    searches: list[float] = []
    writes: list[float] = []
    calls = args.writes // args.batch
    for call in range(calls):
        rows = rng.integers(0, data.size, size=args.batch)
        items = []
        for j, i in enumerate(rows.tolist()):
            new = f"{data.texts[i]} ~{tag}-{call}-{j}"
            lookup.table[new] = data.vectors[i]
            items.append({"text": new, "memory_type": data.types[i]})
        t0 = time.perf_counter()
        store.add_memories(items, user_id=user)
        writes.append((time.perf_counter() - t0) * 1000)
        if call % args.search_every == 0:
            q = (call // args.search_every) % len(data.query_texts)
            t0 = time.perf_counter()
            store.search(data.query_texts[q], 10, user_id=user)
            searches.append((time.perf_counter() - t0) * 1000)
    with admin.begin() as conn:
        pending = conn.execute(MERGE).scalar_one()
        vacuums, analyzes = conn.execute(AUTOVACUUMS).one()
    return {
        "fastupdate": mode,
        "memories_written": calls * args.batch,
        "search_ms": percentiles(searches),
        "search_mean_ms": round(float(np.mean(searches)), 2),
        "write_call_ms": {**percentiles(writes), "max_ms": round(max(writes), 1)},
        "pending_pages_at_end": pending,
        "autovacuums_during": vacuums - vacuums_before,
        "autoanalyzes_during": analyzes - analyzes_before,
    }


def _summary(blocks: list[dict]) -> dict[str, Any]:
    """Per mode: the median of the blocks' figures."""
    out: dict[str, Any] = {}
    for mode in ("on", "off"):
        mine = [b for b in blocks if b["fastupdate"] == mode]
        out[mode] = {
            "search_p50_ms": float(np.median([b["search_ms"]["p50_ms"] for b in mine])),
            "search_p95_ms": float(np.median([b["search_ms"]["p95_ms"] for b in mine])),
            "search_mean_ms": float(np.median([b["search_mean_ms"] for b in mine])),
            "write_p50_ms": float(np.median([b["write_call_ms"]["p50_ms"] for b in mine])),
            "write_p99_ms": float(np.median([b["write_call_ms"]["p99_ms"] for b in mine])),
            "write_max_ms": max(b["write_call_ms"]["max_ms"] for b in mine),
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Load, run the blocks; print, write (``--out``) and return the report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000, help="the heavy user's memories")
    p.add_argument("--pool", type=int, default=10_000, help="pool texts (as run.py)")
    p.add_argument("--writes", type=int, default=30_000, help="memories written per block")
    p.add_argument("--batch", type=int, default=2, help="memories per add_memories call")
    p.add_argument("--search-every", type=int, default=10, help="calls between searches")
    p.add_argument("--rounds", type=int, default=1, help="(on, off) pairs, order alternating")
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--database-url", help="an owner's URL of a scratch database it may fill")
    p.add_argument("--out")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    real, texts, vectors = real_pool(args.pool)
    data = build_dataset("gin", args.rows, 1, texts, vectors, queries=args.queries)
    scratch, server = "", None
    url = args.database_url
    if url is None:
        from memory_pg.server import EmbeddedServer

        scratch = tempfile.mkdtemp(prefix="memory-pg-gin-")
        os.chmod(scratch, 0o755)  # the embedded server may run as another user
        server = EmbeddedServer(Path(scratch))
        url = server.start()
    url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    admin = create_engine(url)
    lookup = lookup_of(real, data)
    store = MemoryStore(url, embedder=lookup, auto_migrate=True)
    report: dict[str, Any] = {
        "command": "python benchmarks/gin_pending.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "rows": args.rows,
        "writes_per_block": args.writes,
        "batch": args.batch,
        "search_every": args.search_every,
        "load_average_start": round(os.getloadavg()[0], 2),
    }
    try:
        store.supersede = SupersedePolicy(enabled=False)  # as run.py's bulk load
        started = time.perf_counter()
        for user, ix in data.user_batches(500):
            items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
            store.add_memories(items, user_id=user)
        with admin.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM ANALYZE memory_pg_memories")
            )
        report["load_s"] = round(time.perf_counter() - started, 1)
        blocks = []
        for r in range(args.rounds):
            for mode in ("on", "off") if r % 2 == 0 else ("off", "on"):
                blocks.append(
                    _block(store, lookup, admin, data, mode, f"{mode}{r}", len(blocks), args)
                )
                print(json.dumps(blocks[-1]), flush=True)
        report["blocks"] = blocks
        report["summary"] = _summary(blocks)
        report["load_average_end"] = round(os.getloadavg()[0], 2)
    finally:
        with admin.begin() as conn:
            conn.execute(SET_MODE["off"])
        store.close()
        admin.dispose()
        if server is not None:
            server.stop()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()

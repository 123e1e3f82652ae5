"""Where ingest time goes: ``add_memories`` in calls of 500, timed and optionally profiled.

The texts are ``run.py``'s end-to-end ingest texts (``make_texts(size, seed=99)``),
all written for one user as its ``ingest_e2e`` does. Modes:

* ``precomputed``: vectors embedded once beforehand (cached in
  ``benchmarks/results/tmp``), so only memory-pg's own work is timed;
* ``model``: the bundled model embeds each call's texts, as shipped. Each call's
  texts are also embedded alone just before it (raw embedding), so the ratio of
  the two compares them under the same load, call by call: on shared cores the
  raw rate drifts by 2x within minutes.

Each mode runs with supersession on (as shipped) and off. Each run also reports
CPU time per stored memory: the embedded server's processes (``/proc``, the
postmaster and its children, exited ones included) and this process (memory-pg's
Python), beside the model's CPU per text (one thread pool, ``embed_documents`` on
500 of the texts, measured once): issue 18 item 4 judges ingest by the database's
share. Example (from the repository root)::

    PYTHONPATH=. python benchmarks/ingest_profile.py --size 10000 --mode precomputed \\
        --profile /tmp/ingest.prof

prints one JSON line per run; ``--profile`` writes a cProfile of each
supersession-on run (``python -m pstats``); ``--drop-index NAME`` drops an index of
the memories table first, to see what it costs per stored memory (a measurement
only: the store's searches need them). Runs on a fresh embedded server in a
temporary folder, or on ``--database-url`` (a scratch database: its memory tables
are emptied).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from benchmarks.data import embed_pool, make_texts
from benchmarks.systems import LookupEmbedder


def main() -> None:
    """Run the chosen modes and print one JSON line per run."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--mode", choices=("precomputed", "model", "both"), default="both")
    p.add_argument("--supersession", choices=("on", "off", "both"), default="both")
    p.add_argument("--profile", help="cProfile output prefix (supersession-on runs)")
    p.add_argument("--database-url")
    p.add_argument(
        "--drop-index",
        action="append",
        default=[],
        metavar="NAME",
        help="drop this index of the memories table before the runs (repeatable): what "
        "one index costs per stored memory, e.g. memory_pg_memories_embedding_hnsw_idx",
    )
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from memory_pg._segment import segment
    from memory_pg.config import SupersedePolicy
    from memory_pg.embedding import get_embedder
    from memory_pg.store import MemoryStore

    pairs = make_texts(args.size, seed=99)
    texts = [t for t, _ in pairs]
    types = [k for _, k in pairs]
    real = get_embedder("all-MiniLM-L6-v2")
    lookup = LookupEmbedder(real)
    modes = ["precomputed", "model"] if args.mode == "both" else [args.mode]
    switches = [True, False] if args.supersession == "both" else [args.supersession == "on"]
    # One-time costs stay out of the timings: loading the model (the lookup embedder
    # asks it for its dimension) and jieba's dictionary.
    real.embed_documents(texts[:64])
    segment("预热")
    vectors = None
    if "precomputed" in modes:
        cache = Path("benchmarks/results/tmp")
        cache.mkdir(parents=True, exist_ok=True)
        vectors = embed_pool(texts, real.embed_documents, cache, real.model_name)

    # The model's CPU per text, in calls of --batch texts as add_memories makes them.
    sample = texts[: min(len(texts), 500)]
    c0 = time.process_time()
    for start in range(0, len(sample), args.batch):
        real.embed_documents(sample[start : start + args.batch])
    model_cpu_ms = (time.process_time() - c0) * 1000 / len(sample)

    with tempfile.TemporaryDirectory(prefix="memory-pg-ingest-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        if args.database_url:
            store = MemoryStore(args.database_url, embedder=lookup, auto_migrate=True)
        else:
            store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
        dropped: list[str] = []
        try:
            dropped = _drop_indexes(store, args.drop_index)
            for mode in modes:
                lookup.table = {}
                if mode == "precomputed" and vectors is not None:
                    lookup.table = dict(zip(texts, vectors, strict=True))
                for on in switches:
                    server = None if args.database_url else Path(tmp)
                    out = _run(store, real, texts, types, args, mode, on, SupersedePolicy, server)
                    out["model_cpu_ms_per_text"] = round(model_cpu_ms, 3)
                    if out.get("server_cpu_ms_per_memory") is not None:
                        db = out["server_cpu_ms_per_memory"]
                        out["server_cpu_share_of_model"] = round(db / model_cpu_ms, 3)
                        out["server_and_client_cpu_share_of_model"] = round(
                            (db + out["client_cpu_ms_per_memory"]) / model_cpu_ms, 3
                        )
                    print(json.dumps(out), flush=True)
        finally:
            if args.database_url:
                _restore_indexes(store, dropped)
            store.close()


def _drop_indexes(store: Any, names: list[str]) -> list[str]:
    """Drop the named indexes of the memories table; returns their definitions, for
    :func:`_restore_indexes`."""
    from sqlalchemy import bindparam

    found = text(
        "SELECT format('DROP INDEX %I.%I', schemaname, indexname), indexdef FROM pg_indexes "
        "WHERE schemaname = current_schema() AND tablename = 'memory_pg_memories' "
        "AND indexname = :name"
    )
    definitions = []
    with store.engine.begin() as conn:
        for name in names:
            row = conn.execute(found.bindparams(bindparam("name", name))).one_or_none()
            if row is None:
                raise SystemExit(f"no index {name!r} on memory_pg_memories")
            conn.exec_driver_sql(row[0])  # a name quoted by the server, no parameters
            definitions.append(row[1])
    return definitions


def _restore_indexes(store: Any, definitions: list[str]) -> None:
    """Build the dropped indexes again (a ``--database-url`` database outlives the run)."""
    with store.engine.begin() as conn:
        for definition in definitions:
            conn.exec_driver_sql(definition)


def _run(
    store: Any,
    real: Any,
    texts: list[str],
    types: list[str],
    args: argparse.Namespace,
    mode: str,
    on: bool,
    policy: Any,
    server: Path | None,
) -> dict[str, Any]:
    with store.engine.begin() as conn:
        conn.execute(
            text(
                "TRUNCATE memory_pg_memories, memory_pg_history, memory_pg_memory_entities, "
                "memory_pg_memory_links, memory_pg_entities"
            )
        )
    store.supersede = policy(enabled=on)
    prof = cProfile.Profile() if args.profile and on else None
    ingest = raw = 0.0
    server0, client0 = server_cpu_s(server), time.process_time()
    for start in range(0, args.size, args.batch):
        chunk = slice(start, start + args.batch)
        if mode == "model":
            t0 = time.perf_counter()
            real.embed_documents(texts[chunk])
            raw += time.perf_counter() - t0
        items = [
            {"text": t, "memory_type": k} for t, k in zip(texts[chunk], types[chunk], strict=True)
        ]
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        store.add_memories(items, user_id="bench-e2e")
        if prof:
            prof.disable()
        ingest += time.perf_counter() - t0
    server1, client1 = server_cpu_s(server), time.process_time()
    if prof:
        prof.dump_stats(f"{args.profile}.{mode}")
    with store.engine.connect() as conn:
        current = conn.execute(
            text("SELECT count(*) FROM memory_pg_memories WHERE superseded_at IS NULL")
        ).scalar_one()
    out: dict[str, Any] = {
        "mode": mode,
        "supersession": on,
        "size": args.size,
        "seconds": round(ingest, 2),
        "per_s": round(args.size / ingest, 1),
        "current": current,
        "load_1min": round(os.getloadavg()[0], 2),
        "dropped_indexes": args.drop_index,
    }
    if mode == "model":
        out["raw_embedding_per_s"] = round(args.size / raw, 1)
        out["vs_raw_embedding"] = round(raw / ingest, 3)
    # This process's CPU includes the model's when it embeds (mode "model").
    out["client_cpu_ms_per_memory"] = round((client1 - client0) * 1000 / args.size, 3)
    if server0 is not None and server1 is not None:
        out["server_cpu_ms_per_memory"] = round((server1 - server0) * 1000 / args.size, 3)
    return out


def server_cpu_s(home: Path | None) -> float | None:
    """CPU seconds used so far by the embedded server under ``home``: the postmaster,
    its live children, and (``cutime``/``cstime``) the children that have exited."""
    if home is None:
        return None
    pidfile = next(home.rglob("postmaster.pid"), None)
    if pidfile is None:
        return None
    postmaster = int(pidfile.read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15]) / tick  # utime stime cutime cstime
        elif ppid == postmaster:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


if __name__ == "__main__":
    main()

"""Where ingest time goes: ``add_memories`` in calls of 500, timed and optionally profiled.

The texts are ``run.py``'s end-to-end ingest texts (``make_texts(size, seed=99)``),
all written for one user as its ``ingest_e2e`` does. Modes:

* ``precomputed``: vectors embedded once beforehand (cached in
  ``benchmarks/results/tmp``), so only memory-pg's own work is timed;
* ``model``: the bundled model embeds each call's texts, as shipped. Each call's
  texts are also embedded alone just before it (raw embedding), so the ratio of
  the two compares them under the same load, call by call: on shared cores the
  raw rate drifts by 2x within minutes.

Each mode runs with supersession on (as shipped) and off. Example (from the
repository root)::

    PYTHONPATH=. python benchmarks/ingest_profile.py --size 10000 --mode precomputed \\
        --profile /tmp/ingest.prof

prints one JSON line per run; ``--profile`` writes a cProfile of each
supersession-on run (``python -m pstats``). Runs on a fresh embedded server in a
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

    with tempfile.TemporaryDirectory(prefix="memory-pg-ingest-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        if args.database_url:
            store = MemoryStore(args.database_url, embedder=lookup, auto_migrate=True)
        else:
            store = MemoryStore(home=Path(tmp) / "pg", embedder=lookup)
        try:
            for mode in modes:
                lookup.table = {}
                if mode == "precomputed" and vectors is not None:
                    lookup.table = dict(zip(texts, vectors, strict=True))
                for on in switches:
                    out = _run(store, real, texts, types, args, mode, on, SupersedePolicy)
                    print(json.dumps(out), flush=True)
        finally:
            store.close()


def _run(
    store: Any,
    real: Any,
    texts: list[str],
    types: list[str],
    args: argparse.Namespace,
    mode: str,
    on: bool,
    policy: Any,
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
    }
    if mode == "model":
        out["raw_embedding_per_s"] = round(args.size / raw, 1)
        out["vs_raw_embedding"] = round(raw / ingest, 3)
    return out


if __name__ == "__main__":
    main()

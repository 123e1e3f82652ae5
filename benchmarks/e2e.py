"""A search as a user sees it, query embedding included: torch beside ONNX Runtime, same run.

Three ways to embed the query: ``torch`` (sentence-transformers), ``onnx`` (the
float32 export, ``MEMORY_PG_QUERY_PRECISION=float32``) and ``onnx-int8`` (its local
int8 copy, the default for queries). Stored texts are float32 in all three.

Two users on one embedded server: one holding a LoCoMo conversation (``conv-43``,
680 turns, one memory per turn with its session time) and one holding 10 memories
(its first 10 turns). Every question of the conversation is asked once per
backend, the backends taking turns query by query so both see the same load;
each question is new to each backend's cache of recent query vectors (``new``:
the figures include the embedding). A second pass asks the same questions again
(``repeat``: the query vector comes from the cache).

Ingest: the conversation stored through ``add_memories`` in batches of
``--batch`` by each backend (memories/s), beside the model's raw rate on the same
texts (``embed_documents`` alone).

    python benchmarks/e2e.py                       # writes benchmarks/results/e2e.json
    python benchmarks/e2e.py --questions 100 --out /tmp/e2e.json

Not a test: a measurement; the machine's load is in the JSON beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.locomo import DEFAULT_DATA, turns_of  # noqa: E402

BACKENDS = ("torch", "onnx", "onnx-int8")


def pct(values: list[float], q: float) -> float:
    """The q-quantile of ``values`` in milliseconds, one decimal."""
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def summary(values: list[float]) -> dict[str, float]:
    """p50 / p95 in milliseconds and the count."""
    return {
        "p50_ms": round(1000 * statistics.median(values), 1),
        "p95_ms": pct(values, 0.95),
        "n": len(values),
    }


def main(argv: list[str] | None = None) -> int:
    """Load the users, time ingest and searches per backend, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="locomo_dev.json")
    p.add_argument("--conversation", default="conv-43")
    p.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    p.add_argument("--batch", type=int, default=50, help="memories per add_memories call")
    p.add_argument(
        "--ingest-sample", type=int, default=200, help="turns stored per backend to time ingest"
    )
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "e2e.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from memory_pg.embedding import get_embedder
    from memory_pg.store import MemoryStore

    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    sample = next(s for s in data if s["sample_id"] == args.conversation)
    turns = turns_of(sample["conversation"])
    items = [
        {"text": f"{t.speaker}: {t.text}", "memory_type": "dialogue", "event_time": t.when}
        for t in turns
    ]
    questions = list(dict.fromkeys(qa["question"] for qa in sample["qa"]))
    if args.questions:
        questions = questions[: args.questions]
    from memory_pg.onnx_embedding import OnnxEmbedder

    embedders: dict[str, Any] = {
        "torch": get_embedder("all-MiniLM-L6-v2", backend="torch"),
        "onnx": OnnxEmbedder(query_precision="float32"),
        "onnx-int8": OnnxEmbedder(query_precision="int8"),
    }
    for e in embedders.values():  # load (and export) before any clock starts
        e.embed_documents(["warm-up"])
        e.embed_query("warm-up")

    report: dict[str, Any] = {
        "benchmark": "search end to end (query embedding included) and ingest",
        "command": "python benchmarks/e2e.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "load_average_before": os.getloadavg(),
        "conversation": args.conversation,
        "memories": len(items),
        "questions": len(questions),
    }
    sample_items = items[: args.ingest_sample]
    texts = [str(i["text"]) for i in sample_items]
    home = tempfile.mkdtemp(prefix="memory-pg-e2e-")
    store = MemoryStore(home=home, embedder=embedders["onnx"])
    try:
        ingest: dict[str, Any] = {}
        # Ingest embeds stored texts: float32 for both ONNX ways, so timed once.
        for backend, embedder in list(embedders.items())[:2] if texts else ():
            t0 = time.perf_counter()
            embedder.embed_documents(texts)
            raw = time.perf_counter() - t0
            store.embedder = embedder
            t0 = time.perf_counter()
            for start in range(0, len(sample_items), args.batch):
                batch = sample_items[start : start + args.batch]
                store.add_memories(batch, user_id=f"ingest-{backend}")
            took = time.perf_counter() - t0
            ingest[backend] = {
                "texts": len(texts),
                "model_raw_texts_per_s": round(len(texts) / raw, 1),
                "ingest_memories_per_s": round(len(texts) / took, 1),
                "ingest_share_of_raw": round(raw / took, 2),
            }
            print(backend, ingest[backend], flush=True)
        report["ingest"] = ingest
        store.embedder = embedders["onnx"]  # the same vectors as torch's (tests/unit)
        for start in range(0, len(items), 100):
            store.add_memories(items[start : start + 100], user_id="conversation")
        store.add_memories(items[:10], user_id="light")

        users = {"conversation": "conversation", "ten_memories": "light"}
        timings: dict[str, dict[str, list[float]]] = {
            f"{u}/{b}/{p}": {"t": []} for u in users for b in BACKENDS for p in ("new", "repeat")
        }
        for who, uid in users.items():
            for embedder in embedders.values():
                embedder.query_cache.clear()  # type: ignore[attr-defined]
            # The questions are distinct: "new" embeds each; "repeat" finds it cached.
            for phase in ("new", "repeat"):
                for q in questions:
                    for backend in BACKENDS:
                        store.embedder = embedders[backend]
                        t0 = time.perf_counter()
                        store.search(q, user_id=uid, top_k=10)
                        timings[f"{who}/{backend}/{phase}"]["t"].append(time.perf_counter() - t0)
        # The query embedding alone, on the same questions (each new to the cache).
        bare: dict[str, list[float]] = {b: [] for b in BACKENDS}
        for q in questions:
            for backend, embedder in embedders.items():
                embedder.query_cache.clear()
                t0 = time.perf_counter()
                embedder.embed_query(q)
                bare[backend].append(time.perf_counter() - t0)
        report["search"] = {k: summary(v["t"]) for k, v in timings.items()}
        report["query_embedding_alone"] = {b: summary(v) for b, v in bare.items()}
        report["ratio_p50_torch_over_onnx"] = {
            who: round(
                report["search"][f"{who}/torch/new"]["p50_ms"]
                / report["search"][f"{who}/onnx/new"]["p50_ms"],
                2,
            )
            for who in users
        }
        report["ratio_p50_onnx_over_onnx_int8"] = {
            who: round(
                report["search"][f"{who}/onnx/new"]["p50_ms"]
                / report["search"][f"{who}/onnx-int8/new"]["p50_ms"],
                2,
            )
            for who in users
        }
        report["load_average_after"] = os.getloadavg()
    finally:
        store.close()
        shutil.rmtree(home, ignore_errors=True)  # the embedded server's files
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for key, value in report["search"].items():
        print(f"{key:32s} p50 {value['p50_ms']:6.1f} ms  p95 {value['p95_ms']:6.1f} ms")
    print("query embedding alone", report["query_embedding_alone"])
    print("p50 ratio torch/onnx", report["ratio_p50_torch_over_onnx"])
    print("p50 ratio onnx/onnx-int8", report["ratio_p50_onnx_over_onnx_int8"])
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

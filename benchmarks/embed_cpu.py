"""CPU time of one query embedding: torch, ONNX Runtime float32 and its int8 copy, one thread.

CPU time of the calling thread (``time.thread_time``) does not grow with the
machine's load as wall time does, so the ratio holds on a shared machine. Each
backend embeds the same LoCoMo questions (first ``--questions``), taking turns.

    python benchmarks/embed_cpu.py --data /work/shared/bench/locomo_dev.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.locomo import DEFAULT_DATA  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Time both backends on the same questions; print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "embed_cpu.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from memory_pg.config import BUNDLED_EMBEDDING_MODEL
    from memory_pg.embedding import SentenceTransformerEmbedder
    from memory_pg.onnx_embedding import OnnxEmbedder

    torch.set_num_threads(1)
    backends = {
        "torch": SentenceTransformerEmbedder(BUNDLED_EMBEDDING_MODEL),
        "onnx": OnnxEmbedder(threads=1, query_precision="float32"),
        "onnx-int8": OnnxEmbedder(threads=1, query_precision="int8"),
    }
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    questions = list(dict.fromkeys(qa["question"] for s in data for qa in s["qa"]))
    questions = questions[: args.questions]
    for e in backends.values():
        e.embed_documents(["warm-up"])
        e.embed_query("warm-up")
    cpu: dict[str, list[float]] = {b: [] for b in backends}
    wall: dict[str, list[float]] = {b: [] for b in backends}
    for q in questions:
        for name, e in backends.items():
            e.query_cache.clear()  # each question new to the cache
            w0, c0 = time.perf_counter(), time.thread_time()
            e.embed_query(q)
            cpu[name].append(time.thread_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    report = {
        "benchmark": "query embedding CPU time, one thread each",
        "command": "python benchmarks/embed_cpu.py " + " ".join(argv or sys.argv[1:]),
        "questions": len(questions),
        "load_average": os.getloadavg(),
        "cpu_ms_p50": {b: round(1000 * statistics.median(v), 2) for b, v in cpu.items()},
        "wall_ms_p50": {b: round(1000 * statistics.median(v), 2) for b, v in wall.items()},
    }
    report["cpu_ratio_torch_over_onnx"] = round(
        report["cpu_ms_p50"]["torch"] / report["cpu_ms_p50"]["onnx"], 2
    )
    report["cpu_ratio_onnx_over_onnx_int8"] = round(
        report["cpu_ms_p50"]["onnx"] / report["cpu_ms_p50"]["onnx-int8"], 2
    )
    # How close the int8 copy's query vectors are to the float32 model's (which
    # embedded the stored texts): cosine per question.
    cosines = [
        float(backends["onnx-int8"].embed_query(q) @ backends["onnx"].embed_query(q))
        for q in questions
    ]
    report["int8_cosine_to_float32"] = {
        "min": round(min(cosines), 4),
        "mean": round(statistics.mean(cosines), 4),
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""ONNX Runtime's vectors beside torch's on a LoCoMo conversation: cosine, and top 5 by cosine.

Every turn ("speaker: text") and question of the first conversation is embedded
by both backends; reported: the lowest and mean cosine between the two vectors
of each text, and for how many questions the plain-cosine top 5 turns are the
same list. Same vectors mean the same ranking, so LoCoMo's recall is unchanged.

    python benchmarks/onnx_agreement.py --data /work/shared/bench/locomo_dev.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.locomo import DEFAULT_DATA, turns_of  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Embed with both backends, compare, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "onnx_agreement.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from memory_pg.embedding import get_embedder

    sample = json.loads(Path(args.data).read_text(encoding="utf-8"))[0]
    docs = [f"{t.speaker}: {t.text}" for t in turns_of(sample["conversation"])]
    questions = [qa["question"] for qa in sample["qa"]]
    torch_v = get_embedder("bundled", backend="torch").embed_documents(docs + questions)
    onnx_v = get_embedder("bundled", backend="onnx").embed_documents(docs + questions)
    cosine = (torch_v * onnx_v).sum(axis=1)
    n = len(docs)
    same = sum(
        list(np.argsort(-(torch_v[:n] @ torch_v[n + i]))[:5])
        == list(np.argsort(-(onnx_v[:n] @ onnx_v[n + i]))[:5])
        for i in range(len(questions))
    )
    report = {
        "benchmark": "ONNX vs torch vectors, one LoCoMo conversation",
        "command": "python benchmarks/onnx_agreement.py " + " ".join(argv or sys.argv[1:]),
        "conversation": sample["sample_id"],
        "texts": len(docs) + len(questions),
        "min_cosine": round(float(cosine.min()), 7),
        "mean_cosine": round(float(cosine.mean()), 7),
        "questions_with_the_same_cosine_top5": f"{same}/{len(questions)}",
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

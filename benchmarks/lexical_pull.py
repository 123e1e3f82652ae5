"""A small user's full-text leg with and without the pull rule, on a real conversation.

A user holding 100 to 1000 memories has them all in the IDF sample; a word in more
than ``SMALL_PULL_MAX_SHARE`` of them no longer pulls full-text candidates (it still
scores). This stores one LoCoMo conversation (``--conversation``, one memory per
turn, the ONNX model) and times ``MemoryStore.search`` over its questions, p50 /
p95, with the rule (``small_pull``) and without it (``all_pull``: every word
pulls, as before), taking turns in blocks of 20 questions. The query vectors come
from the store's cache after a first pass, so the figures are the search's own.

    python benchmarks/lexical_pull.py --out benchmarks/results/lexical_pull.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.locomo import DEFAULT_DATA, turns_of  # noqa: E402
from benchmarks.systems import timing_summary, write_result  # noqa: E402


def main() -> None:
    """Store the conversation, time both ways, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--conversation", default="conv-43")
    p.add_argument("--block", type=int, default=20)
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "lexical_pull.json"))
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from sqlalchemy import text

    from memory_pg.embedding import get_embedder
    from memory_pg.sql import lexical
    from memory_pg.store import MemoryStore

    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    sample = next(s for s in data if s["sample_id"] == args.conversation)
    items = [
        {"text": f"{t.speaker}: {t.text}", "memory_type": "dialogue", "event_time": t.when}
        for t in turns_of(sample["conversation"])
    ]
    questions = list(dict.fromkeys(qa["question"] for qa in sample["qa"]))
    rule = lexical.SMALL_PULL_MIN
    samples: dict[str, list[float]] = {"small_pull": [], "all_pull": []}
    with tempfile.TemporaryDirectory(prefix="memory-pg-pull-") as tmp:
        os.chmod(tmp, 0o755)  # the embedded server may run as another user
        store = MemoryStore(home=Path(tmp) / "pg", embedder=get_embedder("all-MiniLM-L6-v2"))
        try:
            for start in range(0, len(items), 100):
                store.add_memories(items[start : start + 100], user_id="conversation")
            with store.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(text("VACUUM ANALYZE memory_pg_memories"))
            for q in questions:  # embeds each question once (the store's query cache)
                store.search(q, user_id="conversation", top_k=10, track_access=False)
            for start in range(0, len(questions), args.block):
                for way in samples:
                    lexical.SMALL_PULL_MIN = rule if way == "small_pull" else 10**9
                    for q in questions[start : start + args.block]:
                        t0 = time.perf_counter()
                        store.search(q, user_id="conversation", top_k=10, track_access=False)
                        samples[way].append(time.perf_counter() - t0)
        finally:
            lexical.SMALL_PULL_MIN = rule
            store.close()

    result: dict[str, Any] = {
        "command": "python benchmarks/lexical_pull.py " + " ".join(sys.argv[1:]),
        "conversation": args.conversation,
        "memories": len(items),
        "questions": len(questions),
        "load_1min": round(os.getloadavg()[0], 2),
        **timing_summary(samples),
    }
    write_result(args.out, result)


if __name__ == "__main__":
    main()

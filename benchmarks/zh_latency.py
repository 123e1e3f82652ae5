"""A Chinese search end to end, with and without the query's sounds and characters.

One user holds the messages of the Chinese dev sets (``zh_questions_v3``,
``zh_noisy``, ``zh_attr``: 1,200 by default) and is asked their questions through
``MemoryStore.search``, in turns with the text layer's ``PINYIN`` switch off (the
query asks its words only) and on (the default). The memories are indexed the same
way in both: only the query's terms change. Prints p50 and p95 per turn.

    python benchmarks/zh_latency.py
    python benchmarks/zh_latency.py --memories 1200 --questions 200 --turns 2

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

REPO = Path(__file__).resolve().parents[1]
try:
    import memory_pg  # noqa: F401  (the venv's own checkout)
except ImportError:  # pragma: no cover - run from a plain python
    sys.path.insert(0, str(REPO))

from memory_pg import _segment  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

SETS = ("zh_questions_v3.json", "zh_noisy.json", "zh_attr.json")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memories", type=int, default=1200)
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--turns", type=int, default=2, help="rounds of off, then on")
    p.add_argument("--database-url", default=os.environ.get("MEMORY_PG_DATABASE_URL"))
    args = p.parse_args(argv)

    texts: list[str] = []
    questions: list[str] = []
    for name in SETS:
        for user in json.loads((REPO / "benchmarks" / name).read_text(encoding="utf-8"))["users"]:
            texts += [m["text"] for m in user["messages"]]
            questions += [q["question"] for q in user["questions"]]
    texts, questions = texts[: args.memories], questions[: args.questions]
    home = None if args.database_url else tempfile.mkdtemp(prefix="memory-pg-zhlat-")
    where = {"home": home} if home else {"url": args.database_url, "auto_migrate": True}
    try:
        with MemoryStore(user_id="zh-latency", **where) as store:
            store.add_memories([{"text": t, "memory_type": "dialogue"} for t in texts])
            for q in questions[:20]:  # statements built, model and dictionaries loaded
                store.search(q, top_k=5, track_access=False)
            print(f"{len(texts)} memories, {len(questions)} questions")
            for _ in range(args.turns):
                for on in (False, True):
                    _segment.PINYIN = on
                    ms = []
                    for q in questions:
                        started = time.perf_counter()
                        store.search(q, top_k=5, track_access=False)
                        ms.append((time.perf_counter() - started) * 1000)
                    ms.sort()
                    print(
                        f"{'sounds and characters' if on else 'words only':22s} "
                        f"p50 {ms[len(ms) // 2]:.1f} ms  p95 {ms[int(len(ms) * 0.95)]:.1f} ms"
                    )
            store.clear_user_memory()
    finally:
        _segment.PINYIN = True
        if home:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

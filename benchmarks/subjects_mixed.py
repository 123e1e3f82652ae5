"""Several facts about the same few subjects: Recall@1 per language and split.

Each user of ``benchmarks/subjects_mixed.json`` holds 3–5 facts about each of a few
people, places and things (Chinese and English), and asks for one attribute of a
subject with other facts about it present ("How old is my landlord?" beside his
job and his phone). A question is right when its one answer ranks first. The set
was written for memory-pg by someone who had not read the rules; users of split
``tune`` were looked at while tuning, ``report`` users were not.

    python benchmarks/subjects_mixed.py                      # both splits
    python benchmarks/subjects_mixed.py --attribute-weight 0 # the ranking without it

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from memory_pg.store import MemoryStore

DATA = Path(__file__).resolve().parent / "subjects_mixed.json"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument("--attribute-weight", type=float, default=None)
    args = p.parse_args(argv)
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    store = MemoryStore(
        home=tempfile.mkdtemp(prefix="memory-pg-subjects-"), embedding_model=args.embedding_model
    )
    if args.attribute_weight is not None:
        store.ranking = replace(store.ranking, attribute_weight=args.attribute_weight)
    run = uuid.uuid4().hex[:8]
    right: dict[str, list[bool]] = defaultdict(list)
    try:
        for user in data["users"]:
            uid = f"subjects-{run}-{user['user']}"
            store.add_memories(
                [
                    {"text": m["text"], "memory_type": "user_profile", "metadata": {"mid": m["id"]}}
                    for m in user["memories"]
                ],
                user_id=uid,
            )
            for q in user["questions"]:
                hits = store.search(q["question"], top_k=1, user_id=uid, track_access=False)
                ok = bool(hits) and hits[0]["metadata"].get("mid") == q["answer"]
                for key in ("all", user["split"], f"{user['split']}/{user['lang']}"):
                    right[key].append(ok)
            store.clear_user_memory(uid)
    finally:
        store.close()
    for key in sorted(right):
        found = right[key]
        print(f"  {key:14s} n={len(found):4d}  Recall@1 {sum(found) / len(found):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

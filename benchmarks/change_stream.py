"""Wrong replacements in a stream of real-style notes: each ``zh_questions`` set's
messages written as ``user_profile`` memories, one user after another (embedded server,
offline default), and every replacement the change decision makes counted against
``change_stream_labels.json`` (right, partly, wrong; judged by someone who read none
of the rules).

The pairs sets measure the decision on pairs chosen to be about one subject; a stream
measures what a user meets: each new note is compared with every earlier one that
shares a word, and most of those are other facts.

The tune half is the streams of zh_questions v3-v7, the report half v8 and later (whose
own question sets are split by user; the stream uses every user).

    python benchmarks/change_stream.py
    python benchmarks/change_stream.py --out benchmarks/results/change-stream.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from memory_pg.store import MemoryStore

HERE = Path(__file__).resolve().parent
SETS = sorted(HERE.glob("zh_questions_v*.json"), key=lambda p: int(p.stem.rsplit("v", 1)[1]))
LABELS = HERE / "change_stream_labels.json"


def replacements(store: MemoryStore, path: Path) -> list[dict[str, str]]:
    """``(older, newer)`` of each note a later note of its user replaced."""
    found = []
    for user in json.loads(path.read_text(encoding="utf-8"))["users"]:
        uid = f"{path.stem}-{user['user']}"
        texts = [m["text"] for m in user["messages"]]
        ids = store.add_memories(
            [{"text": t, "memory_type": "user_profile"} for t in texts], user_id=uid
        )
        by_id = dict(zip(map(str, ids), texts, strict=True))
        for text, memory_id in zip(texts, ids, strict=True):
            for event in store.history(memory_id, user_id=uid):
                detail = event.get("detail") or {}
                if isinstance(detail, dict) and detail.get("by"):
                    found.append({"older": text, "newer": by_id.get(str(detail["by"]), "")})
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    labels = json.loads(LABELS.read_text(encoding="utf-8"))["pairs"]
    known = {(p["older"], p["newer"]): p for p in labels}
    home = tempfile.mkdtemp(prefix="memory-pg-stream-")
    rows, notes = [], 0
    try:
        store = MemoryStore(home=home)
        try:
            for path in SETS:
                notes += sum(
                    len(u["messages"])
                    for u in json.loads(path.read_text(encoding="utf-8"))["users"]
                )
                for pair in replacements(store, path):
                    label = known.get((pair["older"], pair["newer"]))
                    rows.append({**pair, "set": path.stem, **(label or {"label": "unlabelled"})})
        finally:
            store.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    split = {p.stem: ("tune" if int(p.stem.rsplit("v", 1)[1]) <= 7 else "report") for p in SETS}
    print(f"{notes} notes, {len(rows)} replaced")
    for half in ("tune", "report"):
        counts = Counter(r["label"] for r in rows if split[r["set"]] == half)
        print(
            f"  {half:7} "
            + ", ".join(f"{k} {counts[k]}" for k in ("right", "partly", "wrong", "unlabelled"))
        )
    if args.out:
        args.out.write_text(
            json.dumps({"notes": notes, "replaced": rows}, ensure_ascii=False, indent=1)
        )


if __name__ == "__main__":
    main()

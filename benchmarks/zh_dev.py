"""A Chinese personal-memory dev set: Recall@5 and R-precision per category and split.

Each user's messages become memories of their own user (``dialogue``, the message
time as ``event_time``); each question is a search asked at the user's
``asked_at`` (passed as ``now=`` where the store takes it, so "上周" and "昨天" mean
what they meant then). Recall@5 is the share of a question's evidence messages in
the top 5; R-precision the share in the top |evidence|. The data
(``benchmarks/zh_dev.json``) was written for this project: users of split
``tune`` were looked at while tuning, ``report`` users were not.

    python benchmarks/zh_dev.py                       # embedded server in a temp dir
    python benchmarks/zh_dev.py --variants default,lexical-only,vector-only

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import statistics
import sys
import tempfile
import uuid
from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
try:
    import memory_pg  # noqa: F401  (the venv's own checkout, so another one can be measured)
except ImportError:  # pragma: no cover - run from a plain python
    sys.path.insert(0, str(REPO))

from memory_pg import _segment  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402
from memory_pg.text import synonyms  # noqa: E402

DEFAULT_DATA = REPO / "benchmarks" / "zh_dev.json"

VARIANTS = {
    "default": lambda b: b,
    "vector-only": lambda b: replace(b, rrf_weight=0.0, similarity_weight=1.0, lexical_weight=0.0),
    "lexical-only": lambda b: replace(b, rrf_weight=0.0, similarity_weight=0.0, lexical_weight=1.0),
    "no-entities": lambda b: replace(b, entity_weight=0.0),
    # The attribute part and the resolution of described things (issue 35) off.
    "no-attributes": lambda b: replace(b, attribute_weight=0.0),
    # The attribute part weighed more or less than the default (1.0).
    **{
        f"attributes-{w}": (lambda b, w=w: replace(b, attribute_weight=float(w)))
        for w in ("0.5", "1.5", "2", "3")
    },
    # Queries that ask by their words only, as before sounds and characters (the
    # memories are indexed with both either way, at a weight no plain word matches).
    "no-sounds": lambda b: b,
    # Sounds of words only, not of a query's character pairs that no word holds.
    "no-pair-sounds": lambda b: b,
    # A query's words not asked by their characters as well.
    "no-chars": lambda b: b,
    # Characters asked only where jieba's dictionary holds them in at most N words
    # (default 1000), or every character ("all-chars").
    **{f"chars-{n}": (lambda b: b) for n in (300, 500, 700, 1000, 1500, 2000, 3000)},
    "all-chars": lambda b: b,
    # A query asks only its own words, not their synonyms (memory_pg.text.synonyms).
    "no-synonyms": lambda b: b,
}
#: Switches of the text layer a variant turns off while it asks.
SWITCHES = {
    "no-sounds": {"PINYIN": False},
    "no-pair-sounds": {"PAIR_SOUNDS": False},
    "no-chars": {"CHARS": False},
    **{f"chars-{n}": {"CHAR_LIMIT": n} for n in (300, 500, 700, 1000, 1500, 2000, 3000)},
    "all-chars": {"CHAR_LIMIT": None},
    "no-synonyms": {"synonyms.ON": False},
}


def _switch(name: str) -> tuple[Any, str]:
    """The module and attribute a switch name sets (``_segment`` unless dotted)."""
    if name == "synonyms.ON":
        return synonyms, "ON"
    return _segment, name


def share(found: list[str], evidence: set[str], k: int) -> float:
    """Share of ``evidence`` among the first ``k`` ids of ``found``."""
    return len(set(found[:k]) & evidence) / len(evidence)


def session_of(message: dict[str, Any], sessions: str) -> dict[str, str]:
    """The ``session_id`` metadata of a message under ``--sessions``."""
    if sessions == "day":
        return {"session_id": message["time"][:10]}
    if sessions == "user":
        return {"session_id": "all"}
    return {}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--database-url", default=os.environ.get("MEMORY_PG_DATABASE_URL"))
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument("--variants", default="default", help="comma list: " + ", ".join(VARIANTS))
    p.add_argument("--out", default=None, help="JSON result file")
    p.add_argument(
        "--sessions",
        choices=["none", "day", "user"],
        default="none",
        help="write each day's (or all of a user's) messages as one conversation "
        "(metadata session_id): each message then gets the one before it as context, "
        "as an agent's turns do; 'user' is the worst case, unrelated neighbours",
    )
    p.add_argument("--show-misses", action="store_true", help="print questions missed at 5")
    args = p.parse_args(argv)

    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    home = None
    if args.database_url:
        store = MemoryStore(
            args.database_url, embedding_model=args.embedding_model, auto_migrate=True
        )
    else:
        home = tempfile.mkdtemp(prefix="memory-pg-zhdev-")
        store = MemoryStore(home=home, embedding_model=args.embedding_model)
    takes_now = "now" in inspect.signature(store.search).parameters
    base = store.ranking
    run = uuid.uuid4().hex[:8]
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    try:
        for user in data["users"]:
            uid = f"zh-{run}-{user['user']}"
            store.add_memories(
                [
                    {
                        "text": m["text"],
                        "memory_type": "dialogue",
                        "event_time": datetime.fromisoformat(m["time"]).replace(
                            tzinfo=datetime.fromisoformat(user["asked_at"]).tzinfo
                        ),
                        "metadata": {"mid": m["id"]} | session_of(m, args.sessions),
                    }
                    for m in user["messages"]
                ],
                user_id=uid,
            )
            asked = datetime.fromisoformat(user["asked_at"])
            for name in args.variants.split(","):
                store.ranking = VARIANTS[name](base)
                switched = SWITCHES.get(name, {})
                saved = {k: getattr(*_switch(k)) for k in switched}
                for k, v in switched.items():
                    setattr(*_switch(k), v)
                for q in user["questions"]:
                    extra: dict[str, Any] = {"now": asked} if takes_now else {}
                    hits = store.search(
                        q["question"], top_k=10, user_id=uid, track_access=False, **extra
                    )
                    found = [h["metadata"]["mid"] for h in hits]
                    evidence = set(q["evidence"])
                    r5 = share(found, evidence, 5)
                    rows[name].append(
                        {
                            "question": q["question"],
                            "top5": found[:5],
                            "split": user["split"],
                            "category": q["category"],
                            "recall@5": r5,
                            "r-precision": share(found, evidence, len(evidence)),
                        }
                    )
                    if args.show_misses and r5 < 1 and name == "default":
                        print(
                            f"miss [{user['split']}] {q['question']} {q['evidence']} -> {found[:5]}"
                        )
                for k, v in saved.items():
                    setattr(*_switch(k), v)
            store.ranking = base
            store.clear_user_memory(uid)
    finally:
        store.close()
        if home:
            shutil.rmtree(home, ignore_errors=True)  # the embedded server's files

    report: dict[str, Any] = {
        "benchmark": "Chinese personal-memory dev set (benchmarks/zh_dev.json)",
        "embedding_model": args.embedding_model,
        "now_passed": takes_now,
        "command": "python benchmarks/zh_dev.py " + " ".join(argv or sys.argv[1:]),
        "results": {},
    }
    for name, rs in rows.items():
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rs:
            groups["all"].append(r)
            groups[r["split"]].append(r)
            groups[f"{r['split']}/{r['category']}"].append(r)
        summary = {
            g: {
                "questions": len(v),
                "recall@5": round(statistics.fmean(x["recall@5"] for x in v), 3),
                "r-precision": round(statistics.fmean(x["r-precision"] for x in v), 3),
            }
            for g, v in sorted(groups.items())
        }
        report["results"][name] = summary
        report.setdefault("questions", {})[name] = rs
        print(f"{name}")
        for g, s in summary.items():
            print(
                f"  {g:24s} n={s['questions']:3d}  "
                f"R@5 {s['recall@5']:.3f}  R-prec {s['r-precision']:.3f}"
            )
    out = Path(args.out) if args.out else REPO / "benchmarks" / "results" / "zh_dev.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

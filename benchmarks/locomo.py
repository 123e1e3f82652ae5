"""LoCoMo evidence retrieval: memory-pg's ranking beside plain cosine, same model, same run.

Each turn of a conversation becomes one memory of its own user (one user per
conversation) with its session time as ``event_time``; every question is a
search, and Recall@k is the share of its evidence turns in the top k. Figures
per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and overall go to ``benchmarks/results/``.

    python benchmarks/locomo.py                      # embedded server in a temp dir
    python benchmarks/locomo.py --unit turn          # a unit variant (see --help)
    MEMORY_PG_DATABASE_URL=postgresql://... python benchmarks/locomo.py

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory_pg.config import RankingSettings  # noqa: E402
from memory_pg.queries import SearchFilters  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

DEFAULT_DATA = REPO / ".." / "shared" / "bench" / "locomo_dev.json"
KS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass(frozen=True)
class Turn:
    """One dialogue turn and where it sits."""

    dia_id: str
    speaker: str
    text: str
    when: datetime
    session: int


def parse_when(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware datetime (UTC)."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns_of(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn in order; a shared image reads as its caption."""
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conversation:
        when = parse_when(conversation[f"session_{n}_date_time"])
        for t in conversation[f"session_{n}"]:
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            out.append(Turn(t["dia_id"], t["speaker"], text, when, n))
        n += 1
    return out


def unit_text(turns: list[Turn], i: int, unit: str) -> tuple[str, list[str]]:
    """The memory text for turn ``i`` under a unit variant, and the dia_ids it counts for.

    ``plain``: the turn alone. ``turn``: speaker and session date with it.
    ``context``: ``turn`` plus the previous turn of the same session as context
    (the memory still counts for its own turn only, so top-k stays k turns).
    ``pair``: this turn and the next one as one unit (counts for both: top-k is
    then up to 2k turns, compare it with Recall@2k of ``turn``).
    """
    t = turns[i]
    date = t.when.strftime("%d %B %Y")
    line = f"{t.speaker}: {t.text}"
    if unit == "plain":
        return t.text, [t.dia_id]
    if unit == "turn":
        return f"[{date}] {line}", [t.dia_id]
    if unit == "context":
        prev = turns[i - 1] if i > 0 and turns[i - 1].session == t.session else None
        ctx = f" (after {prev.speaker}: {prev.text})" if prev else ""
        return f"[{date}] {line}{ctx}", [t.dia_id]
    if unit == "pair":
        nxt = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].session == t.session else None
        if nxt is None:
            return f"[{date}] {line}", [t.dia_id]
        return f"[{date}] {line}\n{nxt.speaker}: {nxt.text}", [t.dia_id, nxt.dia_id]
    raise ValueError(unit)


def recall(found: list[list[str]], evidence: set[str], k: int) -> float:
    """Share of the evidence turns covered by the first ``k`` results."""
    covered: set[str] = set()
    for ids in found[:k]:
        covered.update(ids)
    return len(covered & evidence) / len(evidence)


def summarise(per_q: list[tuple[int, dict[int, float]]]) -> dict[str, Any]:
    """Mean Recall@k overall, for categories 1-4 and per category."""
    out: dict[str, Any] = {}
    groups: dict[str, list[dict[int, float]]] = defaultdict(list)
    for cat, r in per_q:
        groups["all"].append(r)
        groups[CATEGORIES[cat]].append(r)
        if cat != 5:
            groups["cat1-4"].append(r)
    for name, rs in groups.items():
        out[name] = {f"recall@{k}": round(statistics.fmean(x[k] for x in rs), 4) for k in KS}
        out[name]["questions"] = len(rs)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="locomo_dev.json")
    p.add_argument(
        "--database-url",
        default=os.environ.get("MEMORY_PG_DATABASE_URL"),
        help="a scratch database (default: an embedded server in a temporary folder)",
    )
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument("--unit", default="turn", choices=["plain", "turn", "context", "pair"])
    p.add_argument("--candidates", type=int, default=None)
    p.add_argument("--rrf-k", type=int, default=None)
    p.add_argument(
        "--variants",
        default="default",
        help="comma list of ranking variants to run on the same data: default, "
        "rrf-only, weighted, sim+lex (see VARIANTS)",
    )
    p.add_argument("--out", default=None, help="JSON result file")
    p.add_argument("--limit", type=int, default=None, help="first N conversations only")
    args = p.parse_args(argv)

    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if args.limit:
        data = data[: args.limit]
    tmp = None
    if args.database_url:
        store = MemoryStore(
            args.database_url, embedding_model=args.embedding_model, auto_migrate=True
        )
    else:
        tmp = tempfile.mkdtemp(prefix="memory-pg-locomo-")
        store = MemoryStore(home=tmp, embedding_model=args.embedding_model)
    embedder = store.embedder
    run_id = uuid.uuid4().hex[:8]
    base = store.ranking
    if args.candidates:
        base = replace(base, candidates=args.candidates)
    if args.rrf_k is not None:
        base = replace(base, rrf_k=args.rrf_k)
    variants = {name: VARIANTS[name](base) for name in args.variants.split(",")}
    results: dict[str, list[tuple[int, dict[int, float]]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    t_ingest = 0.0
    n_memories = 0
    try:
        for sample in data:
            user = f"locomo-{run_id}-{sample['sample_id']}"
            turns = turns_of(sample["conversation"])
            units = [unit_text(turns, i, args.unit) for i in range(len(turns))]
            t0 = time.perf_counter()
            store.add_memories(
                [
                    {
                        "text": text,
                        "memory_type": "dialogue",
                        "event_time": turns[i].when,
                        "metadata": {"dia_ids": ids},
                    }
                    for i, (text, ids) in enumerate(units)
                ],
                user_id=user,
            )
            t_ingest += time.perf_counter() - t0
            n_memories += len(units)
            # Plain cosine baseline: the raw turn text, the same model, exact search.
            plain = embedder.embed_documents([t.text for t in turns])
            valid = {t.dia_id for t in turns}
            for qa in sample["qa"]:
                evidence = {e for e in qa.get("evidence", []) if e in valid}
                if not evidence:
                    continue
                question = qa["question"]
                qv = embedder.embed_query(question)
                order = np.argsort(-(plain @ qv))[: max(KS)]
                found = [[turns[j].dia_id] for j in order]
                results["plain-cosine"].append(
                    (qa["category"], {k: recall(found, evidence, k) for k in KS})
                )
                for name, ranking in variants.items():
                    # The query is embedded once and shared by every variant: only the
                    # ranking differs, and the timing is the database round trip alone.
                    plan = store._plan_search(
                        user,
                        question,
                        qv,
                        max(KS),
                        SearchFilters(),
                        False,
                        store.ef_search,
                        ranking,
                    )
                    t0 = time.perf_counter()
                    hits = store._run(plan, user)
                    timings[name].append(time.perf_counter() - t0)
                    found = [h["metadata"]["dia_ids"] for h in hits]
                    results[name].append(
                        (qa["category"], {k: recall(found, evidence, k) for k in KS})
                    )
            store.clear_user_memory(user)
    finally:
        store.close()

    report = {
        "benchmark": "locomo evidence retrieval",
        "data": os.path.relpath(args.data, REPO),
        "conversations": len(data),
        "memories": n_memories,
        "unit": args.unit,
        "embedding_model": embedder.model_name,
        "ingest_s": round(t_ingest, 1),
        "command": "python benchmarks/locomo.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "results": {name: summarise(r) for name, r in results.items()},
        "sql_ms_p50": {name: round(1000 * statistics.median(t), 1) for name, t in timings.items()},
        "ranking": {name: _settings_dict(r) for name, r in variants.items()},
    }
    out = (
        Path(args.out)
        if args.out
        else REPO / "benchmarks" / "results" / (f"locomo_{args.unit}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, summary in report["results"].items():
        a = summary["all"]
        print(
            f"{name:14s} R@5 {a['recall@5']:.3f}  R@10 {a['recall@10']:.3f}  "
            f"R@25 {a['recall@25']:.3f}  (cat1-4 R@5 {summary['cat1-4']['recall@5']:.3f})"
        )
    print(f"written {out}")
    return 0


def _settings_dict(r: RankingSettings) -> dict[str, Any]:
    d = {k: getattr(r, k) for k in r.__dataclass_fields__}
    d["half_life_days"] = dict(r.half_life_days)
    return d


VARIANTS = {
    "default": lambda b: b,
    "rrf-only": lambda b: replace(b, rrf_weight=1.0, similarity_weight=0.0, lexical_weight=0.0),
    "weighted": lambda b: replace(b, rrf_weight=1.0, similarity_weight=1.0, lexical_weight=1.0),
    "sim+lex": lambda b: replace(b, rrf_weight=0.0, similarity_weight=1.0, lexical_weight=1.0),
    "vector-only": lambda b: replace(b, rrf_weight=0.0, similarity_weight=1.0, lexical_weight=0.0),
    "rrf-k10": lambda b: replace(b, rrf_k=10),
    "rrf-k30": lambda b: replace(b, rrf_k=30),
    "rrf-k120": lambda b: replace(b, rrf_k=120),
    "cand200": lambda b: replace(b, candidates=200),
    "cand50": lambda b: replace(b, candidates=50),
}

if __name__ == "__main__":
    raise SystemExit(main())

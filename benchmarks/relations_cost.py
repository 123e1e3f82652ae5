"""What relations cost: a write with and without them, a search with and without expansion.

Turns of the first LoCoMo conversation are written one ``add_memory`` at a time
(each its own transaction, as an agent writes after a turn), alternately with
relation recording on and off (``plans.relations.plan_record`` replaced by a step
that does nothing, and ``plans.relations.with_entities``, the extraction before the
transaction, by one that finds nothing), into two users; then its questions are
searched with ``expand=0`` and ``expand=1``. The query vector is computed once per question, so
the search timing is the database round trip. p50 and p95 in milliseconds.

    python benchmarks/relations_cost.py --data ../shared/bench/locomo_dev.json --writes 150

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from locomo import turns_of, unit_text  # noqa: E402

from memory_pg.plans import read, relations  # noqa: E402
from memory_pg.sql.search import SearchFilters  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402


def _pct(values: list[float]) -> dict[str, float]:
    ms = sorted(1000 * v for v in values)
    return {
        "p50": round(statistics.median(ms), 2),
        "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
        "n": len(ms),
    }


def _off(user_id: str, rows: Any, replaced: Any = None) -> Any:
    return None
    yield  # a generator that yields nothing


def _no_entities(rows: Any) -> Any:
    return list(rows)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(REPO / ".." / "shared" / "bench" / "locomo_dev.json"))
    p.add_argument("--writes", type=int, default=150)
    p.add_argument("--questions", type=int, default=150)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    sample = json.loads(Path(args.data).read_text(encoding="utf-8"))[0]
    turns = turns_of(sample["conversation"])[: args.writes]
    home = tempfile.mkdtemp(prefix="memory-pg-relcost-")
    store = MemoryStore(home=home)
    record, find = relations.plan_record, relations.with_entities
    timings: dict[str, list[float]] = {"write": [], "write_no_relations": []}
    try:
        vectors = store.embedder.embed_documents(
            [unit_text(turns, i, "turn")[0] for i in range(len(turns))]
        )
        for i, turn in enumerate(turns):
            text, _ = unit_text(turns, i, "turn")
            for user, on in (("with", True), ("without", False)):
                relations.plan_record = record if on else _off
                relations.with_entities = find if on else _no_entities
                vec = vectors[i]
                store.embedder.embed_documents = lambda texts, v=vec: v.reshape(1, -1)  # type: ignore[method-assign]
                t0 = time.perf_counter()
                store.add_memory(
                    text,
                    metadata={"session_id": f"s{turn.session}"},
                    event_time=turn.when,
                    user_id=user,
                )
                timings["write" if on else "write_no_relations"].append(time.perf_counter() - t0)
        relations.plan_record, relations.with_entities = record, find
        search: dict[int, list[float]] = {0: [], 1: []}
        for qa in sample["qa"][: args.questions]:
            qv = store.embedder.embed_query(qa["question"])
            for expand in (0, 1):
                plan = read.plan_search(
                    "with",
                    qa["question"],
                    qv,
                    5,
                    SearchFilters(),
                    False,
                    store.ranking,
                    expand=expand,
                )
                t0 = time.perf_counter()
                store.run_plan(plan, "with", ef_search=store.ef_search)
                search[expand].append(time.perf_counter() - t0)
    finally:
        relations.plan_record, relations.with_entities = record, find
        store.close()
        shutil.rmtree(home, ignore_errors=True)  # the embedded server's files
    report = {
        "benchmark": "relations cost",
        "command": "python benchmarks/relations_cost.py " + " ".join(sys.argv[1:]),
        "write_ms": _pct(timings["write"]),
        "write_no_relations_ms": _pct(timings["write_no_relations"]),
        "search_ms": _pct(search[0]),
        "search_expand1_ms": _pct(search[1]),
    }
    text = json.dumps(report, indent=2)
    print(text)
    out = Path(args.out) if args.out else REPO / "benchmarks" / "results" / "relations_cost.json"
    out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

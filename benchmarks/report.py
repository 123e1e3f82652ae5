"""Markdown tables from a results JSON: ``python benchmarks/report.py RESULTS.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SYSTEMS = ("memory-pg", "chromadb", "mem0")


def _ms(d: dict[str, Any] | None, key: str = "p50_ms") -> str:
    return "–" if not d or d.get(key) is None else f"{d[key]:.1f}"


def _ratio(mine: float | None, theirs: float | None) -> str:
    if not mine or not theirs:
        return "–"
    return f"{theirs / mine:.1f}×"


def tables(result: dict[str, Any]) -> str:
    """The README tables."""
    out = []
    e2e = result.get("ingest_e2e")
    if e2e:
        out.append(
            f"**Ingest with the model** ({e2e['size']} texts; raw embedding "
            f"{e2e['raw_embedding_per_s']:.0f}/s)\n"
        )
        out.append("| system | batched /s | vs raw embedding | one by one /s |")
        out.append("| --- | --- | --- | --- |")
        for s in SYSTEMS:
            r = e2e.get(s)
            if not r:
                continue
            b = r.get("batched_per_s")
            out.append(
                f"| {s} | {b if b else '– (no batch add)'} | "
                f"{r.get('batched_vs_raw_embedding', '–')} | {r.get('one_by_one_per_s')} |"
            )
            if r.get("batched_no_supersession_per_s"):
                out.append(
                    f"| {s}, supersession off | {r['batched_no_supersession_per_s']} | "
                    f"{r.get('batched_no_supersession_vs_raw_embedding')} | – |"
                )
        out.append("")
    out.append(
        "**Search** (p50 / p95 ms; *store* = precomputed query vector, *e2e* = query "
        "embedded first; ratio = peer p50 / memory-pg p50)\n"
    )
    out.append(
        "| scenario | system | store p50 / p95 | e2e p50 | Recall@10 | ingest /s (db only) "
        "| disk MB | store ratio |"
    )
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, sc in result["scenarios"].items():
        mine = sc.get("memory-pg", {}).get("search_store_ms", {}).get("p50_ms")
        for s in SYSTEMS:
            r = sc.get(s)
            if not r:
                continue
            st = r.get("search_store_ms", {})
            disk = r.get("disk_bytes", {}).get("total", 0) / 1e6
            ratio = "1×" if s == "memory-pg" else _ratio(mine, st.get("p50_ms"))
            out.append(
                f"| {name} | {s} | {_ms(st)} / {_ms(st, 'p95_ms')} | "
                f"{_ms(r.get('search_e2e_ms'))} | {r.get('recall_at_10')} | "
                f"{r.get('ingest_batched_per_s')} | {disk:.1f} | {ratio} |"
            )
            for tuning, t in r.get("tuned", {}).items():
                out.append(
                    f"| {name} | {s}, {tuning} | {_ms(t)} / {_ms(t, 'p95_ms')} | – | "
                    f"{t.get('recall_at_10')} | – | – | {_ratio(mine, t.get('p50_ms'))} |"
                )
    out.append("")
    out.append("**memory-pg's legs and index strategies** (p50 / p95 ms, Recall@10)\n")
    out.append(
        "| scenario | SQL hybrid | full-text leg | vector: planner | vector: HNSW "
        "| vector: exact (b-tree) | planner's choice |"
    )
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for name, sc in result["scenarios"].items():
        r = sc.get("memory-pg")
        if not r:
            continue
        legs = r["vector_leg"]

        def leg(k: str, legs: dict[str, Any] = legs) -> str:
            d = legs[k]
            return f"{_ms(d)} / {_ms(d, 'p95_ms')} ({d['recall_at_10']})"

        plan = r.get("plan", "")
        choice = "HNSW" if "hnsw" in plan else ("b-tree" if "Index" in plan else "seq scan")
        out.append(
            f"| {name} | {_ms(r.get('search_sql_hybrid_ms'))} / "
            f"{_ms(r.get('search_sql_hybrid_ms'), 'p95_ms')} | {_ms(r.get('lexical_leg_ms'))} | "
            f"{leg('planner')} | {leg('hnsw')} | {leg('exact')} | {choice} |"
        )
    out.append("")
    f = result.get("forget")
    if f:
        out.append(f"**Forget job**: {json.dumps(f)}\n")
    out.append("**Targets**\n")
    for k, v in result.get("checks", {}).items():
        out.append(f"- {'met' if v else 'NOT met'}: {k}")
    return "\n".join(out)


if __name__ == "__main__":
    print(tables(json.loads(Path(sys.argv[1]).read_text())))

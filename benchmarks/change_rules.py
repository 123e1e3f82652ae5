"""The change decision alone, on the pairs sets: changes found and facts wrongly replaced
per set and split, with and without the rule that reads a key said again with another
value (``restate``: on only where an LLM confirms each change it proposes).

Each pair is judged by :func:`memory_pg.text.changes.judge` on its two texts, with no
database, no model similarity and no product kinds, so the figures differ a little
from ``memory-pg eval --write-path`` (the whole write path). The sets were written
for memory-pg by authors who had not read the rules; ``tune`` halves were looked at
while writing them, ``report`` halves were not.

    python benchmarks/change_rules.py
    python benchmarks/change_rules.py benchmarks/write_pairs_v8_keep.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from memory_pg.text.changes import judge

HERE = Path(__file__).resolve().parent
SETS = sorted(HERE.glob("write_pairs*.json"))


def measure(path: Path, restate: bool) -> dict[str, Counter[str]]:
    """Per split: ``changes`` (labelled), ``found``, ``keeps`` and ``false``."""
    out: dict[str, Counter[str]] = {}
    for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
        if len(case["memories"]) != 2 or case["label"] not in ("change", "keep"):
            continue
        old, new = (m["text"] for m in case["memories"])
        replaced = judge(old, new, restate=restate) is not None
        row = out.setdefault(case.get("split", "all"), Counter())
        if case["label"] == "change":
            row["changes"] += 1
            row["found"] += replaced
        else:
            row["keeps"] += 1
            row["false"] += replaced
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path, default=SETS)
    args = parser.parse_args()
    print(f"{'set':28} {'split':7} {'offline':>18} {'with restate':>18}")
    for path in args.sets:
        off, on = measure(path, False), measure(path, True)
        for split in sorted(off):
            a, b = off[split], on[split]
            print(
                f"{path.stem:28} {split:7} "
                f"{a['found']:>4}/{a['changes']:<3} {a['false']:>3} false "
                f"{b['found']:>4}/{b['changes']:<3} {b['false']:>3} false"
            )


if __name__ == "__main__":
    main()

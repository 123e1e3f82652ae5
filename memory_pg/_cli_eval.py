"""``memory-pg eval``: measure retrieval on an evaluation set (the bundled one by default)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from memory_pg._cli_env import env_default, where
from memory_pg.errors import InvalidArgument


def _ks(value: str) -> list[int]:
    try:
        ks = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{where(value)}: give numbers like 1,5,10") from None
    if not ks or min(ks) < 1 or max(ks) > 1000:
        raise argparse.ArgumentTypeError(f"{where(value)}: the values must be between 1 and 1000")
    return ks


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``eval`` to the command line."""
    p = subparsers.add_parser(
        "eval",
        help="measure retrieval (Recall@k, MRR) on an evaluation set",
        description="Load the set's memories into a throwaway user, ask its questions, print "
        "Recall@k, MRR and per-category figures, then erase the user. Without FILE, the "
        "bundled bilingual set (memory_pg/data/eval_bilingual.json).",
    )
    p.add_argument("file", nargs="?", default=None, help="evaluation set JSON (default: bundled)")
    p.add_argument(
        "--write-path",
        action="store_true",
        help="measure what gets written instead: fact recall, non-fact precision, "
        "supersessions made and false ones (FILE: a write-path set; default: the bundled "
        "memory_pg/data/eval_write_path.json)",
    )
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument(
        "--top-k",
        type=_ks,
        # Read when eval runs: a bad value fails eval alone, as a usage error.
        default=env_default("MEMORY_PG_EVAL_TOP_K", [1, 5, 10]),
        help="comma list of k for Recall@k (env MEMORY_PG_EVAL_TOP_K; default 1,5,10)",
    )
    p.set_defaults(handler=run_eval)


def run_eval(args: argparse.Namespace, ctx: Any) -> int:
    """Run the evaluation; exit code 0 (the figures are the result, not a pass/fail)."""
    from memory_pg.evaluation import evaluate, load_eval_set

    if args.file is not None and not os.path.exists(args.file):
        raise InvalidArgument(f"no such evaluation file: {args.file}")
    if args.write_path:
        return _run_write_path(args, ctx)
    eval_set = load_eval_set(args.file)
    report = evaluate(ctx.store(), eval_set, top_k=args.top_k)
    if args.json:
        ctx.emit(report, True)
        return 0
    out = ctx.out
    ks = report["top_k"]
    out.write(
        f"{report['name']}: {report['questions']} questions, {report['memories']} memories, "
        f"model {report['embedding_model']}\n"
    )
    header = "  ".join(f"R@{k:<4}" for k in ks)
    out.write(f"{'':22s}{'n':>4}  {header}  MRR    superseded-returned\n")
    rows = [("overall", report["overall"])]
    rows += [(f"category {c}", v) for c, v in report["by_category"].items()]
    rows += [(f"lang {c}", v) for c, v in report["by_lang"].items()]
    for name, fig in rows:
        cells = "  ".join(f"{fig[f'recall@{k}']:.3f}" for k in ks)
        out.write(
            f"{name:22s}{fig['questions']:>4}  {cells}  {fig['mrr']:.3f}  "
            f"{fig['superseded_returned']}\n"
        )
    for miss in report["misses"]:
        out.write(f"miss: {miss['question']} expected {miss['expected']} got {miss['got']}\n")
    return 0


def _run_write_path(args: argparse.Namespace, ctx: Any) -> int:
    from memory_pg.write_evaluation import evaluate_write_path, load_write_path_set

    report = evaluate_write_path(ctx.store(), load_write_path_set(args.file))
    if args.json:
        ctx.emit(report, True)
        return 0
    out = ctx.out
    out.write(f"{report['name']}: {report['cases']} cases\n")
    out.write(
        f"{'':18s}{'cases':>6} {'ok':>4}  fact-recall  non-fact-precision  "
        "supersessions-made  false-supersessions\n"
    )
    rows = [("overall", report["overall"])]
    rows += [(f"split {k}", v) for k, v in report["by_split"].items()]
    rows += [(f"lang {k}", v) for k, v in report["by_lang"].items()]
    for name, fig in rows:
        recall = "-" if fig["fact_recall"] is None else f"{fig['fact_recall']:.3f}"
        precision = "-" if fig["non_fact_precision"] is None else f"{fig['non_fact_precision']:.3f}"
        out.write(
            f"{name:18s}{fig['cases']:>6} {fig['cases_ok']:>4}  {recall:>11}  {precision:>18}  "
            f"{fig['supersessions_made']:>10}/{fig['supersessions_expected']:<7}  "
            f"{fig['false_supersessions']:>19}\n"
        )
    for miss in report["failures"]:
        out.write(f"fail: {miss['id']} ({miss['split']}) current {miss['current']}\n")
    return 0

"""CLI commands of the lifecycle: history, restore, forget, consolidate, erase, reembed.

Every flag has an environment fallback (``MEMORY_PG_*``), so a cron line or a
container job needs no arguments beyond the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import TYPE_CHECKING, Any

from memory_pg._cli_env import env_default, env_flag, number_type
from memory_pg.config import ConsolidatePolicy, ForgetPolicy

if TYPE_CHECKING:
    from memory_pg.cli import CliContext


def _env_number(
    parser: argparse._ActionsContainer,
    flag: str,
    kind: type[int] | type[float],
    env: str,
    default: float | None,
    help_text: str,
) -> None:
    """A number option whose default is read from ``env``; its help names the variable."""
    shown = "" if default is None else f", default {default:g}"
    parser.add_argument(
        flag,
        type=number_type(kind),
        default=env_default(env, default),
        help=f"{help_text} (env {env}{shown})",
    )


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the lifecycle commands to the ``memory-pg`` parser."""
    user_help = "the user (env MEMORY_PG_USER_ID)"

    p = subparsers.add_parser("history", help="lifecycle events of a user or one memory")
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument("--memory", default=None, help="only this memory id")
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    p.set_defaults(handler=cmd_history)

    p = subparsers.add_parser(
        "restore",
        help="undo a wrong replacement: a replaced memory is current again",
        description="Make a replaced memory current again (the memory that replaced it "
        "stays current too; a merge into a summary is undone). Exit 1 if the memory is "
        "current, expired, or not the user's.",
    )
    p.add_argument("memory_id", help="id of the replaced memory (see `memory-pg history`)")
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    p.set_defaults(handler=cmd_restore)

    p = subparsers.add_parser(
        "forget", help="remove expired, long-superseded and stale memories (cron: daily)"
    )
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument(
        "--dry-run",
        action="store_true",
        default=env_flag("MEMORY_PG_DRY_RUN"),
        help="count, delete nothing (env MEMORY_PG_DRY_RUN=1)",
    )
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    for flag, kind, env, default, help_text in (
        ("--batch-size", int, "MEMORY_PG_FORGET_BATCH_SIZE", 1000, "rows per delete transaction"),
        (
            "--max-runtime",
            float,
            "MEMORY_PG_FORGET_MAX_RUNTIME",
            None,
            "seconds after which no new batch starts",
        ),
        (
            "--pause",
            float,
            "MEMORY_PG_FORGET_PAUSE",
            0.0,
            "seconds to sleep between batches on a busy server",
        ),
        (
            "--max-age-days",
            int,
            "MEMORY_PG_FORGET_MAX_AGE_DAYS",
            ForgetPolicy.max_age_days,
            "age of an unused, unimportant memory that is removed",
        ),
        (
            "--importance-below",
            float,
            "MEMORY_PG_FORGET_IMPORTANCE_BELOW",
            ForgetPolicy.importance_below,
            "only memories less important than this are stale",
        ),
        (
            "--superseded-retention-days",
            int,
            "MEMORY_PG_FORGET_SUPERSEDED_DAYS",
            ForgetPolicy.superseded_retention_days,
            "days a replaced memory is kept",
        ),
    ):
        _env_number(p, flag, kind, env, default, help_text)
    turns = p.add_mutually_exclusive_group()
    _env_number(
        turns,
        "--consumed-turn-days",
        int,
        "MEMORY_PG_FORGET_CONSUMED_TURN_DAYS",
        ForgetPolicy.consumed_turn_retention_days,
        "days a dialogue turn stays in the buffer after compaction",
    )
    turns.add_argument(
        "--keep-consumed-turns",
        action="store_true",
        default=env_flag("MEMORY_PG_FORGET_KEEP_CONSUMED_TURNS"),
        help="keep compacted dialogue turns in the buffer "
        "(env MEMORY_PG_FORGET_KEEP_CONSUMED_TURNS=1)",
    )
    p.set_defaults(handler=cmd_forget)

    p = subparsers.add_parser(
        "reanalyze",
        help="read memories again: the attributes each states and the words it is "
        "found by (after migration 0016, or --all after an upgrade; cron: optional)",
    )
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument(
        "--all",
        action="store_true",
        dest="every",
        help="every memory, not only those with no attributes read yet; writes the "
        "ones whose attributes or full-text words change (once after an upgrade)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        default=env_flag("MEMORY_PG_DRY_RUN"),
        help="count what would change, write nothing (env MEMORY_PG_DRY_RUN=1)",
    )
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    _env_number(
        p, "--batch-size", int, "MEMORY_PG_REANALYZE_BATCH_SIZE", 500, "rows per transaction"
    )
    _env_number(
        p,
        "--max-runtime",
        float,
        "MEMORY_PG_REANALYZE_MAX_RUNTIME",
        None,
        "seconds after which no new batch starts",
    )
    p.set_defaults(handler=cmd_reanalyze)

    p = subparsers.add_parser(
        "consolidate", help="merge near-duplicate fragments into summaries (cron: weekly)"
    )
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument("--dry-run", action="store_true", default=env_flag("MEMORY_PG_DRY_RUN"))
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    _env_number(
        p,
        "--threshold",
        float,
        "MEMORY_PG_CONSOLIDATE_THRESHOLD",
        ConsolidatePolicy.threshold,
        "cosine similarity joining two fragments",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        default=env_flag("MEMORY_PG_CONSOLIDATE_OFFLINE"),
        help="merge without the LLM even when MEMORY_PG_LLM_* is set "
        "(env MEMORY_PG_CONSOLIDATE_OFFLINE=1)",
    )
    p.set_defaults(handler=cmd_consolidate)

    p = subparsers.add_parser(
        "erase", help="erase everything of one user for good (memories, buffer, history)"
    )
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=user_help)
    p.add_argument(
        "--yes", action="store_true", default=env_flag("MEMORY_PG_YES"), help="do not ask"
    )
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    p.set_defaults(handler=cmd_erase)

    p = subparsers.add_parser("reembed", help="re-embed every memory with another model")
    p.add_argument(
        "--model",
        default=os.environ.get("MEMORY_PG_REEMBED_MODEL"),
        help="target model (env MEMORY_PG_REEMBED_MODEL)",
    )
    _env_number(p, "--batch-size", int, "MEMORY_PG_REEMBED_BATCH_SIZE", 256, "rows per transaction")
    p.add_argument("--json", action="store_true", default=env_flag("MEMORY_PG_JSON"))
    p.set_defaults(handler=cmd_reembed)


def _need_user(args: argparse.Namespace) -> str | None:
    if not args.user:
        print("memory-pg: --user is required (or MEMORY_PG_USER_ID)", file=sys.stderr)
        return None
    return str(args.user)


def cmd_history(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg history --user U [--memory ID]``."""
    user = _need_user(args)
    if user is None:
        return 2
    events = ctx.store(user).history(args.memory, user_id=user)
    for event in events:
        event["at"] = event["at"].isoformat()
    ctx.emit(events, args.json)
    return 0


def cmd_restore(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg restore ID --user U``: prints what was made current again."""
    user = _need_user(args)
    if user is None:
        return 2
    report = ctx.store(user).restore(args.memory_id, user_id=user)
    if args.json:
        ctx.emit(report, True)
        return 0
    others = [i for i in report["restored"] if i != report["id"]]
    line = f"restored {report['id']}"
    if report["replaced_by"]:
        line += f" (replaced by {report['replaced_by']}: {report['replacement']})"
    if others:
        line += "; with " + ", ".join(others)
    ctx.emit(line, False)
    return 0


def cmd_forget(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg forget``: prints a JSON report; a run that finds the lock taken exits 0."""
    from memory_pg.jobs.forget import forget

    policy = ForgetPolicy(
        max_age_days=args.max_age_days,
        importance_below=args.importance_below,
        superseded_retention_days=args.superseded_retention_days,
        consumed_turn_retention_days=None if args.keep_consumed_turns else args.consumed_turn_days,
    )
    store = ctx.store(None, maintenance=True)
    report = forget(
        store.engine,
        policy,
        dry_run=args.dry_run,
        batch_size=args.batch_size,
        max_runtime_s=args.max_runtime,
        user_id=args.user or None,
        pause_s=args.pause or 0.0,
    )
    ctx.emit(report.to_dict(), args.json)
    return 0


def cmd_reanalyze(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg reanalyze``: prints a JSON report; a run that finds the lock taken exits 0."""
    from memory_pg.jobs.reanalyze import reanalyze

    report = reanalyze(
        ctx.store(None, maintenance=True).engine,
        every=args.every,
        dry_run=args.dry_run,
        batch_size=args.batch_size,
        max_runtime_s=args.max_runtime,
        user_id=args.user or None,
    )
    ctx.emit(report.to_dict(), args.json)
    return 0


def cmd_consolidate(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg consolidate``: summaries by the LLM when configured, else the offline merge."""
    from memory_pg.config import LLMSettings
    from memory_pg.jobs.consolidate import Summarize, consolidate, llm_summarizer

    summarize: Summarize | None = None
    llm_settings = None if args.offline or args.dry_run else LLMSettings.from_env()
    if llm_settings is not None:
        from memory_pg.llm import OpenAICompatibleLLM

        # A summary is prose: JSON mode would wrap it in an object.
        summarize = llm_summarizer(
            OpenAICompatibleLLM(dataclasses.replace(llm_settings, json_mode=False))
        )
    store = ctx.store(None, maintenance=True)
    policy = ConsolidatePolicy(threshold=args.threshold)
    report = consolidate(
        store, policy, summarize=summarize, user_id=args.user or None, dry_run=args.dry_run
    )
    ctx.emit(report.to_dict(), args.json)
    # The other users were consolidated; a non-zero exit makes cron report the ones that were not.
    return 1 if report.failed else 0


def cmd_erase(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg erase --user U --yes``: asks for the user id on a terminal without --yes."""
    user = _need_user(args)
    if user is None:
        return 2
    if not args.yes:
        if not sys.stdin.isatty():
            print("memory-pg: erase is for good; pass --yes to confirm", file=sys.stderr)
            return 2
        answer = input(f"Erase every memory, buffered turn and history of {user!r}? Type the id: ")
        if answer.strip() != user:
            print("memory-pg: not confirmed, nothing erased", file=sys.stderr)
            return 1
    erased = ctx.store(user).clear_user_memory(user)
    ctx.emit({"user_id": user, "memories_erased": erased}, args.json)
    return 0


def cmd_reembed(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg reembed --model NAME``: progress on stderr, report on stdout."""
    from memory_pg.embedding import get_embedder, resolve_model_name
    from memory_pg.jobs.reembed import reembed, stderr_progress

    if not args.model:
        print("memory-pg: --model is required (or MEMORY_PG_REEMBED_MODEL)", file=sys.stderr)
        return 2
    embedder = get_embedder(resolve_model_name(args.model))
    store = ctx.store(None, maintenance=True)
    report = reembed(store.engine, embedder, batch_size=args.batch_size, progress=stderr_progress())
    ctx.emit(report.to_dict(), args.json)
    return 0


__all__ = ["register"]

"""``memory-pg demo``: the seed's scenario end to end, offline, in two processes.

A user tells a wrapped agent (in Chinese; English shown beside) about their
cross-border e-commerce business and that they chose PostgreSQL; the turns are
buffered in PostgreSQL and compacted into memories by the offline extractor.
Then a NEW process, with a new store, asks "数据库选型" and recalls the decision.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import IO, Any

from memory_pg.wrapper import INPUT_HEADER, MEMORY_HEADER, MemoryWrapper

#: The demo's own user: cleared at the start of each run, so a re-run starts fresh.
DEMO_USER = "memory-pg-demo"
DEMO_SESSION = "demo-session"

#: (Chinese, English) turns of the first session.
CONVERSATION = [
    (
        "我在做跨境电商，主要卖家居用品。",
        "I run a cross-border e-commerce shop selling home goods.",
    ),
    ("我们决定使用 PostgreSQL 作为数据库。", "We decided to use PostgreSQL as the database."),
    ("目前商品页面已经上线了。", "The product pages are live now."),
    ("下周要完成支付模块。", "The payment module must be done next week."),
]
QUESTION = ("数据库选型", "Which database did we choose?")

_TYPE_LABELS = {
    "user_profile": "用户画像 user profile",
    "project_status": "项目状态 project status",
    "key_decision": "关键决策 key decision",
    "todo": "待办 todo",
    "dialogue": "对话 dialogue",
}


class DemoAgent:
    """A rule-based stand-in for an LLM: it answers from the memories in its prompt."""

    def chat(self, prompt: str) -> str:
        memories = prompt.split(INPUT_HEADER)[0]
        if MEMORY_HEADER in memories and "PostgreSQL" in memories:
            return (
                "根据记忆，你们选择了 PostgreSQL 作为数据库。 (From memory: you chose PostgreSQL.)"
            )
        return "好的，我记下了。 (Noted.)"


def _say(out: IO[str], text: str = "") -> None:
    out.write(text + "\n")
    out.flush()


def _first_session(ctx: Any, user: str) -> None:
    out = ctx.out
    store = ctx.store()
    _say(out, f"== memory-pg demo: 1/3 第一次会话 first session (pid {os.getpid()}) ==")
    _say(out, f"database 数据库: {store.url}")
    erased = store.clear_user_memory(user)
    _say(out, f"cleared demo user {user!r} 清空演示用户 ({erased} memories)")
    bot = MemoryWrapper(
        DemoAgent(), store, user_id=user, session_id=DEMO_SESSION, compact_threshold=100
    )
    for chinese, english in CONVERSATION:
        _say(out, f"  用户 user: {chinese}  ({english})")
        _say(out, f"  助手 agent: {bot.chat(chinese)}")
    pending = store.pending_turns(user_id=user)
    _say(out, f"buffered in PostgreSQL 已缓冲的对话轮次: {len(pending)} turns")

    _say(out, "== 2/3 压缩 compaction (offline extractor 离线抽取) ==")
    ids = bot.compact(force=True)
    for memory_id in ids:
        memory = store.get(memory_id, user_id=user)
        label = _TYPE_LABELS.get(memory["memory_type"], memory["memory_type"])
        _say(out, f"  [{label}] {memory['text']}")
    left = len(store.pending_turns(user_id=user))
    _say(out, f"{len(ids)} memories written 条记忆已写入; turns still pending 待压缩: {left}")


def _recall(ctx: Any, user: str) -> int:
    out = ctx.out
    store = ctx.store()
    _say(out, f"== 3/3 新进程 new process (pid {os.getpid()}), new store ==")
    chinese, english = QUESTION
    _say(out, f"  用户 user: {chinese}  ({english})")
    found = store.search(chinese, top_k=3, user_id=user, track_access=False)
    # A result with no relevance shares nothing with the question (no word in common,
    # and a model that cannot read it): search still fills top_k with the newest.
    matching = [m for m in found if m["relevance"] > 0]
    for rank, memory in enumerate(matching, 1):
        label = _TYPE_LABELS.get(memory["memory_type"], memory["memory_type"])
        _say(out, f"  {rank}. [{label}] {memory['text']}  (score {memory['score']:.4f})")
    if len(matching) < len(found):
        _say(
            out,
            f"  ({len(found) - len(matching)} more of the top {len(found)} share nothing with "
            "the question: not shown 其余结果与问题无关，未显示)",
        )
    bot = MemoryWrapper(DemoAgent(), store, user_id=user, compact_threshold=100)
    _say(out, f"  助手 agent: {bot.chat(chinese)}")
    decision = next((m for m in found if m["memory_type"] == "key_decision"), None)
    if decision is None or "PostgreSQL" not in decision["text"]:
        _say(out, "NOT recalled 未能回忆起数据库决策")
        return 1
    _say(out, f"recalled in a new process 新进程回忆成功: {decision['text']}")
    return 0


def _child_env(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    # The new process finds the same database the flags pointed at.
    if getattr(args, "database_url", None):
        env["MEMORY_PG_DATABASE_URL"] = args.database_url
    if getattr(args, "home", None):
        env["MEMORY_PG_HOME"] = str(args.home)
    if getattr(args, "embedding_model", None):
        env["MEMORY_PG_EMBEDDING_MODEL"] = args.embedding_model
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def _cmd_demo(args: argparse.Namespace, ctx: Any) -> int:
    if args.agents:
        from memory_pg.service import demo

        # The agents demo has a user of its own unless one is given.
        return demo.run(ctx, demo.DEMO_USER if args.demo_user == DEMO_USER else args.demo_user)
    user = args.demo_user
    if args.phase == "recall":
        return _recall(ctx, user)
    _first_session(ctx, user)
    # Let go of the store (and the embedded server) as a finished process would.
    ctx.close()
    ctx.out.flush()
    command = [sys.executable, "-m", "memory_pg", "demo", "--phase", "recall", "--user", user]
    result = subprocess.run(command, env=_child_env(args), stdout=ctx.out, check=False)
    return result.returncode


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``memory-pg demo``."""
    p = subparsers.add_parser(
        "demo", help="the seed scenario: remember in one process, recall in a new one (offline)"
    )
    p.add_argument(
        "--phase",
        choices=("all", "recall"),
        default=os.environ.get("MEMORY_PG_DEMO_PHASE", "all"),
        help="all: both sessions; recall: only the second (env MEMORY_PG_DEMO_PHASE)",
    )
    p.add_argument(
        "--user",
        dest="demo_user",
        default=os.environ.get("MEMORY_PG_DEMO_USER", DEMO_USER),
        help=f"the demo's user, erased at the start (env MEMORY_PG_DEMO_USER; default {DEMO_USER})",
    )
    p.add_argument(
        "--agents",
        action="store_true",
        help="two agents of one user share a decision through the service; a private "
        "note stays private (needs the service extra)",
    )
    p.set_defaults(handler=_cmd_demo)

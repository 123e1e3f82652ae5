"""A chat process SIGKILLed at any point loses no turn, and no memory is written twice.

Real processes (``crash_chat.py`` run with ``sys.executable``) on the test's
database are killed at three points: inside the agent (the user's turn is
buffered, no reply yet), inside the compactor (memories built, not committed)
and right after the commit. Each next process resumes from what the database
holds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory_pg.compaction import MemoryCompactor
from memory_pg.wrapper import MemoryWrapper

SCRIPT = Path(__file__).with_name("crash_chat.py")
USER = "crash-user"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def run_until_paused(db_url: str, control: Path, pause_at: str, *inputs: str) -> None:
    """Start a chat process, wait until it reports the pause point, SIGKILL it."""
    paused = control / "paused"
    paused.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), db_url, str(control), pause_at, *inputs],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300  # a guard against hanging, not a measurement
        while not paused.exists():
            if proc.poll() is not None:
                _out, err = proc.communicate()
                pytest.fail(f"{pause_at}: exited {proc.returncode} before pausing:\n{err.decode()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{pause_at}: never reached its pause point")
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def buffer_rows(raw: Any) -> list[tuple[str, str, bool]]:
    rows = raw.execute(
        "SELECT role, content, consumed_at IS NOT NULL FROM memory_pg_dialogue_buffer "
        "WHERE user_id = %s ORDER BY id",
        (USER,),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def memory_rows(raw: Any) -> list[tuple[str, str]]:
    rows = raw.execute(
        "SELECT memory_type, text FROM memory_pg_memories WHERE user_id = %s", (USER,)
    ).fetchall()
    return sorted((r[0], r[1]) for r in rows)


def test_killed_processes_lose_no_turn_and_duplicate_no_memory(db_url, raw, tmp_path, make_store):
    profile = "我是做跨境电商的，主要卖家居用品"
    decision = "我们决定使用 PostgreSQL 作为数据库"
    todo = "下周要完成支付模块的开发"

    # 1. Killed inside the agent's 2nd call: the 2nd user turn is buffered, unanswered.
    run_until_paused(db_url, tmp_path, "agent:2", profile, decision, "never sent")
    assert buffer_rows(raw) == [
        ("user", profile, False),
        ("assistant", f"echo: {profile}", False),
        ("user", decision, False),
    ]
    assert memory_rows(raw) == []

    # 2. A new process adds a turn (5 pending >= 4) and is killed inside the compactor.
    run_until_paused(db_url, tmp_path, "compact", todo)
    assert [r[2] for r in buffer_rows(raw)] == [False] * 5
    assert memory_rows(raw) == []

    # 3. A new process resumes the compaction and is killed right after the commit.
    run_until_paused(db_url, tmp_path, "commit")
    turns = buffer_rows(raw)
    assert [r[2] for r in turns] == [True] * 5
    expected = sorted(
        (m.memory_type, m.text)
        for m in MemoryCompactor().compact_to_memories(
            [{"role": role, "content": content} for role, content, _ in turns]
        )
    )
    assert ("key_decision", decision) in expected
    assert memory_rows(raw) == expected

    # 4. Yet another resume finds nothing left: every turn was compacted exactly once.
    wrapper = MemoryWrapper(EchoOnce(), make_store(user_id=USER), compact_threshold=1)
    assert wrapper.compact(force=True) == []
    assert memory_rows(raw) == expected
    added = raw.execute(
        "SELECT count(*) FROM memory_pg_history WHERE user_id = %s AND event = 'added'", (USER,)
    ).fetchone()[0]
    assert added == len(expected)
    assert [(r, c) for r, c, _ in buffer_rows(raw)] == [
        ("user", profile),
        ("assistant", f"echo: {profile}"),
        ("user", decision),
        ("user", todo),
        ("assistant", f"echo: {todo}"),
    ]


class EchoOnce:
    def chat(self, prompt: str) -> str:
        return prompt

"""README §3: what a user told the wrapper in one process is recalled in the next.

The first process says one thing and exits without closing anything: the turn is in
the dialogue buffer, far below the 20 turns that trigger a compaction. A second,
new process asks about it and its agent's prompt holds it. Both are real processes
(``sys.executable``) on the test's database, as a user runs the README's example.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_pg.wrapper import INPUT_HEADER

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

CHAT = """
import sys
from memory_pg import MemoryStore, MemoryWrapper

class Agent:
    def chat(self, prompt):
        print(prompt)
        print("=====")
        return "好的 / OK"

MemoryWrapper(Agent(), MemoryStore(user_id="alice")).chat(sys.argv[1])
"""


def chat_in_new_process(db_url: str, text: str) -> str:
    """The prompt the agent got in a new process that said ``text`` once and exited."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "MEMORY_PG_DATABASE_URL": db_url,
    }
    done = subprocess.run(
        [sys.executable, "-c", CHAT, text],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("=====")[0]


def test_a_new_process_recalls_what_the_last_one_was_told(db_url, raw):
    chat_in_new_process(db_url, "我们决定使用 PostgreSQL 作为数据库")
    pending = raw.execute(
        "SELECT count(*) FROM memory_pg_dialogue_buffer WHERE consumed_at IS NULL"
    ).fetchone()
    assert pending == (2,)  # not compacted: the recall below reads the buffer

    prompt = chat_in_new_process(db_url, "数据库选型？")
    memories = prompt.split(INPUT_HEADER)[0]
    assert "我们决定使用 PostgreSQL 作为数据库" in memories
    # Only what the user said is recalled: the agent's reply and a question are not facts.
    assert "好的" not in memories

    prompt = chat_in_new_process(db_url, "What's the weather like?")
    assert "PostgreSQL" not in prompt.split(INPUT_HEADER)[0]  # shares no word with it

"""A chat process for the crash tests: it can stop dead at a chosen point, to be SIGKILLed.

Usage: ``python crash_chat.py DB_URL CONTROL_DIR PAUSE_AT [USER_INPUT ...]``

``PAUSE_AT`` is ``agent:N`` (inside the agent's N-th call, so after that user turn
is buffered), ``compact`` (inside the compactor, before the commit), ``commit``
(right after the commit returned) or ``none``. At that point the process writes
``CONTROL_DIR/paused`` and sleeps until killed. On start it resumes like any new
process would: it compacts what earlier processes left pending. The pauses live
here, in the test's collaborators (agent, compactor, store), never in the library.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from memory_pg.compaction import MemoryCompactor
from memory_pg.embedding import get_embedder
from memory_pg.store import MemoryStore
from memory_pg.wrapper import MemoryWrapper

USER = "crash-user"
SESSION = "crash-session"
THRESHOLD = 4


def pause(control: Path) -> None:
    (control / "paused").write_text("paused", encoding="utf-8")
    while True:  # until SIGKILL
        time.sleep(60)


class EchoAgent:
    """A deterministic agent: repeats the input; pauses on its N-th call if asked."""

    def __init__(self, control: Path, pause_on: int | None) -> None:
        self.control = control
        self.pause_on = pause_on
        self.calls = 0

    def chat(self, prompt: str) -> str:
        self.calls += 1
        if self.calls == self.pause_on:
            pause(self.control)
        return "echo: " + prompt.rsplit("user: ", 1)[-1]


class PausingCompactor(MemoryCompactor):
    """The offline compactor, stopping after it compacted (nothing committed yet)."""

    def __init__(self, control: Path, stop: bool) -> None:
        super().__init__()
        self.control = control
        self.stop = stop

    def compact_to_memories(self, texts: Any) -> Any:
        memories = super().compact_to_memories(texts)
        if self.stop:
            pause(self.control)
        return memories


class PausingStore(MemoryStore):
    """A store that stops right after a compaction committed."""

    control: Path
    stop_after_commit = False

    def commit_compaction(self, *args: Any, **kwargs: Any) -> list[str]:
        ids = super().commit_compaction(*args, **kwargs)
        if self.stop_after_commit:
            pause(self.control)
        return ids


def main() -> None:
    url, control_dir, pause_at, *inputs = sys.argv[1:]
    control = Path(control_dir)
    store = PausingStore(url, user_id=USER, embedder=get_embedder("all-MiniLM-L6-v2"))
    store.control = control
    store.stop_after_commit = pause_at == "commit"
    agent_pause = int(pause_at.split(":")[1]) if pause_at.startswith("agent:") else None
    wrapper = MemoryWrapper(
        EchoAgent(control, agent_pause),
        store,
        compactor=PausingCompactor(control, pause_at == "compact"),
        session_id=SESSION,
        compact_threshold=THRESHOLD,
    )
    resumed = wrapper.compact()
    replies = [wrapper.chat(text) for text in inputs]
    print(json.dumps({"resumed": resumed, "replies": replies}, ensure_ascii=False))
    store.close()


if __name__ == "__main__":
    main()

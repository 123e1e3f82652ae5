"""``hermes chat`` with a database memory-pg cannot use: the user reads why on the terminal,
once, and the chat goes on without memory (issue 37). Hermes Agent's own CLI, with the
plugin ``memory-pg hermes install`` writes. Skipped where hermes-agent is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hermes_cli.main", reason="hermes-agent is not installed")

from tests.acceptance.test_hermes_chat import ROOT, hermes_home
from tests.fake_openai import FakeOpenAI, fake_openai_fixture, reply  # noqa: F401


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://...", "postgresql://USER:PASSWORD@HOST:5432/DATABASE"),
        ("postgresql://memory:secret@127.0.0.1:1/memory", "DatabaseUnavailable"),
    ],
)
def test_the_problem_is_shown_on_the_terminal_once(
    tmp_path: Path, fake_openai: FakeOpenAI, url: str, said: str
) -> None:
    fake_openai.default = reply("No memory today.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_PG_", "OPENAI_"))}
    env.update(
        HERMES_HOME=str(hermes_home(tmp_path, fake_openai.base_url)),
        MEMORY_PG_DATABASE_URL=url,
        MEMORY_PG_USER_ID="alice",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
    )
    chat = [sys.executable, "-c", "from hermes_cli.main import main; main()", "chat", "-Q"]
    done = subprocess.run(
        [*chat, "-q", "Which database did we pick?"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung process, not a measurement
        check=False,
    )
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown[-3000:]
    assert "No memory today." in done.stdout
    told = [line for line in shown.splitlines() if "memory-pg is off" in line]
    assert len(told) == 1, shown[-3000:]
    assert said in told[0] and "secret" not in shown
    assert "Traceback" not in shown

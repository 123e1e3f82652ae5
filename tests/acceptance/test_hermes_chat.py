"""A new ``hermes chat -q`` process recalls from its first message.

Hermes Agent's own CLI, with the plugin that ``memory-pg hermes install`` writes,
talks to a local OpenAI-compatible stand-in; the stored decision must be in the
prompt of its first (and only) turn. Skipped where hermes-agent is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hermes_cli.main", reason="hermes-agent is not installed")

from memory_pg import _cli_hermes
from tests.fake_openai import FakeOpenAI, fake_openai_fixture, reply  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
DECISION = "We decided to use PostgreSQL as the database"
QUESTION = "Which database did we decide to use?"


def hermes_home(tmp_path: Path, base_url: str) -> Path:
    """A Hermes home: the memory-pg plugin, the stand-in as a custom model provider."""
    home = tmp_path / "hermes"
    _cli_hermes.install(home)
    (home / "config.yaml").write_text(
        "model:\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        "  default: fake-model\n"
        "  api_key: test-key\n"
        "memory:\n"
        "  provider: memory_pg\n",
        encoding="utf-8",
    )
    return home


def test_a_new_hermes_chat_gets_the_stored_decision_in_its_prompt(
    tmp_path: Path, make_store, db_url: str, fake_openai: FakeOpenAI
) -> None:
    make_store().add_memory(DECISION, "key_decision", user_id="alice")
    fake_openai.default = reply("We chose PostgreSQL.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_PG_", "OPENAI_"))}
    env.update(
        HERMES_HOME=str(hermes_home(tmp_path, fake_openai.base_url)),
        MEMORY_PG_DATABASE_URL=db_url,
        MEMORY_PG_USER_ID="alice",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
    )
    chat = [sys.executable, "-c", "from hermes_cli.main import main; main()", "chat", "-Q"]
    done = subprocess.run(
        [*chat, "-q", QUESTION],
        cwd=tmp_path,  # no project files (AGENTS.md...) for Hermes to pick up
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung process, not a measurement
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "We chose PostgreSQL." in done.stdout
    turns = [r for r in fake_openai.requests if "messages" in r]
    first = next(r for r in turns if QUESTION in str(r["messages"][-1].get("content")))
    assert DECISION in first["messages"][-1]["content"]

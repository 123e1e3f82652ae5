"""Ordinary commands are quiet (issue 37): no third-party warnings, the model warning once
on stderr, JSON output that parses, also as the README's cron lines log it (``2>&1``).

The installed ``memory-pg`` on a new embedded server, with no ``XDG_RUNTIME_DIR`` (as
under cron) and no model configured (as on a first try).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_WARNING = "no embedding model configured"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("quiet-home")


def memory_pg(home: Path, *args: str, merged: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    for name in ("DATABASE_URL", "XDG_RUNTIME_DIR", "PYTHONWARNINGS"):
        env.pop(name, None)
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "MEMORY_PG_HOME": str(home)})
    done = subprocess.run(
        [str(Path(sys.executable).parent / "memory-pg"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done


def test_the_first_command_warns_of_the_model_once_and_nothing_else(home: Path) -> None:
    done = memory_pg(home, "stats", "--json")
    assert json.loads(done.stdout)["memories"] == 0
    [warning] = done.stderr.strip().splitlines()
    assert MODEL_WARNING in warning and "MEMORY_PG_EMBEDDING_MODEL" in warning


def test_later_commands_say_nothing_on_stderr(home: Path) -> None:
    memory_pg(home, "add", "We use PostgreSQL", "--user", "alice")
    for args in (["stats", "--json"], ["search", "database", "--user", "alice", "--json"]):
        done = memory_pg(home, *args)
        json.loads(done.stdout)
        assert done.stderr == "", done.stderr
    created = memory_pg(home, "token", "create", "--user", "alice")
    [token] = created.stdout.splitlines()
    assert token.startswith("mpg_")
    [said] = created.stderr.splitlines()
    assert said.startswith("memory-pg: token id ")


@pytest.mark.parametrize("job", ["forget", "consolidate"])
def test_the_readme_cron_lines_log_json_only(home: Path, job: str) -> None:
    # 17 3 * * *  memory-pg forget --json >> /var/log/memory-pg/forget.log 2>&1
    done = memory_pg(home, job, "--json", merged=True)
    assert isinstance(json.loads(done.stdout), dict), done.stdout

"""Exit codes of the command line: 0 success, 1 a memory-pg error, 2 usage.

A command run without the user it needs is a usage error, whichever command it is.
"""

from __future__ import annotations

import io

import pytest

from memory_pg.cli import main

NEED_A_USER = [
    ["add", "a note"],
    ["search", "a note"],
    ["export"],
    ["import", "-"],
    ["history"],
    ["restore", "some-id"],
    ["erase", "--yes"],
    ["token", "create"],
    ["token", "revoke", "some-id"],
]


@pytest.fixture
def no_user(monkeypatch):
    monkeypatch.delenv("MEMORY_PG_USER_ID", raising=False)
    monkeypatch.delenv("MEMORY_PG_USER", raising=False)


@pytest.mark.parametrize("argv", NEED_A_USER, ids=" ".join)
def test_a_missing_user_exits_2_in_every_command(argv, db_url, no_user, capsys):
    code = main(["--database-url", db_url, *argv], out=io.StringIO())
    assert code == 2
    assert "--user" in capsys.readouterr().err


def test_bad_input_exits_1_and_success_0(db_url, no_user, capsys):
    out = io.StringIO()
    assert main(["--database-url", db_url, "add", "   ", "--user", "alice"], out=out) == 1
    assert "empty" in capsys.readouterr().err
    assert main(["--database-url", db_url, "add", "a note", "--user", "alice"], out=out) == 0

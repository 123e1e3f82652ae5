"""``memory-pg restore``: the installed command undoes a wrong replacement, in a subprocess."""

from __future__ import annotations

import json

from tests.acceptance.test_cli import run


def test_restore_then_history_and_search_show_it_and_errors_exit_1(store, db_url):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    old = store.add_memory("The user prefers dark mode", "user_profile")
    new = store.add_memory("The user prefers light mode", "user_profile")

    proc = run(["restore", old, "--user", "alice"], env)
    assert proc.stdout.strip() == f"restored {old} (replaced by {new}: kept)"

    events = json.loads(run(["history", "--user", "alice", "--memory", old, "--json"], env).stdout)
    assert [e["event"] for e in events] == ["added", "superseded", "restored"]
    assert events[1]["detail"]["reason"] == "similar"  # why it had been replaced
    assert events[2]["detail"]["replaced_by"] == new
    found = json.loads(run(["search", "dark mode", "--user", "alice", "--json"], env).stdout)
    assert found[0]["id"] == old

    again = run(["restore", old, "--user", "alice", "--json"], env, check=False)
    assert again.returncode == 1
    assert f"memory {old} is current: there is no replacement to undo" in again.stderr
    assert "Traceback" not in again.stderr

    other = run(["restore", old, "--user", "bob"], env, check=False)
    assert other.returncode == 1 and "no memory" in other.stderr and "dark" not in other.stderr

    no_user = run(["restore", old], env, check=False)
    assert no_user.returncode == 2 and "--user" in no_user.stderr

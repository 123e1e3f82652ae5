"""The command line's small surprises of issue 37, met as a user meets them: the installed
``memory-pg`` in a subprocess. Exit codes: 0 success, 1 a memory-pg error, 2 usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import count_rows

ROOT = Path(__file__).resolve().parents[2]


def memory_pg(*args: str, url: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    env.pop("DATABASE_URL", None)
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "MEMORY_PG_DATABASE_URL": url})
    env["MEMORY_PG_EMBEDDING_MODEL"] = "all-MiniLM-L6-v2"
    return subprocess.run(
        [str(Path(sys.executable).parent / "memory-pg"), *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=300,
    )


def test_list_shows_a_users_memories_newest_first(db_url):
    def add(text: str, *flags: str) -> str:
        added = memory_pg("add", text, "--user", "ann", *flags, url=db_url)
        assert added.returncode == 0, added.stderr
        return added.stdout.strip()

    add("We use PostgreSQL", "--type", "project_status")
    add("The launch is in May", "--type", "project_status")
    old = add("Deploys run on Fridays", "--topic", "deploy")
    add("Deploys run on Tuesdays", "--topic", "deploy")

    shown = memory_pg("list", "--user", "ann", url=db_url)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert [line.split("] ", 1)[1].split("  (id")[0] for line in lines] == [
        "Deploys run on Tuesdays",
        "The launch is in May",
        "We use PostgreSQL",
    ]
    listed = json.loads(memory_pg("list", "--user", "ann", "--json", url=db_url).stdout)
    assert listed[0]["text"] == "Deploys run on Tuesdays" and len(listed) == 3
    every = json.loads(memory_pg("list", "--user", "ann", "--all", "--json", url=db_url).stdout)
    assert old in {m["id"] for m in every} and len(every) == 4
    assert memory_pg("list", url=db_url).returncode == 2  # no user


def test_token_create_prints_only_the_token_on_stdout(db_url):
    created = memory_pg("token", "create", "--user", "ann", url=db_url)
    assert created.returncode == 0, created.stderr
    [token] = created.stdout.splitlines()  # so TOKEN=$(memory-pg token create ...) works
    assert token.startswith("mpg_")
    assert "shown once" in created.stderr and token not in created.stderr


def test_revoking_something_that_is_no_token_id_says_so(db_url):
    revoked = memory_pg("token", "revoke", "nope", "--user", "ann", url=db_url)
    assert revoked.returncode == 1
    assert "not a token id: 'nope'" in revoked.stderr and "memory id" not in revoked.stderr
    unknown = "0190aaaa-0000-7000-8000-000000000000"
    revoked = memory_pg("token", "revoke", unknown, "--user", "ann", url=db_url)
    assert revoked.returncode == 1 and f"no live token {unknown}" in revoked.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-3", "100000"])
def test_a_top_k_that_is_no_count_is_a_usage_error(db_url, value):
    searched = memory_pg("search", "database", "--user", "ann", "--top-k", value, url=db_url)
    assert searched.returncode == 2
    assert f"--top-k: '{value}' is not a whole number from 1 to 1000" in searched.stderr


def test_a_downgrade_needs_yes_and_drops_nothing_without_it(db_url, raw):
    memory_pg("add", "We use PostgreSQL", "--user", "ann", url=db_url)
    refused = memory_pg("migrate", "--downgrade", "base", url=db_url, stdin="")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert count_rows(raw, "memory_pg_memories") == 1
    done = memory_pg("migrate", "--downgrade", "base", "--yes", "--json", url=db_url)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["revision"] is None


def test_migrate_sql_with_a_downgrade_prints_the_downgrade():
    printed = memory_pg("migrate", "--sql", "--downgrade", "base", url="postgresql://unused/x")
    assert printed.returncode == 0, printed.stderr
    assert "DROP TABLE memory_pg_memories" in printed.stdout
    assert "CREATE TABLE" not in printed.stdout

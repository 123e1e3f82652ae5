"""Environment fallbacks of the command line: an option's own variable beats the generic one.

Precedence, highest first: the flag, the option's own variable
(``MEMORY_PG_FORGET_BATCH_SIZE``), the generic one named after the option
(``MEMORY_PG_BATCH_SIZE``), the default.
"""

from __future__ import annotations

import io
import json

import pytest

from memory_pg.cli import main
from memory_pg.sql.forget import FORGET_REASONS

VARIABLES = ("MEMORY_PG_BATCH_SIZE", "MEMORY_PG_FORGET_BATCH_SIZE", "MEMORY_PG_REEMBED_BATCH_SIZE")


@pytest.fixture
def env(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def run(db_url, *argv):
    out = io.StringIO()
    code = main(["--database-url", db_url, *argv], out=out)
    assert code == 0
    return json.loads(out.getvalue())


def expire_five(store, raw):
    ids = store.add_memories([f"temporary note {i}" for i in range(5)])
    raw.execute(
        "UPDATE memory_pg_memories SET expires_at = now() - interval '1 hour' WHERE id = ANY(%s)",
        (ids,),
    )


# Five expired rows two at a time take three batches; each other reason one empty
# batch, and so do the compacted dialogue turns (none here).
BATCHES_OF_TWO = 3 + len(FORGET_REASONS) - 1 + 1
BATCHES_OF_MANY = len(FORGET_REASONS) + 1


def test_the_forget_variable_beats_the_generic_one(store, raw, db_url, env):
    expire_five(store, raw)
    env.setenv("MEMORY_PG_FORGET_BATCH_SIZE", "2")
    env.setenv("MEMORY_PG_BATCH_SIZE", "1000")
    report = run(db_url, "forget", "--json")
    assert (report["deleted"], report["batches"]) == (5, BATCHES_OF_TWO)


def test_the_generic_variable_applies_when_the_own_one_is_unset(store, raw, db_url, env):
    expire_five(store, raw)
    env.setenv("MEMORY_PG_BATCH_SIZE", "2")
    report = run(db_url, "forget", "--json")
    assert (report["deleted"], report["batches"]) == (5, BATCHES_OF_TWO)


def test_the_flag_beats_both_variables(store, raw, db_url, env):
    expire_five(store, raw)
    env.setenv("MEMORY_PG_FORGET_BATCH_SIZE", "2")
    env.setenv("MEMORY_PG_BATCH_SIZE", "2")
    report = run(db_url, "forget", "--json", "--batch-size", "100")
    assert (report["deleted"], report["batches"]) == (5, BATCHES_OF_MANY)


def test_the_reembed_variable_beats_the_generic_one(store, db_url, env):
    store.add_memories(["I live in Hangzhou", "We use PostgreSQL", "Buy milk"])
    env.setenv("MEMORY_PG_REEMBED_BATCH_SIZE", "256")
    env.setenv("MEMORY_PG_BATCH_SIZE", "1")
    report = run(db_url, "reembed", "--model", store.embedder.model_name, "--json")
    assert (report["reembedded"], report["batches"]) == (3, 1)


def test_the_memory_type_variable_beats_the_generic_one(db_url, env):
    env.setenv("MEMORY_PG_MEMORY_TYPE", "todo")
    env.setenv("MEMORY_PG_TYPE", "user_profile")
    added = run(db_url, "add", "write the report", "--user", "erin", "--json")
    env.delenv("MEMORY_PG_TYPE")  # it would filter the search by type too
    found = run(db_url, "search", "report", "--user", "erin", "--json")
    assert [(r["id"], r["memory_type"]) for r in found] == [(added["id"], "todo")]

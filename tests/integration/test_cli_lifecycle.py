"""The lifecycle commands through `memory_pg.cli.main`, on a real database."""

from __future__ import annotations

import io
import json

from memory_pg.cli import main


def run(db_url, *argv):
    out = io.StringIO()
    code = main(["--database-url", db_url, *argv], out=out)
    return code, out.getvalue()


def test_history_forget_consolidate_erase(store, raw, db_url):
    old = store.add_memory("use MySQL", "key_decision", topic="database")
    store.add_memory("use PostgreSQL", "key_decision", topic="database")
    stale = store.add_memory("unused old note", importance=0.1)
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days' WHERE id = %s",
        (stale,),
    )

    code, out = run(db_url, "history", "--user", "alice", "--memory", old, "--json")
    assert code == 0
    assert [e["event"] for e in json.loads(out)] == ["added", "superseded"]

    code, out = run(db_url, "forget", "--dry-run", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["dry_run"] is True and report["by_reason"] == {"stale": 1}
    assert store.get(stale) is not None

    code, out = run(db_url, "forget", "--json", "--batch-size", "10")
    report = json.loads(out)
    assert (code, report["deleted"], report["by_type"]) == (0, 1, {"dialogue": 1})
    assert store.get(stale) is None

    store.add_memories(["Buy milk tomorrow", "Pick up milk at the store tomorrow"])
    code, out = run(db_url, "consolidate", "--user", "alice", "--json", "--offline")
    assert code == 0 and json.loads(out)["clusters"] == 1

    code, _ = run(db_url, "erase", "--user", "alice")  # no --yes, no terminal: refused
    assert code == 2 and store.list_memories()
    code, out = run(db_url, "erase", "--user", "alice", "--yes", "--json")
    assert code == 0 and json.loads(out)["user_id"] == "alice"
    assert store.list_memories(include_inactive=True) == []
    assert store.history() == []

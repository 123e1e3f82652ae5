"""A real LangGraph graph and LangMem's memory tools on memory-pg: what a fact saved in one
run is worth in the next process, and what an update leaves in the history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory_pg.integrations.langgraph import MemoryPgStore
from tests.integration._langgraph_agent import build, config

ROOT = Path(__file__).resolve().parents[2]


def recall_in_a_new_process(db_url: str, user: str, question: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration._langgraph_agent", db_url, user, question],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    recalled: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return recalled


def test_a_fact_saved_by_a_graph_is_recalled_in_a_new_process(make_store, db_url):
    graph = build(MemoryPgStore(make_store()))
    saved = graph.invoke({"fact": "Alice's favourite editor is Vim"}, config("alice"))
    assert saved["memory_id"]
    graph.invoke({"fact": "Alice's cat is called Miso"}, config("alice"))
    graph.invoke({"fact": "Bob's favourite editor is Emacs"}, config("bob"))

    recalled = recall_in_a_new_process(db_url, "alice", "which editor does Alice like?")
    assert recalled[0] == "Alice's favourite editor is Vim"
    assert "Bob's favourite editor is Emacs" not in recalled  # another user's namespace


def test_an_update_through_the_tool_replaces_the_fact_and_keeps_history(make_store):
    graph = build(MemoryPgStore(make_store()))
    first = graph.invoke({"fact": "Alice works at Acme as a chemist"}, config("alice"))
    update = {"fact": "Alice now works at Globex as a data engineer"}
    after = graph.invoke(
        {**update, "memory_id": first["memory_id"], "question": "where does Alice work?"},
        config("alice"),
    )
    assert after["memory_id"] == first["memory_id"]  # the same LangMem memory, updated
    assert after["recalled"] == ["Alice now works at Globex as a data engineer"]

    alice = make_store(user_id="alice")
    rows = alice.list_memories(include_inactive=True)
    old = next(r for r in rows if "Acme" in r["text"])
    new = next(r for r in rows if "Globex" in r["text"])
    assert old["superseded_by"] == new["id"]
    assert [e["event"] for e in alice.history(str(old["id"]))] == ["added", "superseded"]

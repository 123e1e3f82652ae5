"""`memory-pg demo --agents`: a decision shared between two agents through the service."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_agents_demo_shares_a_decision_and_keeps_a_note_private(db_url, raw):
    from tests.service.conftest import service_env

    result = subprocess.run(
        [sys.executable, "-m", "memory_pg", "--database-url", db_url, "demo", "--agents"],
        cwd=ROOT,
        env=service_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "coder recalls 回忆: [planner, shared 共享] 我们决定用 PostgreSQL + pgvector" in out
    assert "the note among them: False" in out
    assert "GET /v1/memories/<note id>: HTTP 404" in out
    # The tokens were stored as hashes only; the memories are the demo user's.
    rows = raw.execute(
        "SELECT agent_id, private FROM memory_pg_memories ORDER BY agent_id"
    ).fetchall()
    assert rows == [("coder", True), ("planner", False)]

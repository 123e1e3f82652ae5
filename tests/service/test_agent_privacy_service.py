"""What an agent's token reads of its user: nothing of another agent's private memories,
not their count and not their history once ``forget`` has removed them (a review found
both: ``/v1/stats`` counted them, and ``forget`` left their events for any agent)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path


def _forget(db_url: str, user: str) -> None:
    """The installed CLI's forget job, as cron runs it."""
    cli = Path(sys.executable).with_name("memory-pg")
    env = {**os.environ, "MEMORY_PG_DATABASE_URL": db_url}
    done = subprocess.run(
        [str(cli), "forget", "--user", user], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_an_agent_neither_counts_nor_reads_the_history_of_anothers_private_memories(
    service, fresh_user
):
    alice = fresh_user("alice")
    planner = service.token(alice, agent_id="planner").token
    coder = service.token(alice, agent_id="coder").token
    whole = service.token(alice).token
    soon = (datetime.now(timezone.utc) + timedelta(seconds=1)).isoformat()
    with service.client(planner) as p, service.client(coder) as c, service.client(whole) as w:
        shared = p.post("/v1/memories", json={"text": "The offsite is in May"}).json()["id"]
        secret = {"text": "I am interviewing at Globex", "memory_type": "key_decision"}
        r = c.post("/v1/memories", json={**secret, "private": True, "expires_at": soon})
        assert r.status_code == 201, r.text
        gone = r.json()["id"]

        assert p.get("/v1/stats").json()["memories"] == 1
        assert "key_decision" not in p.get("/v1/stats").json()["by_type"]
        assert c.get("/v1/stats").json()["memories"] == 2
        assert w.get("/v1/stats").json()["memories"] == 2

        time.sleep(1.2)
        _forget(service.db_url, alice)
        planner_sees = {e["memory_id"] for e in p.get("/v1/history").json()["events"]}
        assert planner_sees == {shared}
        assert p.get(f"/v1/memories/{gone}/history").json().get("events", []) == []
        # The coder, and the user's own token, still read why it went.
        for client in (c, w):
            events = [
                e["event"] for e in client.get(f"/v1/memories/{gone}/history").json()["events"]
            ]
            assert events == ["added", "expired"]

"""SIGTERM lets an in-flight write finish before the service exits."""

from __future__ import annotations

import json
import signal

from tests.service.conftest import post_through_sigterm, start_service


def test_sigterm_finishes_the_write_in_flight_then_exits_cleanly(
    service_db, tmp_path, fresh_user, service_raw
):
    from sqlalchemy import create_engine

    from memory_pg.service.tokens import create_token

    user = fresh_user("grace")
    engine = create_engine(service_db)
    try:
        token = create_token(engine, user).token
    finally:
        engine.dispose()
    # A generous grace period: on a loaded machine the batch may take a while to embed.
    svc = start_service(
        service_db, tmp_path / "shutdown.log", "--no-mcp", "--graceful-timeout", "300"
    )
    body = json.dumps({"items": [{"text": f"fact number {i} of the batch"} for i in range(50)]})
    result, code = post_through_sigterm(
        svc, "/v1/memories/batch", token, body, split=len(body) // 2, pause_s=1.0, timeout_s=120
    )
    assert result.get("status") == 201, result
    ids = result["json"]["ids"]
    assert len(ids) == 50
    stored = service_raw.execute(
        "SELECT count(*) FROM memory_pg_memories WHERE user_id = %s", (user,)
    ).fetchone()
    assert stored == (50,)
    # Uvicorn re-raises the signal once it has shut down cleanly: -15 is a clean exit.
    assert code in (0, -signal.SIGTERM)
    log = svc.log.read_text(errors="replace")
    assert log.index('"status": 201') < log.index("memory-pg service stopped")
    assert "Application shutdown complete" in log

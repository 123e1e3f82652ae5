"""SIGTERM lets an in-flight write finish before the service exits."""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx

from tests.service.conftest import start_service, stop_service


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
    head, tail = body[: len(body) // 2].encode(), body[len(body) // 2 :].encode()
    sent, release = threading.Event(), threading.Event()

    def slow_body():
        yield head
        sent.set()
        release.wait()
        yield tail

    result: dict[str, object] = {}

    def post() -> None:
        with httpx.Client(base_url=svc.base_url, timeout=120) as c:
            r = c.post(
                "/v1/memories/batch",
                content=slow_body(),
                headers={"Authorization": "Bearer " + token, "content-type": "application/json"},
            )
            result["status"], result["json"] = r.status_code, r.json()

    thread = threading.Thread(target=post)
    thread.start()
    try:
        assert sent.wait(60)
        svc.process.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # ordering only: the signal arrives while the request is open
        release.set()
        thread.join(120)
        code = svc.process.wait(timeout=120)
    finally:
        release.set()
        stop_service(svc)
    assert result["status"] == 201, result
    ids = result["json"]["ids"]  # type: ignore[index]
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

"""``memory-pg serve`` as a newcomer meets it (issue 37): a database problem is one line and
exit 1; started, it says where it listens and logs one line per request, nothing else."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from tests.service.conftest import ROOT, Service, free_port, service_env, stop_service


def serve(url: str, log: Path, *flags: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "memory_pg", *flags, "--database-url", url, "serve"]
    with log.open("wb") as fh:
        return subprocess.Popen(
            [*cmd, "--port", str(free_port())],
            cwd=ROOT,
            env=service_env(),
            stdout=fh,
            stderr=subprocess.STDOUT,
        )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://...", "postgresql://USER:PASSWORD@HOST:5432/DATABASE"),
        ("postgresql://memory:pw@127.0.0.1:1/memory", "host and port"),
    ],
)
def test_a_database_it_cannot_use_is_one_line_and_exit_1(url, said, tmp_path):
    log = tmp_path / "serve.log"
    assert serve(url, log).wait(timeout=120) == 1
    lines = log.read_text().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memory-pg: error: "), lines
    assert said in lines[0]


def test_a_database_never_migrated_says_to_migrate(pg_server: Any, tmp_path):
    name = "serve_unmigrated_" + uuid.uuid4().hex[:8]
    with psycopg.connect(
        host=pg_server.host, port=pg_server.port, user=pg_server.user, dbname="postgres"
    ) as raw:
        raw.autocommit = True
        raw.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            log = tmp_path / "serve.log"
            assert serve(pg_server.url(name), log).wait(timeout=120) == 1
        finally:
            raw.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
    lines = log.read_text().strip().splitlines()
    assert len(lines) == 1 and "memory-pg migrate" in lines[0], lines


def test_at_the_default_level_it_says_where_it_listens_and_logs_each_request(service_db, tmp_path):
    log = tmp_path / "serve.log"
    process = serve(service_db, log)
    service = Service("", service_db, process, log)
    try:
        deadline = time.monotonic() + 180
        while "listening on" not in log.read_text() and process.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        first = log.read_text().strip().splitlines()
        assert len(first) == 1 and first[0].startswith("memory-pg: listening on http://"), first
        base = first[0].removeprefix("memory-pg: listening on ")
        # An unknown query parameter is refused (issue 38), and logged without its text.
        assert httpx.get(base + "/readyz?q=secret", timeout=30).status_code == 400
        assert httpx.get(base + "/v1/search", timeout=30).status_code in (401, 405)
    finally:
        # Uvicorn re-raises SIGTERM once it has shut down cleanly: -15 is a clean exit.
        assert stop_service(service) in (0, -signal.SIGTERM)
    lines = log.read_text().strip().splitlines()
    requests = [line for line in lines if '"event": "request"' in line]
    assert len(requests) == 2, lines
    assert '"path": "/readyz"' in requests[0] and "secret" not in requests[0]
    # Nothing else: no uvicorn or alembic INFO, no third-party warnings.
    assert len(lines) == 3, lines

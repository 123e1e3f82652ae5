"""One real ``memory-pg serve`` subprocess (uvicorn) on a free port, shared by the service tests.

Its database is cloned from the migrated template for this package of tests; each
test works with users of its own (``fresh_user``), so no test reads another's rows.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import create_engine

from memory_pg.service.tokens import NewToken, create_token
from tests.integration._security_support import extra_database

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service_env() -> dict[str, str]:
    """The environment of a service subprocess: the bundled model, no network."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        MEMORY_PG_EMBEDDING_MODEL="all-MiniLM-L6-v2",
        PYTHONUNBUFFERED="1",
    )
    return env


@dataclass
class Service:
    """A running service: its URL, database URL and a way to mint tokens."""

    base_url: str
    db_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def token(self, user_id: str, **kwargs: Any) -> NewToken:
        engine = create_engine(self.db_url)
        try:
            return create_token(engine, user_id, **kwargs)
        finally:
            engine.dispose()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": "Bearer " + token} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=60)


def start_service(
    db_url: str,
    log: Path,
    *extra: str,
    nofile: int | None = None,
    flags: Sequence[str] = (),
) -> Service:
    """Start ``memory-pg serve`` and wait until /readyz answers (or the process dies).

    ``nofile``: the process's descriptor limit (``ulimit -n``), where a test needs a low
    one. ``flags``: global options, before ``serve`` (``--read-url URL``).
    """
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "memory_pg",
        "-v",
        "--database-url",
        db_url,
        *flags,
        "serve",
        "--port",
        str(port),
        *extra,
    ]
    with log.open("wb") as fh:
        process = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=service_env(),
            stdout=fh,
            stderr=subprocess.STDOUT,
            preexec_fn=None if nofile is None else (lambda: _limit_descriptors(nofile)),
        )
    base = f"http://127.0.0.1:{port}"
    # Start-up loads the model: wait for the process, not for a fixed time.
    while True:
        if process.poll() is not None:
            raise RuntimeError("service exited: " + log.read_text(errors="replace")[-3000:])
        try:
            if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    return Service(base, db_url, process, log)


def _limit_descriptors(nofile: int) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))


def stop_service(service: Service) -> int:
    """SIGTERM, then wait for a clean exit; returns the exit code."""
    if service.process.poll() is None:
        service.process.send_signal(signal.SIGTERM)
    try:
        return service.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        service.process.kill()
        return service.process.wait()


@pytest.fixture(scope="package")
def service_db(pg_server: Any, pg_template: Any) -> Iterator[str]:
    """A database of its own (migrated, empty) for this package's service."""
    with psycopg.connect(
        host=pg_server.host,
        port=pg_server.port,
        user=pg_server.user,
        password=pg_server.password,
        dbname="postgres",
        autocommit=True,
    ) as raw:
        with extra_database(raw, pg_template.template_dbname) as name:
            yield pg_server.url(name)


@pytest.fixture(scope="package")
def service(service_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The running ``memory-pg serve`` of this package."""
    log = tmp_path_factory.mktemp("service") / "service.log"
    svc = start_service(service_db, log)
    try:
        yield svc
    finally:
        stop_service(svc)


@pytest.fixture
def fresh_user() -> Callable[[str], str]:
    """Unique user ids for one test: ``fresh_user('alice')`` -> ``alice-3f2a...``."""
    suffix = secrets.token_hex(4)
    return lambda name: f"{name}-{suffix}"


@pytest.fixture
def service_raw(service_db: str) -> Iterator[psycopg.Connection[Any]]:
    """A superuser connection to the service's database, to look at the tables."""
    from sqlalchemy.engine import make_url

    url = make_url(service_db)
    with psycopg.connect(
        host=url.query.get("host") or url.host,
        port=url.port or int(url.query.get("port", 5432)),  # type: ignore[arg-type]
        user=url.username,
        dbname=url.database,
        autocommit=True,
    ) as conn:
        yield conn


def post_through_sigterm(
    service: Service,
    path: str,
    token: str,
    body: str,
    *,
    split: int,
    pause_s: float,
    timeout_s: float,
    method: str = "POST",
) -> tuple[dict[str, Any], int]:
    """Send ``body`` (POST unless ``method``) in two parts; SIGTERM the service while
    the request is open (its first ``split`` characters sent), send the rest ``pause_s``
    after the signal.

    Returns what the client got (``status`` and ``json``, or ``error``) and the
    service's exit code."""
    head, tail = body[:split].encode(), body[split:].encode()
    sent, release = threading.Event(), threading.Event()

    def slow_body() -> Iterator[bytes]:
        yield head
        sent.set()
        release.wait()
        yield tail

    result: dict[str, Any] = {}

    def post() -> None:
        try:
            with httpx.Client(base_url=service.base_url, timeout=timeout_s) as c:
                r = c.request(
                    method,
                    path,
                    content=slow_body(),
                    headers={
                        "Authorization": "Bearer " + token,
                        "content-type": "application/json",
                    },
                )
                result["status"], result["json"] = r.status_code, r.json()
        except httpx.HTTPError as exc:
            result["error"] = repr(exc)

    thread = threading.Thread(target=post)
    thread.start()
    try:
        assert sent.wait(60)
        # Sent is not received: signalled before the service has read the request's
        # head, uvicorn closes the connection as an idle one. So wait until the app has
        # it (the scrape is in progress too).
        until_in_progress(service, 2, timeout_s)
        service.process.send_signal(signal.SIGTERM)
        time.sleep(pause_s)  # ordering only: the signal arrives while the request is open
        release.set()
        thread.join(timeout_s)
        code = service.process.wait(timeout=timeout_s)
    finally:
        release.set()
        stop_service(service)
    return result, code


def until_in_progress(service: Service, count: int, timeout_s: float) -> None:
    """Wait until ``/metrics`` shows ``count`` requests in progress."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=service.base_url, timeout=timeout_s) as c:
        while True:
            page = c.get("/metrics").text
            match = re.search(r"^memory_pg_http_requests_in_progress (\S+)$", page, re.M)
            assert match, "no requests_in_progress gauge in /metrics"
            if float(match.group(1)) >= count:
                return
            assert time.monotonic() < deadline, f"fewer than {count} requests in progress"
            time.sleep(0.01)


def revoked_and_expired(
    service: Any, raw: psycopg.Connection[Any], user: str
) -> tuple[NewToken, NewToken]:
    """Two tokens of ``user``: one revoked, one past its expiry (set directly)."""
    from memory_pg.service.tokens import revoke_token

    revoked, expired = service.token(user), service.token(user)
    engine = create_engine(service.db_url)
    try:
        assert revoke_token(engine, user, revoked.info.id)
    finally:
        engine.dispose()
    raw.execute(
        "UPDATE memory_pg_tokens SET expires_at = now() - interval '1 minute' WHERE id = %s",
        (uuid.UUID(expired.info.id),),
    )
    return revoked, expired

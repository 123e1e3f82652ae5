"""``GET /metrics`` as Prometheus scrapes it (issue 38): counters that move with the traffic,
per route template, and nothing of a user's in them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.service.http import ServiceSettings, create_app
from tests.service.conftest import Service, start_service, stop_service
from tests.service.test_mcp import http_client

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: httpx.Client) -> tuple[str, Samples]:
    r = client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return r.text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_counters_move_with_requests_by_route_template(service, fresh_user):
    user = fresh_user("zebedee")
    token = service.token(user).token
    text = "Zebedee Quuxworth moved to Reykjavik with Oolong the cat"
    with service.client() as anonymous, service.client(token) as c:
        _, before = scrape(anonymous)
        assert c.post("/v1/memories", json={"text": text}).status_code == 201
        batch = {"items": [{"text": "Quuxworth likes tea"}, {"text": "Quuxworth drives a van"}]}
        assert c.post("/v1/memories/batch", json=batch).status_code == 201
        assert c.post("/v1/search", json={"query": "where is Zebedee"}).status_code == 200
        assert c.get("/v1/entities/Quuxworth").status_code in (200, 404)
        assert c.post("/v1/search", json={"top_k": "many"}).status_code == 422
        assert anonymous.get("/v1/stats").status_code == 401
        assert anonymous.get("/no/such/Quuxworth").status_code == 404
        page, after = scrape(anonymous)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "memory_pg_http_requests_total"
    assert moved(requests, method="POST", route="/v1/memories", status="201") == 1
    assert moved(requests, method="POST", route="/v1/memories/batch", status="201") == 1
    assert (
        moved(requests, method="GET", route="/v1/entities/{name}", status="200")
        + moved(requests, method="GET", route="/v1/entities/{name}", status="404")
        == 1
    )
    assert moved(requests, method="GET", route="(no route)", status="404") == 1
    seconds = "memory_pg_http_request_duration_seconds_count"
    assert moved(seconds, method="POST", route="/v1/search") == 2
    # Errors by the type their body names.
    assert moved("memory_pg_http_errors_total", type="InvalidRequest") == 1
    assert moved("memory_pg_http_errors_total", type="AuthenticationFailed") == 1
    assert moved("memory_pg_http_errors_total", type="NotFound") >= 1
    # Acknowledged writes count memories, a batch's each.
    assert moved("memory_pg_memories_written_total", via="add") == 1
    assert moved("memory_pg_memories_written_total", via="batch") == 2
    # The pool: every database call waited for a connection (briefly), none timed out.
    assert moved("memory_pg_pool_wait_seconds_count") >= 3
    assert value(after, "memory_pg_pool_timeouts_total") == 0
    assert value(after, "memory_pg_pool_capacity") >= 1
    assert value(after, "memory_pg_pool_connections", state="idle") >= 1
    assert value(after, "memory_pg_http_open_connections") >= 1
    # Every request answered, the scrape itself still in progress.
    assert value(after, "memory_pg_http_requests_in_progress") == 1
    assert value(after, "memory_pg_http_refused_connections_total", reason="head_timeout") == 0
    assert value(after, "process_open_fds") > 0
    # Nothing of the user's: not their id, token, text, nor a name from a path.
    for secret in (user, token, "Zebedee", "Quuxworth", "Reykjavik", "Oolong"):
        assert secret not in page


async def test_mcp_writes_are_counted_with_the_http_ones(service, fresh_user):
    token = service.token(fresh_user("mona")).token
    with service.client() as anonymous:
        _, before = scrape(anonymous)
        async with http_client(service, token) as mcp:  # the MCP SDK's own client
            result = await mcp.call_tool("add_memory", {"text": "Mona's team deploys on Thursdays"})
            assert not result.is_error, result.content
        _, after = scrape(anonymous)
    added = "memory_pg_memories_written_total"
    assert value(after, added, via="add") - value(before, added, via="add") == 1
    route = {"method": "POST", "route": "/mcp", "status": "200"}
    assert value(after, "memory_pg_http_requests_total", **route) > value(
        before, "memory_pg_http_requests_total", **route
    )


@pytest.fixture(scope="module")
def admin_only(service_db, tmp_path_factory) -> Iterator[Service]:
    """A second service whose /metrics needs an admin token."""
    log = tmp_path_factory.mktemp("metrics-admin") / "service.log"
    svc = start_service(service_db, log, "--metrics", "admin")
    try:
        yield svc
    finally:
        stop_service(svc)


def test_metrics_admin_needs_an_admin_token_and_a_read_only_one_will_do(admin_only, fresh_user):
    with admin_only.client() as anonymous:
        r = anonymous.get("/metrics")
        assert r.status_code == 401 and r.json()["error"]["type"] == "AuthenticationFailed"
    with admin_only.client(admin_only.token(fresh_user("u")).token) as user:
        assert user.get("/metrics").status_code == 403
    monitor = admin_only.token(fresh_user("ops"), admin=True, read_only=True).token
    with admin_only.client(monitor) as c:
        _, samples = scrape(c)
    assert (
        value(
            samples, "memory_pg_http_requests_total", method="GET", route="/metrics", status="401"
        )
        == 1
    )


def test_metrics_off_has_no_route():
    # No database is reached: the route is absent before any request is served.
    app = create_app(
        AsyncMemoryStore("postgresql+psycopg://nobody@/none?host=/nonexistent"),
        ServiceSettings(metrics="off"),
    )
    client = TestClient(app)
    assert client.get("/metrics").status_code == 404
    assert "/metrics" not in client.get("/openapi.json").json()["paths"]

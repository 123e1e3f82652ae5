"""A request acts for its token only: a body or query naming another user or agent is 403,
a query parameter the route does not take is 400, an erase's dry run is refused (not
ignored), and an MCP tool refuses an argument its schema lacks.

Through the package's real ``memory-pg serve``, httpx and the mcp SDK's client.
"""

from __future__ import annotations

import pytest

from tests.integration._security_support import row_counts
from tests.service.test_http_refusals import _add, _error
from tests.service.test_mcp import _data, _error_text, http_client


def _count(service_raw, user):
    row = service_raw.execute(
        "SELECT count(*) FROM memory_pg_memories WHERE user_id = %s", (user,)
    ).fetchone()
    return row[0]


def test_erasing_the_user_with_a_body_naming_another_user_erases_no_one(
    service, fresh_user, service_raw
):
    erin, frank = fresh_user("erin"), fresh_user("frank")
    with service.client(service.token(erin).token) as c:
        _add(c, "Erin keeps bees on the roof")
        _add(c, "Erin's bike is green")
        with service.client(service.token(frank).token) as f:
            _add(f, "Frank plays the oboe")
        before = row_counts(service_raw)
        for body in ({"user_id": frank}, {"agent_id": "planner"}):
            error = _error(c.request("DELETE", "/v1/user", json=body), 403)
            assert error["type"] == "PermissionDenied"
        assert _error(c.request("DELETE", "/v1/user", json={"dry_run": True}), 422)
        assert _error(c.request("DELETE", "/v1/user", json={"everything": True}), 422)
        assert row_counts(service_raw) == before
        assert _count(service_raw, erin) == 2 and _count(service_raw, frank) == 1
        # Naming itself, or saying no dry run, is an erase as before.
        r = c.request("DELETE", "/v1/user", json={"user_id": erin, "dry_run": False})
        assert r.status_code == 200 and r.json() == {"deleted": 2}
    assert _count(service_raw, erin) == 0 and _count(service_raw, frank) == 1


def test_deleting_a_memory_with_a_body_naming_another_user_deletes_nothing(
    service, fresh_user, service_raw
):
    gina = fresh_user("gina")
    with service.client(service.token(gina).token) as c:
        memory_id = _add(c, "Gina's flight leaves at nine")
        bad = c.request("DELETE", f"/v1/memories/{memory_id}", json={"user_id": "someone"})
        assert _error(bad, 403)["type"] == "PermissionDenied"
        dry = c.request("DELETE", f"/v1/memories/{memory_id}", json={"dry_run": True})
        assert _error(dry, 422)
        assert c.get(f"/v1/memories/{memory_id}").status_code == 200
        assert c.delete(f"/v1/memories/{memory_id}").status_code == 204


def test_an_admin_erase_with_a_body_or_query_naming_another_user_erases_no_one(
    service, fresh_user, service_raw
):
    hugo, ivan = fresh_user("hugo"), fresh_user("ivan")
    for user in (hugo, ivan):
        with service.client(service.token(user).token) as c:
            _add(c, f"{user} likes tea")
    with service.client(service.token("admin", admin=True).token) as admin:
        path = f"/v1/admin/users/{hugo}"
        assert _error(admin.request("DELETE", path, json={"user_id": ivan}), 403)
        assert _error(admin.delete(path, params={"user_id": ivan}), 403)
        assert _error(admin.request("DELETE", path, json={"dry_run": True}), 422)
        assert _count(service_raw, hugo) == 1 and _count(service_raw, ivan) == 1
        assert admin.delete(path).json() == {"deleted": 1}
    assert _count(service_raw, ivan) == 1


def test_a_query_naming_another_user_or_agent_is_403_on_every_route(
    service, fresh_user, service_raw
):
    jane, kate = fresh_user("jane"), fresh_user("kate")
    with service.client(service.token(jane).token) as c:
        memory_id = _add(c, "Jane's office is on the fifth floor")
        before = row_counts(service_raw)
        calls = [
            ("POST", "/v1/memories", {"text": "written to kate?"}),
            ("POST", "/v1/memories/batch", {"items": [{"text": "batch to kate?"}]}),
            ("POST", "/v1/search", {"query": "office"}),
            ("GET", "/v1/memories", None),
            ("GET", f"/v1/memories/{memory_id}", None),
            ("PUT", f"/v1/memories/{memory_id}", {"text": "Jane moved to the sixth floor"}),
            ("DELETE", f"/v1/memories/{memory_id}", None),
            ("GET", "/v1/history", None),
            ("GET", "/v1/stats", None),
            ("GET", "/v1/export", None),
            ("DELETE", "/v1/user", None),
            ("GET", "/v1/entities", None),
        ]
        for method, path, body in calls:
            for params in ({"user_id": kate}, {"agent_id": "coder"}):
                r = c.request(method, path, json=body, params=params)
                assert _error(r, 403)["type"] == "PermissionDenied", (method, path, params)
        assert row_counts(service_raw) == before
        # The token's own name in the query is no different from leaving it out.
        assert c.get("/v1/memories", params={"user_id": jane}).status_code == 200
        # Two values, one of them another user's, are refused too.
        r = c.get("/v1/memories", params=[("user_id", jane), ("user_id", kate)])
        assert _error(r, 403)


def test_a_query_parameter_the_route_does_not_take_is_400_and_nothing_is_done(
    service, fresh_user, service_raw
):
    lara = fresh_user("lara")
    with service.client(service.token(lara).token) as c:
        memory_id = _add(c, "Lara rides a red scooter")
        before = row_counts(service_raw)
        for method, path, params in (
            ("POST", "/v1/memories", {"text": "in the query"}),
            ("DELETE", "/v1/user", {"dry_run": "true"}),
            ("DELETE", f"/v1/memories/{memory_id}", {"confirm": "yes"}),
            ("GET", "/v1/memories", {"limt": "5"}),
            ("GET", "/v1/entities", {"kinds": "person"}),
        ):
            body = {"text": "Lara rides a blue scooter"} if method == "POST" else None
            error = _error(c.request(method, path, params=params, json=body), 400)
            assert error["type"] == "UnknownParameter"
            assert next(iter(params)) in error["message"]
        assert row_counts(service_raw) == before
        # What a route takes is still taken.
        assert len(c.get("/v1/memories", params={"limit": 1}).json()["memories"]) == 1
        assert c.get("/healthz", params={"x": "1"}).status_code == 400


async def test_mcp_tools_refuse_arguments_their_schema_lacks(service, fresh_user, service_raw):
    mia, noah = fresh_user("mia"), fresh_user("noah")
    async with http_client(service, service.token(mia).token) as c:
        _data(await c.call_tool("add_memory", {"text": "Mia studies marine biology"}))
        tools = (await c.list_tools()).tools
        assert all(t.input_schema.get("additionalProperties") is False for t in tools)
        before = row_counts(service_raw)
        for name, args in (
            ("add_memory", {"text": "Noah's fact?", "user_id": noah}),
            ("add_memory", {"text": "as the coder?", "agent_id": "coder"}),
            ("search_memory", {"query": "biology", "user_id": noah}),
            ("list_recent_memories", {"user_id": noah}),
            ("forget_memory", {"memory_id": "00000000-0000-0000-0000-000000000000", "x": 1}),
        ):
            text = _error_text(await c.call_tool(name, args))
            assert "Extra inputs are not permitted" in text, (name, text)
        assert row_counts(service_raw) == before
        found = _data(await c.call_tool("search_memory", {"query": "biology"}))
        assert [r["text"] for r in found["results"]] == ["Mia studies marine biology"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

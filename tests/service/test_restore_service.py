"""Undoing a wrong replacement through the running service: HTTP and the MCP client."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.integration._security_support import row_counts
from tests.service.test_mcp import _data, _error_text, http_client

DARK = "The user prefers dark mode"
LIGHT = "The user prefers light mode"


def _add(client, text, **fields):
    r = client.post("/v1/memories", json={"text": text, "memory_type": "user_profile", **fields})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _search(client, query):
    r = client.post("/v1/search", json={"query": query, "top_k": 5})
    return [h["id"] for h in r.json()["results"]]


def test_http_restores_a_replaced_memory_and_history_says_why_and_who(
    service, fresh_user, service_raw
):
    user = fresh_user("alice")
    with service.client(service.token(user, agent_id="web").token) as c:
        old, new = _add(c, DARK), _add(c, LIGHT)
        assert c.get(f"/v1/memories/{old}").json()["superseded_by"] == new
        assert old not in _search(c, "dark mode")

        r = c.post(f"/v1/memories/{old}/restore")

        assert r.status_code == 200, r.text
        assert r.json() == {"id": old, "restored": [old], "replaced_by": new, "replacement": "kept"}
        assert _search(c, "dark mode")[0] == old
        assert new in _search(c, "light mode")
        events = c.get(f"/v1/memories/{old}/history").json()["events"]
        assert [e["event"] for e in events] == ["added", "superseded", "restored"]
        assert events[1]["detail"]["reason"] == "similar" and events[1]["detail"]["by"] == new
        assert events[2]["detail"]["agent"] == "web" and events[2]["at"]
        assert c.get("/v1/history", params={"limit": 1}).json()["events"][0]["event"] == "restored"

        before = row_counts(service_raw)
        again = c.post(f"/v1/memories/{old}/restore")
        assert again.status_code == 409
        assert again.json()["error"]["type"] == "NothingToRestore"
        assert "is current" in again.json()["error"]["message"]
        bad = c.post("/v1/memories/not-an-id/restore")
        assert bad.status_code == 422 and "not a memory id" in bad.json()["error"]["message"]
        assert row_counts(service_raw) == before


def test_http_never_restores_another_users_or_agents_memory(service, fresh_user, service_raw):
    user, other = fresh_user("team"), fresh_user("bob")
    with (
        service.client(service.token(user, agent_id="coder").token) as coder,
        service.client(service.token(user, agent_id="planner").token) as planner,
        service.client(service.token(other).token) as bob,
        service.client(service.token(user, read_only=True).token) as reader,
    ):
        old = _add(coder, DARK, private=True)
        _add(coder, LIGHT, private=True)
        before = row_counts(service_raw)
        for client in (planner, bob):
            r = client.post(f"/v1/memories/{old}/restore")
            assert r.status_code == 404 and r.json()["error"]["type"] == "MemoryNotFound"
            assert "dark" not in r.text
        assert reader.post(f"/v1/memories/{old}/restore").status_code == 403
        assert row_counts(service_raw) == before
        assert coder.get(f"/v1/memories/{old}").json()["superseded_at"] is not None
        assert coder.post(f"/v1/memories/{old}/restore").status_code == 200


async def test_mcp_restore_memory_tool_undoes_a_replacement(service, fresh_user, service_raw):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    async with (
        http_client(service, service.token(alice, agent_id="claude").token) as a,
        http_client(service, service.token(bob).token) as b,
    ):
        add = {"memory_type": "user_profile"}
        old = _data(await a.call_tool("add_memory", {"text": DARK, **add}))["id"]
        new = _data(await a.call_tool("add_memory", {"text": LIGHT, **add}))["id"]
        events = _data(await a.call_tool("memory_history", {"memory_id": old}))["events"]
        assert events[-1]["event"] == "superseded" and events[-1]["detail"]["reason"] == "similar"

        before = row_counts(service_raw)
        assert "MemoryNotFound" in _error_text(
            await b.call_tool("restore_memory", {"memory_id": old})
        )
        assert row_counts(service_raw) == before

        report = _data(await a.call_tool("restore_memory", {"memory_id": old}))
        assert report["restored"] == [old] and report["replaced_by"] == new

        hits = _data(await a.call_tool("search_memory", {"query": "dark mode", "top_k": 3}))
        assert hits["results"][0]["id"] == old
        events = _data(await a.call_tool("memory_history", {"memory_id": old}))["events"]
        assert [e["event"] for e in events] == ["added", "superseded", "restored"]
        assert events[-1]["detail"]["agent"] == "claude"
        text = _error_text(await a.call_tool("restore_memory", {"memory_id": old}))
        assert "NothingToRestore" in text and "is current" in text


async def test_a_read_only_mcp_server_offers_no_restore(service_db, fresh_user):
    from tests.service.test_mcp import stdio_server

    params = stdio_server(service_db, "--user", fresh_user("ro"), "--read-only")
    async with Client(params) as c:
        assert "restore_memory" not in {t.name for t in (await c.list_tools()).tools}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The MCP server through the mcp SDK's own client: stdio subprocess and streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.integration._security_support import row_counts
from tests.service.conftest import ROOT, service_env

TOOLS = {
    "search_memory",
    "add_memory",
    "update_memory",
    "restore_memory",
    "forget_memory",
    "memory_history",
    "list_recent_memories",
    "related_memories",
    "entity_memories",
    "list_entities",
}


def stdio_server(service_db: str, *flags: str) -> StdioServerParameters:
    """``memory-pg --database-url DB mcp FLAGS`` on stdio, as an MCP client starts it."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_pg", "--database-url", service_db, "mcp", *flags],
        env=service_env(),
        cwd=str(ROOT),
    )


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


@contextlib.asynccontextmanager
async def http_client(service: Any, token: str) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP with a bearer token (its HTTP client closed after)."""
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer " + token}, timeout=60) as http:
        transport = streamable_http_client(service.base_url + "/mcp", http_client=http)
        async with Client(transport) as client:
            yield client


async def test_tools_over_streamable_http_act_for_the_tokens_user_only(
    service, fresh_user, service_raw
):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    async with (
        http_client(service, service.token(alice).token) as a,
        http_client(service, service.token(bob).token) as b,
    ):
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert set(tools) == TOOLS
        assert "user_id" not in json.dumps(tools["search_memory"].input_schema)
        assert tools["add_memory"].description

        secret = _data(
            await b.call_tool(
                "add_memory", {"text": "bob's door code is 1234", "memory_type": "user_profile"}
            )
        )["id"]
        mine = _data(
            await a.call_tool(
                "add_memory", {"text": "We deploy with Kubernetes", "topic": "deploy"}
            )
        )["id"]
        found = _data(await a.call_tool("search_memory", {"query": "door code", "top_k": 10}))[
            "results"
        ]
        assert [h["id"] for h in found] == [mine]

        before = row_counts(service_raw)
        # Crafted ids of another user: refused as not found, nothing changes.
        for name, args in (
            ("forget_memory", {"memory_id": secret}),
            ("update_memory", {"memory_id": secret, "text": "door code is 0000"}),
        ):
            text = _error_text(await a.call_tool(name, args))
            assert "MemoryNotFound" in text
        assert _data(await a.call_tool("memory_history", {"memory_id": secret})) == {"events": []}
        # A tool argument naming a user is not part of any schema: refused.
        result = await a.call_tool("search_memory", {"query": "door", "user_id": bob})
        assert result.is_error or [h["id"] for h in _data(result)["results"]] != [secret]
        assert row_counts(service_raw) == before

        new = _data(
            await a.call_tool(
                "update_memory", {"memory_id": mine, "text": "We deploy with Nomad now"}
            )
        )["id"]
        recent = _data(await a.call_tool("list_recent_memories", {"limit": 5}))["memories"]
        assert [m["id"] for m in recent] == [new]
        events = _data(await a.call_tool("memory_history", {"memory_id": mine}))["events"]
        assert [e["event"] for e in events] == ["added", "superseded"]
        assert "MemoryConflict" in _error_text(
            await a.call_tool("update_memory", {"memory_id": mine, "text": "x"})
        )
        assert "InvalidArgument" in _error_text(
            await a.call_tool("forget_memory", {"memory_id": "nope"})
        )
        assert _data(await a.call_tool("forget_memory", {"memory_id": new})) == {"deleted": new}
        bob_hits = _data(await b.call_tool("search_memory", {"query": "door code"}))["results"]
        assert [h["id"] for h in bob_hits] == [secret]


async def test_a_read_only_token_gets_tool_errors_for_writes(service, fresh_user, service_raw):
    user = fresh_user("carol")
    before = row_counts(service_raw)
    async with http_client(service, service.token(user, read_only=True).token) as c:
        assert _data(await c.call_tool("search_memory", {"query": "anything"})) == {"results": []}
        text = _error_text(await c.call_tool("add_memory", {"text": "a fact"}))
        assert "read-only" in text
    assert row_counts(service_raw) == before


async def test_mcp_over_http_refuses_missing_revoked_and_admin_tokens(service, fresh_user):
    token = service.token(fresh_user("dan"))
    from sqlalchemy import create_engine

    from memory_pg.service.tokens import revoke_token

    engine = create_engine(service.db_url)
    try:
        revoke_token(engine, token.info.user_id, token.info.id)
    finally:
        engine.dispose()
    admin = service.token(fresh_user("ops"), admin=True).token
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(base_url=service.base_url) as raw:
        for bearer, status in ((None, 401), (token.token, 401), ("mpg_x", 401), (admin, 403)):
            h = dict(headers)
            if bearer:
                h["authorization"] = "Bearer " + bearer
            r = await raw.post("/mcp", json=body, headers=h)
            assert r.status_code == status, r.text
            assert r.json()["error"]["message"]


async def test_stdio_server_acts_for_the_user_of_its_flags(service_db, fresh_user, service_raw):
    user = fresh_user("erin")
    params = stdio_server(service_db, "--user", user, "--agent", "coder")
    async with Client(params) as c:
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS
        mid = _data(
            await c.call_tool(
                "add_memory",
                {"text": "Erin's project uses pytest", "memory_type": "project_status"},
            )
        )["id"]
        hits = _data(await c.call_tool("search_memory", {"query": "test framework"}))["results"]
        assert hits[0]["id"] == mid
        assert "InvalidInput" in _error_text(
            await c.call_tool("add_memory", {"text": "   "})
        ) or "EmptyText" in _error_text(await c.call_tool("add_memory", {"text": "   "}))
    owner = service_raw.execute(
        "SELECT user_id FROM memory_pg_memories WHERE id = %s", (mid,)
    ).fetchone()
    assert owner == (user,)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The MCP tools' bounds and refusals, through the mcp SDK's own client."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.integration._security_support import row_counts
from tests.service.test_http_refusals import FACTS
from tests.service.test_mcp import TOOLS, _data, _error_text, http_client, stdio_server

WRITE_TOOLS = {"add_memory", "update_memory", "forget_memory", "restore_memory"}


async def test_listing_an_unknown_memory_type_is_a_tool_error(service, fresh_user):
    async with http_client(service, service.token(fresh_user("lena")).token) as c:
        _data(await c.call_tool("add_memory", {"text": "Lena uses Vim"}))
        for value in ("bogus", "a\x00b"):
            text = _error_text(await c.call_tool("list_recent_memories", {"memory_type": value}))
            assert "UnknownMemoryType" in text
        listed = _data(await c.call_tool("list_recent_memories", {"memory_type": "key_decision"}))
        assert [m["text"] for m in listed["memories"]] == ["Lena uses Vim"]


async def test_memory_history_returns_the_latest_events_a_page_at_a_time(service, fresh_user):
    async with http_client(service, service.token(fresh_user("mona")).token) as c:
        ids = [_data(await c.call_tool("add_memory", {"text": text}))["id"] for text in FACTS[:22]]
        events = _data(await c.call_tool("memory_history", {}))["events"]
        assert len(events) == 20  # the default page, as for list_recent_memories
        assert [e["memory_id"] for e in events] == ids[-20:]
        page = _data(await c.call_tool("memory_history", {"limit": 2}))["events"]
        assert [e["memory_id"] for e in page] == ids[-2:]
        one = _data(await c.call_tool("memory_history", {"memory_id": ids[0], "limit": 5}))
        assert [e["event"] for e in one["events"]] == ["added"]
        assert (await c.call_tool("memory_history", {"limit": 101})).is_error


async def test_a_read_only_stdio_server_offers_no_tool_that_writes(
    service_db, fresh_user, service_raw
):
    user = fresh_user("nina")
    params = stdio_server(service_db, "--user", user, "--read-only")
    before = row_counts(service_raw)
    async with Client(params) as c:
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS - WRITE_TOOLS
        assert _data(await c.call_tool("search_memory", {"query": "anything"})) == {"results": []}
        assert (await c.call_tool("add_memory", {"text": "a fact"})).is_error
    assert row_counts(service_raw) == before


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

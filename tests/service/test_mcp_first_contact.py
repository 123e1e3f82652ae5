"""``memory-pg mcp`` as an MCP client meets it (issue 37), through the mcp SDK's own client:
a database it cannot use is a tool error on each call, not a dead server; tools read
cleanly; a question is not stored as a fact."""

from __future__ import annotations

import pytest
from mcp import Client

from memory_pg.config import BUILTIN_MEMORY_TYPES
from tests.service.test_mcp import _data, _error_text, stdio_server

DOWN = "postgresql://memory:secret@127.0.0.1:1/memory"


@pytest.mark.parametrize(
    ("url", "said"),
    [(DOWN, "host and port"), ("postgresql://...", "postgresql://USER:PASSWORD@HOST")],
)
async def test_a_database_it_cannot_use_is_a_tool_error_on_each_call(url, said):
    async with Client(stdio_server(url, "--user", "alice")) as c:  # initialize answered
        assert "search_memory" in {t.name for t in (await c.list_tools()).tools}
        for _ in range(2):
            text = _error_text(await c.call_tool("search_memory", {"query": "database"}))
            assert said in text and "secret" not in text
        text = _error_text(await c.call_tool("add_memory", {"text": "We use PostgreSQL"}))
        assert said in text


async def test_descriptions_enums_and_argument_errors_read_cleanly():
    async with Client(stdio_server(DOWN, "--user", "alice")) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        for tool in tools.values():
            assert tool.description and not tool.description.startswith(" ")
            assert all(not line.startswith(" ") for line in tool.description.splitlines())
        enum = list(BUILTIN_MEMORY_TYPES)
        assert tools["add_memory"].input_schema["properties"]["memory_type"]["enum"] == enum
        searched = tools["search_memory"].input_schema["properties"]["memory_types"]
        assert searched["anyOf"][0]["items"]["enum"] == enum
        listed = tools["list_recent_memories"].input_schema["properties"]["memory_type"]
        assert listed["anyOf"][0]["enum"] == enum

        text = _error_text(await c.call_tool("search_memory", {"query": "x", "top_k": "abc"}))
        assert "InvalidArgument: top_k: " in text and "'abc'" in text
        assert "\n" not in text and "pydantic" not in text and "http" not in text
        text = _error_text(await c.call_tool("search_memory", {}))
        assert "query: Field required" in text and "\n" not in text


async def test_a_question_added_as_a_decision_is_refused_and_writes_nothing(
    service_db, fresh_user, service_raw
):
    user = fresh_user("quinn")
    async with Client(stdio_server(service_db, "--user", user)) as c:
        text = _error_text(await c.call_tool("add_memory", {"text": "Which database did we pick?"}))
        assert "InvalidInput: a question" in text
        fact = _data(await c.call_tool("add_memory", {"text": "We picked PostgreSQL"}))["id"]
        hits = _data(await c.call_tool("search_memory", {"query": "Which database did we pick?"}))
        assert [h["id"] for h in hits["results"]] == [fact]
        # Words kept as said are the caller's to keep, question or not.
        kept = {"text": "Which database did we pick?", "memory_type": "dialogue"}
        assert _data(await c.call_tool("add_memory", kept))["id"]
    rows = service_raw.execute(
        "SELECT memory_type FROM memory_pg_memories WHERE user_id = %s ORDER BY id", (user,)
    ).fetchall()
    assert rows == [("key_decision",), ("dialogue",)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The service's log at ``-v`` carries no user's words: routes as templates, MCP failures
without their text (issue 38, point 4). The package's service runs with ``-v``."""

from __future__ import annotations

import secrets
import time

import pytest

from tests.service.test_mcp import _error_text, http_client


def _log_has(service, needle: str) -> bool:
    return needle in service.log.read_text(errors="replace")


async def test_names_from_memories_stay_out_of_the_log(service, fresh_user):
    name = "Zebulon" + secrets.token_hex(4)
    token = service.token(fresh_user("gus")).token
    with service.client(token) as c:
        r = c.post("/v1/memories", json={"text": f"Gus met {name} at the harbour"})
        assert r.status_code == 201
        for path in (f"/v1/entities/{name}", f"/v1/entities/{name}/graph"):
            assert c.get(path).status_code in (200, 404)
        assert c.get(f"/v1/no-such-route/{name}").status_code == 404
    async with http_client(service, token) as m:
        text = _error_text(await m.call_tool("forget_memory", {"memory_id": name}))
        assert name in text  # the caller is told; the log is not
    time.sleep(0.3)  # the last log lines
    log = service.log.read_text(errors="replace")
    assert '"path": "/v1/entities/{name}"' in log
    assert "(text not logged)" in log
    assert name not in log


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

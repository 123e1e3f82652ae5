"""The service's event loop: uvloop where it is installed, asyncio's when asked."""

from __future__ import annotations

import asyncio

import pytest

from memory_pg.errors import ConfigurationError
from memory_pg.service.serving import _event_loop_run

uvloop = pytest.importorskip("uvloop")


def _loop_module(monkeypatch: pytest.MonkeyPatch, setting: str | None) -> str:
    if setting is None:
        monkeypatch.delenv("MEMORY_PG_EVENT_LOOP", raising=False)
    else:
        monkeypatch.setenv("MEMORY_PG_EVENT_LOOP", setting)
    seen: list[str] = []

    async def serve() -> None:
        seen.append(type(asyncio.get_running_loop()).__module__)

    _event_loop_run(serve())
    return seen[0]


def test_the_service_runs_on_uvloop_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _loop_module(monkeypatch, None).startswith("uvloop")


@pytest.mark.parametrize("setting", ["asyncio", " AsyncIO "])
def test_asyncio_loop_when_asked(monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    assert _loop_module(monkeypatch, setting).startswith("asyncio")


def test_an_unknown_loop_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_PG_EVENT_LOOP", "tokio")
    ran: list[bool] = []

    async def serve() -> None:
        ran.append(True)

    with pytest.raises(ConfigurationError, match="MEMORY_PG_EVENT_LOOP"):
        _event_loop_run(serve())
    assert not ran

"""The service's store keeps its connections: no overflow to open and close under load."""

from __future__ import annotations

import pytest

from memory_pg.config import StoreSettings
from memory_pg.opening import engine_options
from memory_pg.service.serving import service_store_settings


def test_the_service_keeps_as_many_connections_as_a_store_may_hold() -> None:
    default = StoreSettings()
    settings = service_store_settings()
    options = engine_options(settings)
    # The same ten at most, all kept: none is closed on its way back to the pool.
    assert options["pool_size"] == default.pool_size + default.max_overflow
    assert options["max_overflow"] == 0
    assert settings.pool_timeout_s == default.pool_timeout_s


def test_the_service_honours_the_pooler_from_its_option_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_PG_POOLER", "transaction")
    assert service_store_settings().pooler == "transaction"
    assert service_store_settings("session").pooler == "session"
    monkeypatch.delenv("MEMORY_PG_POOLER")
    assert service_store_settings().pooler is None

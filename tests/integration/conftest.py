"""Fixtures shared by the integration tests that log in as the package's roles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.integration._security_support import login_role, url_as


@pytest.fixture
def app_url(raw: psycopg.Connection[Any], db_url: str) -> Iterator[str]:
    """This test's database, logged in as a fresh member of ``memory_pg_app``."""
    with login_role(raw, "memory_pg_app") as (name, password):
        yield url_as(db_url, name, password)


@pytest.fixture
def maintenance_url(raw: psycopg.Connection[Any], db_url: str) -> Iterator[str]:
    """This test's database, logged in as a fresh member of ``memory_pg_maintenance``."""
    with login_role(raw, "memory_pg_maintenance") as (name, password):
        yield url_as(db_url, name, password)

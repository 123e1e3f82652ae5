"""MemoryStore and AsyncMemoryStore: the same public methods with the same signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.store import MemoryStore

#: What only the async store has: opening is explicit there (``await store.open()``).
ASYNC_ONLY = {"open"}


def _public(cls: type) -> dict[str, Any]:
    return {
        name: inspect.getattr_static(cls, name) for name in dir(cls) if not name.startswith("_")
    }


def _as_sync(annotation: Any) -> str:
    """An async annotation as the sync one reads (``AsyncConnection`` -> ``Connection``)."""
    return (
        str(annotation)
        .replace("AsyncMemoryStore", "MemoryStore")
        .replace("AsyncConnection", "Connection")
    )


def test_the_async_store_has_every_public_method_and_no_other() -> None:
    sync, twin = _public(MemoryStore), _public(AsyncMemoryStore)
    assert set(twin) - set(sync) == ASYNC_ONLY
    assert set(sync) <= set(twin)


@pytest.mark.parametrize("name", sorted(_public(MemoryStore)))
def test_each_method_has_the_same_signature(name: str) -> None:
    sync = inspect.getattr_static(MemoryStore, name)
    twin = inspect.getattr_static(AsyncMemoryStore, name)
    assert type(sync) is type(twin)  # method, classmethod, property or value alike
    if isinstance(sync, property) or not (callable(sync) or isinstance(sync, classmethod)):
        return
    plain_sync = sync.__func__ if isinstance(sync, classmethod) else sync
    plain_twin = twin.__func__ if isinstance(twin, classmethod) else twin
    if not isinstance(sync, classmethod):
        assert inspect.iscoroutinefunction(plain_twin), f"AsyncMemoryStore.{name} is not async"
    a, b = inspect.signature(plain_sync), inspect.signature(plain_twin)
    assert [(p.name, p.kind, p.default) for p in a.parameters.values()] == [
        (p.name, p.kind, p.default) for p in b.parameters.values()
    ]
    assert [str(p.annotation) for p in a.parameters.values()] == [
        _as_sync(p.annotation) for p in b.parameters.values()
    ]
    assert str(a.return_annotation) == _as_sync(b.return_annotation)


def test_the_async_store_holds_no_sync_store_and_no_private_of_it() -> None:
    source = Path(inspect.getfile(AsyncMemoryStore)).read_text("utf-8")
    imported = {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module == "memory_pg.store"
        for alias in node.names
    }
    assert imported == set()
    assert "create_engine(" not in source.replace("create_async_engine(", "")

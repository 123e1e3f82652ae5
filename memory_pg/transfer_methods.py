"""The stores' export and import methods, written once like :mod:`memory_pg.methods`."""

from __future__ import annotations

from typing import IO, Any

from memory_pg.methods import StoreBase
from memory_pg.operations import Op
from memory_pg.operations import blocking as _blocking
from memory_pg.operations import read as _read
from memory_pg.operations import run as _run
from memory_pg.plans import setup, transfer
from memory_pg.plans.write import scope_user


def _read_import(store: StoreBase[Any], source: str | IO[str], user_id: str) -> list[Any]:
    return transfer.load_rows(source, user_id, store.settings, store.embedder)


def export_user_memory(
    self: StoreBase[Any],
    target: str | IO[str],
    *,
    user_id: str | None = None,
    include_inactive: bool = True,
    with_embeddings: bool = True,
) -> Op[int]:
    """Write a user's memories as JSON lines (a path or a text file); returns the count."""
    uid = scope_user(user_id, self.user_id, self.settings)
    rows = yield from _read(lambda: transfer.plan_export(uid, include_inactive), uid)
    return (yield from _blocking(transfer.write_lines, target, rows, with_embeddings))


def import_user_memory(
    self: StoreBase[Any], source: str | IO[str], *, user_id: str | None = None
) -> Op[int]:
    """Load JSON lines written by :meth:`export_user_memory` into a user; returns rows added.

    Ids, timestamps, validity and use counts are kept; vectors are reused when they
    come from the same model and re-embedded otherwise (another model, the wrong
    length, all zero). Rows whose id (or exact text) is already there are skipped.
    All or nothing: a damaged line raises :class:`~memory_pg.errors.InvalidImport`.
    """
    uid = scope_user(user_id, self.user_id, self.settings)
    rows = yield from _blocking(_read_import, self, source, uid)
    if not rows:
        return 0
    added = yield from _run(transfer.plan_import(rows, self.embedder.model_name), uid)
    yield from _run(setup.plan_analyze(added), None, best_effort=True)
    return added


__all__ = ["export_user_memory", "import_user_memory"]

"""Setup plans: record or check the embedding model of a database, and its health (no I/O)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_pg.embedding import Embedder
from memory_pg.errors import EmbeddingDimensionMismatch, EmbeddingModelMismatch
from memory_pg.plans.protocol import Plan, final
from memory_pg.sql import setup

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddingInfo:
    """The model the database records, and its vector dimension."""

    model: str
    dimension: int


def check_recorded(recorded: Mapping[str, Any], embedder: Embedder) -> EmbeddingInfo:
    """The recorded model, if it is this store's; else the mismatch error."""
    model = embedder.model_name
    info = EmbeddingInfo(str(recorded["model"]), int(recorded["dimension"]))
    if info.model == model:
        # Same model: its dimension is the recorded one; no need to load it now.
        return info
    dim = embedder.dimension
    if info.dimension != dim:
        raise EmbeddingDimensionMismatch(
            db_model=info.model,
            db_dim=info.dimension,
            configured_model=model,
            configured_dim=dim,
        )
    raise EmbeddingModelMismatch(
        f"database vectors come from {info.model}, configured model is {model}: "
        f"vectors of two models are not comparable. Keep {info.model} "
        f"(MEMORY_PG_EMBEDDING_MODEL={info.model}) or run "
        f"`memory-pg reembed --model {model}`"
    )


def plan_embedding_check(embedder: Embedder) -> Plan[EmbeddingInfo]:
    """Record the model on a new database; refuse a model that does not match."""
    rows = yield setup.read_setting(setup.EMBEDDING_SETTING)
    model = embedder.model_name
    if rows:
        return check_recorded(rows[0]["value"], embedder)
    dim = embedder.dimension
    col = yield setup.embedding_column_dim()
    column_dim = col[0]["dim"] if col else None
    if column_dim is not None and column_dim != dim:
        any_rows = yield setup.count_rows()
        if any_rows[0]["any_rows"]:
            raise EmbeddingDimensionMismatch(
                db_model="(unrecorded)",
                db_dim=column_dim,
                configured_model=model,
                configured_dim=dim,
            )
        logger.warning(
            "empty memory table declared vector(%d); resizing to vector(%d) for %s",
            column_dim,
            dim,
            model,
        )
        # Not ``yield from``: the driver send()s results, which a list iterator refuses.
        for stmt in setup.resize_embedding_column(dim):  # noqa: UP028
            yield stmt
    # Through the SECURITY DEFINER function of 0005: the app role cannot write settings,
    # and a store that raced another to a new database gets what the other recorded.
    recorded = yield setup.record_embedding(model, dim)
    return check_recorded(recorded[0]["value"], embedder)


def plan_analyze(written: int) -> Plan[bool]:
    """After a write of ``written`` rows: have the memories table analyzed if enough of
    it changed since it last was (``sql.setup.analyze_after_bulk_write``); whether it
    was. A smaller write asks nothing."""
    if written < setup.BULK_ROWS:
        return False
    rows = yield final(setup.analyze_after_bulk_write(written))
    return bool(rows[0]["analyzed"])


def plan_health() -> Plan[dict[str, Any]]:
    """The server's and pgvector's versions."""
    rows = yield setup.health()
    return dict(rows[0])


def health_dict(
    found: Mapping[str, Any],
    revision: str | None,
    head: str,
    url: str,
    embedding: EmbeddingInfo,
) -> dict[str, Any]:
    """What ``healthcheck`` returns: connection, pgvector, schema revision and model."""
    return {
        "ok": found["vector_version"] is not None and revision == head,
        "database": url,
        "server_version": found["server_version"],
        "vector_extension": found["vector_version"],
        "revision": revision,
        "head_revision": head,
        "embedding_model": embedding.model,
        "embedding_dimension": embedding.dimension,
    }

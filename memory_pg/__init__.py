"""memory-pg: long-term memory for LLM agents, kept in PostgreSQL with pgvector."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_pg.async_store import AsyncMemoryStore
    from memory_pg.compaction import AsyncMemoryCompactor, CompactedMemory, MemoryCompactor
    from memory_pg.config import LLMSettings, RankingSettings, StoreSettings
    from memory_pg.errors import (
        ConfigurationError,
        DatabaseError,
        DatabaseUnavailable,
        EmbeddingDimensionMismatch,
        EmbeddingError,
        InvalidInput,
        LLMError,
        MemoryNotFound,
        MemoryPgError,
        MissingUserScope,
        SchemaNotReady,
        UnknownMemoryType,
    )
    from memory_pg.llm import AsyncOpenAICompatibleLLM, OpenAICompatibleLLM
    from memory_pg.plans.shapes import MemoryInput
    from memory_pg.retrieval import AsyncMemoryRetriever, MemoryRetriever, RetrievalSettings
    from memory_pg.store import MemoryStore
    from memory_pg.wrapper import AsyncMemoryWrapper, HermesMemoryWrapper, MemoryWrapper

__version__ = "0.1.0"

# The module of each public name, imported on first use: ``import memory_pg.schema``
# (Alembic's env, ``memory-pg migrate``) or ``memory_pg.errors`` then loads only
# what it needs, not the stores, numpy and the Chinese segmenter.
_HOMES: dict[str, str] = {
    "MemoryInput": "memory_pg.plans.write",
    "AsyncMemoryStore": "memory_pg.async_store",
    "AsyncMemoryCompactor": "memory_pg.compaction",
    "CompactedMemory": "memory_pg.compaction",
    "MemoryCompactor": "memory_pg.compaction",
    "LLMSettings": "memory_pg.config",
    "RankingSettings": "memory_pg.config",
    "StoreSettings": "memory_pg.config",
    "ConfigurationError": "memory_pg.errors",
    "DatabaseError": "memory_pg.errors",
    "DatabaseUnavailable": "memory_pg.errors",
    "EmbeddingDimensionMismatch": "memory_pg.errors",
    "EmbeddingError": "memory_pg.errors",
    "InvalidInput": "memory_pg.errors",
    "LLMError": "memory_pg.errors",
    "MemoryNotFound": "memory_pg.errors",
    "MemoryPgError": "memory_pg.errors",
    "MissingUserScope": "memory_pg.errors",
    "SchemaNotReady": "memory_pg.errors",
    "UnknownMemoryType": "memory_pg.errors",
    "AsyncOpenAICompatibleLLM": "memory_pg.llm",
    "OpenAICompatibleLLM": "memory_pg.llm",
    "AsyncMemoryRetriever": "memory_pg.retrieval",
    "MemoryRetriever": "memory_pg.retrieval",
    "RetrievalSettings": "memory_pg.retrieval",
    "MemoryStore": "memory_pg.store",
    "AsyncMemoryWrapper": "memory_pg.wrapper",
    "HermesMemoryWrapper": "memory_pg.wrapper",
    "MemoryWrapper": "memory_pg.wrapper",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'memory_pg' has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AsyncMemoryCompactor",
    "AsyncMemoryRetriever",
    "AsyncMemoryStore",
    "AsyncMemoryWrapper",
    "AsyncOpenAICompatibleLLM",
    "CompactedMemory",
    "ConfigurationError",
    "DatabaseError",
    "DatabaseUnavailable",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "HermesMemoryWrapper",
    "InvalidInput",
    "LLMError",
    "LLMSettings",
    "MemoryCompactor",
    "MemoryInput",
    "MemoryNotFound",
    "MemoryPgError",
    "MemoryRetriever",
    "MemoryStore",
    "MemoryWrapper",
    "MissingUserScope",
    "OpenAICompatibleLLM",
    "RankingSettings",
    "RetrievalSettings",
    "SchemaNotReady",
    "StoreSettings",
    "UnknownMemoryType",
    "__version__",
]

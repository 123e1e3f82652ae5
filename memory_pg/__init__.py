"""memory-pg: long-term memory for LLM agents, kept in PostgreSQL with pgvector."""

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
from memory_pg.plans.write import MemoryInput
from memory_pg.retrieval import AsyncMemoryRetriever, MemoryRetriever, RetrievalSettings
from memory_pg.store import MemoryStore
from memory_pg.wrapper import AsyncMemoryWrapper, HermesMemoryWrapper, MemoryWrapper

__version__ = "0.1.0"

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

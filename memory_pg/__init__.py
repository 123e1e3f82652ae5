"""memory-pg: long-term memory for LLM agents, kept in PostgreSQL with pgvector."""

from memory_pg.config import LLMSettings, StoreSettings
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

__version__ = "0.1.0"

__all__ = [
    "ConfigurationError",
    "DatabaseError",
    "DatabaseUnavailable",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "InvalidInput",
    "LLMError",
    "LLMSettings",
    "MemoryNotFound",
    "MemoryPgError",
    "MissingUserScope",
    "SchemaNotReady",
    "StoreSettings",
    "UnknownMemoryType",
    "__version__",
]

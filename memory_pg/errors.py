"""The memory-pg error hierarchy: one root, children that name the problem and the fix."""

from __future__ import annotations


class MemoryPgError(Exception):
    """Root of every error memory-pg raises on purpose."""


class InvalidInput(MemoryPgError, ValueError):
    """Input that memory-pg refuses before anything is written."""


class EmptyText(InvalidInput):
    """Memory text that is empty or only whitespace."""


class TextTooLong(InvalidInput):
    """Memory text longer than the configured limit (``max_text_chars``)."""


class InvalidText(InvalidInput):
    """Memory text that PostgreSQL cannot store: NUL bytes or lone surrogates."""


class InvalidMetadata(InvalidInput):
    """Metadata that is not a JSON object of JSON-serialisable values, or too large."""


class UnknownMemoryType(InvalidInput):
    """A memory type that is neither built in nor registered on the store."""


class InvalidUserId(InvalidInput):
    """A user id that is empty, too long or holds characters memory-pg refuses."""


class MissingUserScope(InvalidInput):
    """A call with no user: bind ``user_id`` on the store or pass ``user_id=``."""


class InvalidArgument(InvalidInput):
    """Any other argument out of range (``top_k``, ``importance``, timestamps...)."""


class MemoryNotFound(MemoryPgError, LookupError):
    """No memory with that id exists for this user."""


class ConfigurationError(MemoryPgError):
    """Settings that contradict each other or point at nothing."""


class EmbeddingError(MemoryPgError):
    """The embedding model could not be loaded or failed to embed."""


class EmbeddingDimensionMismatch(EmbeddingError):
    """The database holds vectors of another dimension than the configured model gives."""

    def __init__(
        self, *, db_model: str, db_dim: int, configured_model: str, configured_dim: int
    ) -> None:
        self.db_model = db_model
        self.db_dim = db_dim
        self.configured_model = configured_model
        self.configured_dim = configured_dim
        super().__init__(
            f"database holds {db_dim}-d vectors from {db_model}, configured model "
            f"{configured_model} gives {configured_dim}: keep using {db_model} "
            f"(MEMORY_PG_EMBEDDING_MODEL={db_model}) or run "
            f"`memory-pg reembed --model {configured_model}`"
        )


class DatabaseError(MemoryPgError):
    """A database operation failed; the driver's error is chained as ``__cause__``."""


class DatabaseUnavailable(DatabaseError):
    """The database could not be reached (down, refused, timed out)."""


class SchemaNotReady(DatabaseError):
    """The schema is missing or older than this library: run ``memory-pg migrate``."""


class EmbeddedServerError(DatabaseError):
    """The embedded PostgreSQL could not be started."""


class LLMError(MemoryPgError):
    """The LLM endpoint failed after retries, or answered something unusable."""


class LLMResponseUnparseable(LLMError):
    """The LLM answered, but no JSON object could be recovered from its reply."""


__all__ = [
    "ConfigurationError",
    "DatabaseError",
    "DatabaseUnavailable",
    "EmbeddedServerError",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "EmptyText",
    "InvalidArgument",
    "InvalidInput",
    "InvalidMetadata",
    "InvalidText",
    "InvalidUserId",
    "LLMError",
    "LLMResponseUnparseable",
    "MemoryNotFound",
    "MemoryPgError",
    "MissingUserScope",
    "SchemaNotReady",
    "TextTooLong",
    "UnknownMemoryType",
]


class QueryTimeout(DatabaseError):
    """A statement ran past ``StoreSettings.statement_timeout_ms`` and was cancelled, or
    waited past a ``lock_timeout`` for a lock another transaction holds."""


class EmbeddingModelMismatch(EmbeddingError):
    """The database records another embedding model than the one configured."""


__all__ += ["EmbeddingModelMismatch", "QueryTimeout"]


class InvalidEvalSet(InvalidInput):
    """An evaluation file that is not the expected JSON shape (see ``memory_pg.evaluation``)."""


class AccessDenied(DatabaseError):
    """The database role lacks a privilege (SQLSTATE 42501): grant it ``memory_pg_app``."""


class TenantViolation(AccessDenied):
    """Row-level security refused a row of another user than the transaction's tenant.

    The store never writes across tenants; seeing this means a caller's own
    connection or SQL tried to, and the database stopped it.
    """


__all__ += ["AccessDenied", "TenantViolation"]


class InvalidImport(InvalidArgument):
    """A line of an import file that cannot be loaded; the message names the line."""


__all__ += ["InvalidImport"]


class TenantMismatch(TenantViolation):
    """A store bound to one user (``user_id=`` at construction) was asked for another.

    Raised before anything is read or written. A bound store serves its user only;
    a service that acts for many users opens one store with no ``user_id`` and
    passes ``user_id=`` per call (see docs/security.md for what that trusts).
    """


__all__ += ["TenantMismatch"]


class RoleRequired(AccessDenied):
    """A job was started with a database role that cannot do its work.

    Raised before the job changes anything: ``forget``, ``consolidate`` and
    ``stats`` of every user need a role that sees every user (a member of
    ``memory_pg_maintenance``, a superuser or a ``BYPASSRLS`` role); ``reembed``
    needs the owner of the tables. ``needed`` names the role to use.
    """

    def __init__(self, message: str, *, job: str, needed: str) -> None:
        self.job = job
        self.needed = needed
        super().__init__(message)


__all__ += ["RoleRequired"]


class AuthenticationFailed(MemoryPgError):
    """A service request with no token, or one that is unknown, revoked or expired."""


class PermissionDenied(MemoryPgError):
    """A token that may not do this: a read-only token writing, a request naming
    another user or agent than its token's, a user token on an admin route."""


__all__ += ["AuthenticationFailed", "PermissionDenied"]


class MemoryConflict(MemoryPgError):
    """The memory is no longer current (replaced or expired): act on its current successor."""


__all__ += ["MemoryConflict"]


class NothingToRestore(MemoryConflict):
    """``restore`` of a memory that no replacement took away: it is current already, or
    it expired (an expiry is undone by writing the memory again, with a later expiry)."""


__all__ += ["NothingToRestore"]


class UnknownParameter(InvalidArgument):
    """A service request with a query parameter its route does not take, or an MCP tool
    call with an argument its schema does not have: refused, never ignored (HTTP 400)."""


__all__ += ["UnknownParameter"]

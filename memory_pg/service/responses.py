"""The HTTP service's error responses: one body, ``{"error": {"type", "message"}}``, for all.

Typed memory-pg errors get the status of :data:`STATUS`; a request that fails
validation 422 (400 for malformed JSON); and what FastAPI and Starlette answer on
their own (an unknown route 404, a wrong method 405, a body that cannot be parsed
400) keeps its status but speaks the same body, so a client reads one shape.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from memory_pg.errors import (
    AccessDenied,
    AuthenticationFailed,
    DatabaseUnavailable,
    InvalidInput,
    MemoryConflict,
    MemoryNotFound,
    MemoryPgError,
    PermissionDenied,
    QueryTimeout,
    SchemaNotReady,
    TenantViolation,
    UnknownParameter,
)

logger = logging.getLogger(__name__)

__all__ = [
    "STATUS",
    "RequestTooLarge",
    "add_handlers",
    "allowed_methods",
    "error_body",
    "json_response",
    "status_of",
]


class _Encoded(JSONResponse):
    """Starlette's JSON body, with what JSON has no type for (times, UUIDs, sets, decimals)
    converted by FastAPI's ``jsonable_encoder`` as the encoder meets it.

    ``JSONResponse(jsonable_encoder(content))`` first copied the whole tree through that
    encoder in Python (about 350 calls for five search results: a tenth of the
    service's CPU on a search), then encoded the copy. Here the C encoder walks the
    tree and calls back only for the values it cannot write itself, which come out
    the same. A mapping's keys starting with ``_sa`` are kept (the encoder dropped
    them as SQLAlchemy's, from a user's metadata too)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(
            content,
            ensure_ascii=False,
            allow_nan=False,
            indent=None,
            separators=(",", ":"),
            default=_plain,
        ).encode("utf-8")


def _plain(value: Any) -> Any:
    # The results' own types first, as jsonable_encoder writes them; the rest through it.
    kind = type(value)
    if kind is datetime:
        return value.isoformat()
    if kind is uuid.UUID:
        return str(value)
    return jsonable_encoder(value)


def json_response(content: Any, status_code: int = 200) -> JSONResponse:
    """A JSON response of ``content``: dicts, lists, numbers, text, and the datetimes and
    UUIDs of memory-pg's results."""
    return _Encoded(content, status_code=status_code)


class RequestTooLarge(InvalidInput):
    """A request that asks for more work than the service does in one request (HTTP 413):
    a batch with more text than ``--max-batch-chars``."""


#: HTTP status of each typed error (the first class that matches, in this order).
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (AuthenticationFailed, 401),
    (PermissionDenied, 403),
    (TenantViolation, 403),
    (MemoryNotFound, 404),
    (MemoryConflict, 409),
    (UnknownParameter, 400),
    (RequestTooLarge, 413),
    (InvalidInput, 422),
    (DatabaseUnavailable, 503),
    (QueryTimeout, 503),
    (SchemaNotReady, 503),
    (AccessDenied, 503),
)

#: The error type of a status FastAPI or Starlette answer by themselves.
_HTTP_TYPES = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "RequestTooLarge",
}


def status_of(exc: Exception) -> int:
    """The HTTP status of a memory-pg error (500 for one with no mapping)."""
    for cls, code in STATUS:
        if isinstance(exc, cls):
            return code
    return 500


def error_body(kind: str, message: str) -> dict[str, Any]:
    """The JSON body of every error response."""
    return {"error": {"type": kind, "message": message}}


def _http_message(request: Request, exc: HTTPException) -> str:
    if exc.status_code == 404:
        return f"no route {request.method} {request.url.path}"
    if exc.status_code == 405:
        allowed = ", ".join(allowed_methods(request))
        return f"{request.method} is not allowed on {request.url.path}" + (
            f" (allowed: {allowed})" if allowed else ""
        )
    if _unparsed(exc):
        return _unparsed_message(exc.__cause__)
    return str(exc.detail)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route takes on this path (Starlette names only the first
    route's: ``GET`` for ``/v1/memories/{id}``, whose PUT and DELETE are routes of
    their own)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        regex, taken = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if regex is not None and taken and regex.match(request.url.path):
            methods |= set(taken)
    return sorted(methods)


def _unparsed_message(cause: BaseException | None) -> str:
    """Why a body that is not malformed JSON could not be read, in the client's words."""
    if isinstance(cause, UnicodeDecodeError):
        return "the request body is not valid UTF-8 text"
    if isinstance(cause, RecursionError):
        return "the request body's JSON is nested too deeply"
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return "a number in the request body has too many digits (at most 4300)"
    return "the request body could not be parsed as JSON"


def _unparsed(exc: HTTPException) -> bool:
    # FastAPI's answer to a body its JSON parser gave up on (valid JSON nested too
    # deeply lands here, not in json_invalid): malformed JSON to a client.
    return exc.status_code == 400 and exc.detail == "There was an error parsing the body"


def add_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` with :func:`error_body`."""

    @app.exception_handler(MemoryPgError)
    async def typed(request: Request, exc: MemoryPgError) -> JSONResponse:
        code = status_of(exc)
        headers = {"WWW-Authenticate": "Bearer"} if code == 401 else None
        if code >= 500:
            logger.warning("%s on %s: %s", type(exc).__name__, request.url.path, exc)
        return JSONResponse(
            error_body(type(exc).__name__, str(exc)), status_code=code, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        malformed = any(e.get("type") == "json_invalid" for e in errors)
        parts = []
        for e in errors[:10]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {e.get('msg')}")
        kind = "MalformedJSON" if malformed else "InvalidRequest"
        return JSONResponse(
            error_body(kind, "; ".join(parts)), status_code=400 if malformed else 422
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = "MalformedJSON" if _unparsed(exc) else _HTTP_TYPES.get(exc.status_code, "HTTPError")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers = {"Allow": ", ".join(allowed_methods(request))}
        return JSONResponse(
            error_body(kind, _http_message(request, exc)),
            status_code=exc.status_code,
            headers=headers or None,
        )

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        # Starlette logs the traceback after this answer; the client gets the shape only.
        return JSONResponse(
            error_body("InternalError", "the service failed; its log says why"),
            status_code=500,
        )

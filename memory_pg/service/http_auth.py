"""Who an HTTP request acts for: its bearer token, and the names and parameters it may carry.

The FastAPI dependencies of every ``/v1`` route (:mod:`memory_pg.service.http` and
:mod:`memory_pg.service.http_relations` both use them, so neither imports the
other's routes). A request acts for its token's user and agent only: a body or a
query parameter that names another user or agent is refused (403), and a query
parameter the route does not take is refused (400) rather than ignored, so that
``POST /v1/memories?user_id=bob`` cannot look as if it wrote to bob.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.errors import AuthenticationFailed, PermissionDenied, UnknownParameter
from memory_pg.service.tokens import TokenInfo, verify_token

__all__ = [
    "AdminToken",
    "AdminWriterToken",
    "UserToken",
    "WholeUserToken",
    "WriterToken",
    "check_names",
    "check_query",
]

#: Query parameters every route that acts for a user takes, if they name its own.
NAMES = ("user_id", "agent_id")


def check_names(info: TokenInfo, user_id: str | None, agent_id: str | None) -> None:
    """Refuse a request that names another user or agent than its token's."""
    if user_id is not None and user_id != info.user_id:
        raise PermissionDenied("this token acts for its own user only; leave user_id out")
    if agent_id is not None and agent_id != info.agent_id:
        raise PermissionDenied("this token acts as its own agent only; leave agent_id out")


def _query_names(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


async def check_query(request: Request) -> None:
    """Refuse a query parameter the route does not declare (``user_id`` and ``agent_id``
    are checked against the token instead, by the token's dependency)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.query_params:
        return
    taken = _query_names(route.dependant) | set(NAMES)
    unknown = sorted(set(request.query_params.keys()) - taken)
    if unknown:
        shown = ", ".join(repr(name[:40]) for name in unknown[:5])
        allowed = ", ".join(sorted(_query_names(route.dependant))) or "none"
        raise UnknownParameter(
            f"{request.method} {route.path} takes no query parameter {shown} (it takes: {allowed})"
        )


#: The OpenAPI security scheme of every ``/v1`` route: ``/docs`` shows "Authorize".
#: It refuses nothing itself (``auto_error=False``): a missing token is our 401 body.
bearer = HTTPBearer(
    scheme_name="token",
    bearerFormat="mpg_...",
    description="A token from `memory-pg token create --user USER` (bound to that user).",
    auto_error=False,
)


async def _token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> TokenInfo:
    value = "" if credentials is None else credentials.credentials.strip()
    if not value:
        raise AuthenticationFailed("a bearer token is required (Authorization: Bearer mpg_...)")
    store: AsyncMemoryStore = request.app.state.store
    info = await verify_token(store.engine, value)  # type: ignore[arg-type]
    request.scope.setdefault("state", {})["token_id"] = info.id
    return info


async def _user_token(request: Request, info: Annotated[TokenInfo, Depends(_token)]) -> TokenInfo:
    if info.is_admin:
        raise PermissionDenied("an admin token has no user of its own: use the /v1/admin routes")
    query = request.query_params
    check_names(info, _one(query.getlist("user_id")), _one(query.getlist("agent_id")))
    return info


def _one(values: list[str]) -> str | None:
    """A query parameter's value; given twice with two values, one of them is another's."""
    if not values:
        return None
    if len(set(values)) > 1:
        raise PermissionDenied("a query parameter names two users or agents")
    return values[0]


async def _writer_token(info: Annotated[TokenInfo, Depends(_user_token)]) -> TokenInfo:
    if info.read_only:
        raise PermissionDenied("this token is read-only")
    return info


async def _whole_user_token(info: Annotated[TokenInfo, Depends(_user_token)]) -> TokenInfo:
    # Export and erase reach every agent's private notes: not for an agent's token.
    if info.agent_id is not None:
        raise PermissionDenied(
            "export and erase act on all of the user's memories, every agent's private "
            "ones included: use a token without an agent (token create --user U)"
        )
    return info


async def _admin_token(request: Request, info: Annotated[TokenInfo, Depends(_token)]) -> TokenInfo:
    if not info.is_admin:
        raise PermissionDenied("this route needs an admin token (memory-pg token create --admin)")
    if any(name in request.query_params for name in NAMES):
        # An admin route names its user in the path, never beside it.
        raise PermissionDenied("an admin route takes its user from the path only")
    return info


async def _admin_writer_token(info: Annotated[TokenInfo, Depends(_admin_token)]) -> TokenInfo:
    # A read-only admin token is a monitoring token: it reads the admin stats only.
    if info.read_only:
        raise PermissionDenied("this admin token is read-only: it may not erase users")
    return info


UserToken = Annotated[TokenInfo, Depends(_user_token)]
WriterToken = Annotated[TokenInfo, Depends(_writer_token)]
AdminToken = Annotated[TokenInfo, Depends(_admin_token)]
AdminWriterToken = Annotated[TokenInfo, Depends(_admin_writer_token)]
WholeUserToken = Annotated[TokenInfo, Depends(_whole_user_token)]

"""Bearer tokens bound to tenants: create, list, revoke (CLI) and verify (service).

A token is ``mpg_`` followed by 256 random bits (URL-safe base64). PostgreSQL keeps
only its sha256 (``memory_pg_tokens.token_hash``): the token is printed once by
``memory-pg token create`` and cannot be read back. A token row fixes the user
(and optionally the agent) of every request made with it; ``read_only`` tokens
may not write; ``scope='admin'`` tokens are for maintenance across users and are
never created unless an operator asks. An admin token that is also read-only is a
monitoring token: it reads the admin stats and erases no one.

Row-level security on the table (migration 0006): a transaction sees its tenant's
tokens, and the one row whose hash it set in ``memory_pg.token_hash``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import (
    Engine,
    Insert,
    Select,
    String,
    Update,
    bindparam,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from memory_pg import exchange
from memory_pg._validate import check_agent_id as _check_agent_id
from memory_pg._validate import check_user_id
from memory_pg.config import StoreSettings
from memory_pg.errors import AuthenticationFailed, InvalidArgument
from memory_pg.plans.protocol import Plan, Rows, final, one, translate_errors
from memory_pg.plans.shapes import parse_memory_id
from memory_pg.sql.core import Bound
from memory_pg.sql.setup import set_tenant
from memory_pg.tables import tokens as t

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_LIFETIME",
    "TOKEN_PREFIX",
    "NewToken",
    "TokenInfo",
    "check_agent_id",
    "create_token",
    "hash_token",
    "list_tokens",
    "parse_duration",
    "revoke_token",
    "verify_token",
]

#: Every token starts with this, so a leaked one is easy to recognise (secret scanners).
TOKEN_PREFIX = "mpg_"

_SCOPES = ("user", "admin")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
#: The longest lifetime a token may be given; leave the expiry out for one that never ends.
MAX_LIFETIME = timedelta(days=100 * 365)
#: What every refused token hears, whatever the reason (the log says which).
_REFUSED = "a valid bearer token is required (Authorization: Bearer mpg_...)"
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_SETTINGS = StoreSettings()


@dataclass(frozen=True)
class TokenInfo:
    """One token as stored (never the token itself)."""

    id: str
    user_id: str
    agent_id: str | None
    scope: str
    read_only: bool
    label: str | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    @property
    def is_admin(self) -> bool:
        """A maintenance token: cross-user operations only, no user of its own."""
        return self.scope == "admin"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO 8601)."""
        return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class NewToken:
    """A token just created: ``token`` is shown once and is not stored anywhere."""

    token: str
    info: TokenInfo


def hash_token(token: str) -> str:
    """The hex sha256 the database keeps of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_duration(value: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``2w``, ``45s`` as a timedelta (positive, at most 100 years)."""
    match = _DURATION.match(value)
    if match and len(match.group(1)) > 9:  # past any lifetime (and int()'s digit limit)
        raise InvalidArgument(
            f"duration {value!r} is over 100 years (36500d); leave it out for no expiry"
        )
    if not match or int(match.group(1)) <= 0:
        raise InvalidArgument(
            f"not a duration: {value!r}; write a positive number and a unit, e.g. 90d, 12h, 2w"
        )
    try:
        duration = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    except OverflowError:
        duration = timedelta.max
    if duration > MAX_LIFETIME:
        raise InvalidArgument(
            f"duration {value!r} is over 100 years (36500d); leave it out for no expiry"
        )
    return duration


def check_agent_id(agent_id: object) -> str | None:
    """An agent id under the rules of a user id (None: no agent)."""
    return _check_agent_id(agent_id, _SETTINGS)


# -- statements (pure) -------------------------------------------------------------

_COLUMNS = (
    t.c.id,
    t.c.user_id,
    t.c.agent_id,
    t.c.scope,
    t.c.read_only,
    t.c.label,
    t.c.created_at,
    t.c.expires_at,
    t.c.revoked_at,
)


def _insert(row: Mapping[str, Any]) -> Insert:
    """Insert one token row (columns by name), returning what :func:`_info` reads."""
    return insert(t).values(dict(row)).returning(*_COLUMNS)


#: The row of a presented token's hash, read once the hash is revealed (:func:`_reveal`).
_LOOKUP = select(*_COLUMNS, (t.c.expires_at <= func.now()).label("expired")).where(
    t.c.token_hash == bindparam("token_hash")
)


_REVEAL = text(
    "SELECT set_config('memory_pg.token_hash', :token_hash, true), "
    "set_config('memory_pg.user_id', '', true)"
).bindparams(bindparam("token_hash", type_=String))


def _reveal(token_hash: str) -> Bound:
    """Reveal the row of this hash to the transaction (RLS), with no tenant set."""
    return Bound(_REVEAL, {"token_hash": token_hash})


def _plan_lookup(token_hash: str) -> Plan[Rows]:
    """The token row of a hash, read as the last statement of its transaction."""
    return one(final((_LOOKUP, {"token_hash": token_hash})))


def _list(user_id: str | None) -> Select[Any]:
    stmt = select(*_COLUMNS).order_by(t.c.user_id, t.c.created_at, t.c.id)
    if user_id is not None:
        stmt = stmt.where(t.c.user_id == user_id)
    return stmt


def _revoke(user_id: str, token_id: uuid.UUID) -> Update:
    return (
        t.update()
        .where(t.c.user_id == user_id, t.c.id == token_id, t.c.revoked_at.is_(None))
        .values(revoked_at=func.now())
        .returning(t.c.id)
    )


def _info(row: Any) -> TokenInfo:
    m = row if isinstance(row, Mapping) else row._mapping
    return TokenInfo(
        id=str(m["id"]),
        user_id=m["user_id"],
        agent_id=m["agent_id"],
        scope=m["scope"],
        read_only=bool(m["read_only"]),
        label=m["label"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
        revoked_at=m["revoked_at"],
    )


# -- I/O ------------------------------------------------------------------------------


def create_token(
    engine: Engine,
    user_id: str,
    *,
    agent_id: str | None = None,
    read_only: bool = False,
    expires_in: timedelta | None = None,
    admin: bool = False,
    label: str | None = None,
) -> NewToken:
    """Create a token for ``user_id`` (an admin token: ``user_id`` names its operator).

    ``admin`` with ``read_only``: a monitoring token, for the admin stats only.
    ``expires_in``: at most :data:`MAX_LIFETIME`; None, never.

    The returned ``NewToken.token`` is the only copy of the token: print it once.
    """
    uid = check_user_id(user_id, _SETTINGS)
    agent = check_agent_id(agent_id)
    if admin and agent is not None:
        raise InvalidArgument("an admin token has no agent")
    if expires_in is not None and expires_in <= timedelta(0):
        raise InvalidArgument("a token must expire in the future")
    if expires_in is not None and expires_in > MAX_LIFETIME:
        raise InvalidArgument("a token expires within 100 years, or never (expires_in=None)")
    if label is not None and (not isinstance(label, str) or len(label) > 200):
        raise InvalidArgument("a label is a text of at most 200 characters")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = None if expires_in is None else datetime.now(timezone.utc) + expires_in
    stmt = _insert(
        {
            "user_id": uid,
            "token_hash": hash_token(token),
            "agent_id": agent,
            "scope": "admin" if admin else "user",
            "read_only": read_only,
            "label": label,
            "expires_at": expires_at,
        }
    )
    with translate_errors(), engine.begin() as conn:
        conn.execute(set_tenant(uid))
        row = conn.execute(stmt).one()
    return NewToken(token, _info(row))


def list_tokens(engine: Engine, user_id: str | None = None) -> list[TokenInfo]:
    """Tokens of one user; with no user, every token the role may see (maintenance)."""
    uid = None if user_id is None else check_user_id(user_id, _SETTINGS)
    with translate_errors(), engine.begin() as conn:
        conn.execute(set_tenant(uid))
        return [_info(r) for r in conn.execute(_list(uid))]


def revoke_token(engine: Engine, user_id: str, token_id: str) -> bool:
    """Revoke one token of a user at once; False if there was no such live token."""
    uid = check_user_id(user_id, _SETTINGS)
    try:
        tid = parse_memory_id(token_id)
    except InvalidArgument:
        raise InvalidArgument(
            f"not a token id: {token_id!r} (`memory-pg token list` shows the ids)"
        ) from None
    with translate_errors(), engine.begin() as conn:
        conn.execute(set_tenant(uid))
        return conn.execute(_revoke(uid, tid)).first() is not None


async def verify_token(engine: AsyncEngine, token: str | None) -> TokenInfo:
    """The live token row of a presented token, or :class:`AuthenticationFailed`.

    Malformed, unknown, revoked and expired tokens fail alike to the caller, with
    one message: which it was is logged (with the token's id where there is one,
    never the token), for the operator. The clock is the database's.
    """
    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        logger.info("token refused: malformed")
        raise AuthenticationFailed(_REFUSED)
    token_hash = hash_token(token)
    # One network exchange: BEGIN, the hash revealed, the row read, COMMIT.
    with translate_errors():
        rows = await exchange.run_async(engine, (_reveal(token_hash),), _plan_lookup(token_hash))
    row = rows[0] if rows else None
    if row is None:
        logger.info("token refused: unknown")
        raise AuthenticationFailed(_REFUSED)
    info = _info(row)
    if info.revoked_at is not None:
        logger.info("token %s refused: revoked", info.id)
        raise AuthenticationFailed(_REFUSED)
    if row["expired"]:
        logger.info("token %s refused: expired", info.id)
        raise AuthenticationFailed(_REFUSED)
    return info

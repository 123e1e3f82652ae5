"""Input checks run before anything is written: bad input raises a typed error, writes nothing."""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from memory_pg.config import StoreSettings
from memory_pg.errors import (
    EmptyText,
    InvalidArgument,
    InvalidMetadata,
    InvalidText,
    InvalidUserId,
    MissingUserScope,
    TextTooLong,
    UnknownMemoryType,
)

JSONValue = Any  # a JSON-serialisable value; checked at run time
# Tabs and line breaks too: a user id is a key, and one that can forge a log line or
# look like another user's when printed is refused.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Characters that print as nothing (or as a space) but make another key: "al\u200bice",
# "\u202ealice" (bidi override) and "al\u00adice" (soft hyphen) would each be a tenant
# that prints as "alice". Format characters (Cf: zero-width, bidi controls, soft
# hyphen, tags) and separators (Zl, Zp) are refused by category; these are letters,
# marks or symbols that render blank, and spaces other than the ASCII one.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef]"
)
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def invisible_character(value: str) -> str | None:
    """The first character of ``value`` that is invisible, a control or a non-ASCII space
    (as ``U+XXXX NAME``), or None."""
    for char in value:
        category = unicodedata.category(char)
        if (
            category in _REFUSED_CATEGORIES
            or (category == "Zs" and char != " ")
            or _INVISIBLE.match(char)
        ):
            name = unicodedata.name(char, "unnamed")
            return f"U+{ord(char):04X} {name}"
    return None


_EARLIEST = datetime(1, 1, 2)
_LATEST = datetime(9999, 12, 30)
#: PostgreSQL's largest UTC offset is 15:59:59 (Python's, 23:59:59).
_PG_OFFSET_LIMIT = timedelta(hours=16)


def _has_lone_surrogate(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_text(text: object, settings: StoreSettings, *, what: str = "text") -> str:
    """The memory text, unchanged, or a typed error saying why it is refused."""
    if not isinstance(text, str):
        raise InvalidText(f"{what} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise EmptyText(f"{what} is empty or whitespace only")
    if len(text) > settings.max_text_chars:
        raise TextTooLong(
            f"{what} has {len(text)} characters; the limit is {settings.max_text_chars} "
            "(StoreSettings.max_text_chars): split it into several memories"
        )
    if "\x00" in text:
        raise InvalidText(f"{what} contains a NUL byte, which PostgreSQL text cannot hold")
    if _has_lone_surrogate(text):
        raise InvalidText(f"{what} contains a lone UTF-16 surrogate, which is not valid UTF-8")
    return text


def check_user_id(user_id: object, settings: StoreSettings) -> str:
    """A valid tenant id, kept exactly as given, or a typed error.

    Any non-empty string up to the configured length without control characters
    (tabs and line breaks included), invisible characters (zero-width, bidi
    controls, soft hyphen, variation selectors) or spaces other than the ASCII
    space, in Unicode normal form NFC: two ids that print the same are never two
    tenants. ``" bob"`` and ``"bob"`` are two users; quotes, ``%`` and ``*`` are
    ordinary characters.
    """
    if user_id is None:
        raise MissingUserScope(
            "no user scope: bind it on the store (MemoryStore(user_id=...)) or pass user_id=..."
        )
    if not isinstance(user_id, str):
        raise InvalidUserId(f"user_id must be a str, got {type(user_id).__name__}")
    if not user_id or not user_id.strip():
        raise InvalidUserId("user_id is empty")
    if len(user_id) > settings.max_user_id_chars:
        raise InvalidUserId(
            f"user_id has {len(user_id)} characters; the limit is {settings.max_user_id_chars}"
        )
    if _CONTROL.search(user_id) or _has_lone_surrogate(user_id):
        raise InvalidUserId("user_id contains control characters or invalid Unicode")
    invisible = invisible_character(user_id)
    if invisible is not None:
        raise InvalidUserId(
            f"user_id contains {invisible}, which prints as nothing or as a space: "
            "an id that looks like another user's is refused"
        )
    if not unicodedata.is_normalized("NFC", user_id):
        raise InvalidUserId(
            "user_id is not in Unicode normal form NFC (it would print like another id): "
            "pass unicodedata.normalize('NFC', user_id)"
        )
    return user_id


def check_agent_id(agent_id: object, settings: StoreSettings) -> str | None:
    """An agent id under the rules of a user id, or None (no agent)."""
    if agent_id is None:
        return None
    if not isinstance(agent_id, str):
        raise InvalidArgument(f"agent_id must be a str, got {type(agent_id).__name__}")
    try:
        return check_user_id(agent_id, settings)
    except InvalidUserId as exc:
        raise InvalidArgument(str(exc).replace("user_id", "agent_id")) from exc


def check_agent_ids(agent_ids: object, settings: StoreSettings) -> tuple[str, ...] | None:
    """A filter on writers: a list of agent ids (a single str is one), or None."""
    if agent_ids is None:
        return None
    if isinstance(agent_ids, str):
        agent_ids = [agent_ids]
    if not isinstance(agent_ids, (list, tuple)) or not agent_ids:
        raise InvalidArgument("agent_ids must be a non-empty list of agent ids")
    return tuple(str(check_agent_id(a, settings)) for a in agent_ids)


def check_memory_type(memory_type: object, settings: StoreSettings) -> str:
    """A memory type the store knows (built in or added in ``StoreSettings.memory_types``)."""
    if not isinstance(memory_type, str) or memory_type not in settings.memory_types:
        known = ", ".join(settings.memory_types)
        raise UnknownMemoryType(
            f"unknown memory type {memory_type!r}; known: {known} "
            "(add a type with StoreSettings(memory_types=...))"
        )
    return memory_type


def _check_json(value: object, depth: int, settings: StoreSettings, path: str) -> None:
    if depth > settings.max_metadata_depth:
        raise InvalidMetadata(
            f"metadata nests deeper than {settings.max_metadata_depth} levels at {path}"
        )
    if isinstance(value, str):
        if "\x00" in value or _has_lone_surrogate(value):
            raise InvalidMetadata(f"metadata string at {path} holds a NUL byte or lone surrogate")
    elif isinstance(value, bool) or value is None or isinstance(value, int):
        pass
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMetadata(f"metadata number at {path} is {value}, which JSON cannot hold")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidMetadata(f"metadata key {key!r} at {path} is not a str")
            if "\x00" in key or _has_lone_surrogate(key):
                raise InvalidMetadata(f"metadata key at {path} holds a NUL byte or lone surrogate")
            _check_json(item, depth + 1, settings, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json(item, depth + 1, settings, f"{path}[{index}]")
    else:
        raise InvalidMetadata(
            f"metadata value at {path} is a {type(value).__name__}, which is not JSON-serialisable"
        )


def check_metadata(metadata: object, settings: StoreSettings) -> dict[str, JSONValue]:
    """A copy of ``metadata`` as a plain JSON object, or a typed error."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidMetadata(f"metadata must be a dict, got {type(metadata).__name__}")
    _check_json(metadata, 1, settings, "metadata")
    try:
        encoded = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError) as exc:  # e.g. an int past Python's 4300-digit limit
        raise InvalidMetadata(f"metadata cannot be written as JSON: {exc}") from exc
    size = len(encoded.encode("utf-8"))
    if size > settings.max_metadata_bytes:
        raise InvalidMetadata(
            f"metadata is {size} bytes as JSON; the limit is {settings.max_metadata_bytes}"
        )
    result: dict[str, JSONValue] = json.loads(encoded)
    return result


#: The smallest positive importance the ``real`` column holds at full precision;
#: a smaller one is stored as 0 (the database refuses what would round to zero).
_SMALLEST_IMPORTANCE = 1.1754943508222875e-38


def check_importance(importance: object, settings: StoreSettings) -> float:
    """Importance between 0 and 1 (the settings' default when None).

    A value too small for the column (below about 1.2e-38) counts as 0.
    """
    if importance is None:
        return settings.default_importance
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        raise InvalidArgument(f"importance must be a number, got {type(importance).__name__}")
    try:
        value = float(importance)
    except OverflowError:  # an int past float's range, such as 10**400
        value = math.inf
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        shown = importance if isinstance(importance, float) else f"{value:g}"
        raise InvalidArgument(f"importance must be between 0 and 1, got {shown}")
    return value if value >= _SMALLEST_IMPORTANCE else 0.0


def check_time(value: object, what: str) -> datetime | None:
    """A timezone-aware datetime (or None); naive times are refused as ambiguous."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidArgument(f"{what} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument(
            f"{what} has no time zone; pass an aware datetime, e.g. datetime.now(timezone.utc)"
        )
    # Stored as UTC and read back in the session's time zone: a time within a day of
    # year 1 or 9999 could come back as year 0 or 10000, which Python cannot load, and
    # would break every later read of that user's memories.
    try:
        utc = value.astimezone(timezone.utc)
    except (OverflowError, ValueError) as exc:
        raise InvalidArgument(f"{what} is out of range: {exc}") from exc
    if not _EARLIEST <= utc.replace(tzinfo=None) <= _LATEST:
        raise InvalidArgument(
            f"{what} must lie between {_EARLIEST:%Y-%m-%d} and {_LATEST:%Y-%m-%d}"
        )
    offset = value.utcoffset()
    if offset is not None and abs(offset) >= _PG_OFFSET_LIMIT:
        # PostgreSQL refuses a UTC offset of 16 hours or more ("time zone displacement
        # out of range"), which Python allows up to 24: the same instant, in UTC.
        return utc
    return value


def check_topic(topic: object) -> str | None:
    """A topic key, stripped and lower-cased, or None."""
    if topic is None:
        return None
    if not isinstance(topic, str):
        raise InvalidArgument(f"topic must be a str, got {type(topic).__name__}")
    key = unicodedata.normalize("NFKC", topic).strip().lower()
    if not key:
        return None
    if len(key) > 200 or "\x00" in key or _has_lone_surrogate(key):
        raise InvalidArgument("topic must be at most 200 characters of valid text")
    return key


def check_top_k(top_k: object, limit: int = 1000, what: str = "top_k") -> int:
    """A positive result count up to ``limit`` (``what``: its name in the error)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= limit:
        raise InvalidArgument(f"{what} must be an int between 1 and {limit}, got {top_k!r}")
    return top_k


def content_hash(text: str) -> str:
    """Hash of the text up to case, width and whitespace: equal hashes are exact duplicates."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()

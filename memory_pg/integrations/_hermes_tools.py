"""The Hermes provider's tools: their schemas, and their arguments checked into typed errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memory_pg._validate import check_top_k
from memory_pg.errors import InvalidArgument

#: The memory types the model may write through ``memory_pg_add`` (not ``dialogue``).
TOOL_MEMORY_TYPES = ("user_profile", "project_status", "key_decision", "todo")

#: Most memories one ``memory_pg_search`` call returns.
TOOL_MAX_TOP_K = 50

TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_pg_search",
        "description": (
            "Search the user's long-term memory (profile, project status, decisions, todos) "
            "by meaning and keywords, in any language. Returns memories with their ids."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "top_k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": TOOL_MAX_TOP_K,
                    "description": "how many (default 5)",
                },
            },
            "required": ["query"],
        },
    },
    {
        "name": "memory_pg_add",
        "description": (
            "Remember a durable fact about the user or their work. A decision with a topic "
            "(database, payment, ...) replaces the earlier decision on that topic."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "one self-contained sentence"},
                "memory_type": {"type": "string", "enum": list(TOOL_MEMORY_TYPES)},
                "topic": {"type": "string", "description": "topic key of a decision"},
            },
            "required": ["text"],
        },
    },
    {
        "name": "memory_pg_forget",
        "description": "Erase one memory for good, by the id memory_pg_search returned.",
        "parameters": {
            "type": "object",
            "properties": {"memory_id": {"type": "string"}},
            "required": ["memory_id"],
        },
    },
]


def error_json(message: str, error_type: str) -> str:
    """A refused tool call: ``{"error": message, "error_type": class name}``."""
    return json.dumps({"error": message, "error_type": error_type}, ensure_ascii=False)


def text_arg(args: Mapping[str, Any], name: str, *, required: bool) -> str | None:
    """A string argument (None when absent and optional), or :class:`InvalidArgument`."""
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        got = "nothing" if value is None else type(value).__name__
        raise InvalidArgument(f"{name} must be a string, got {got}")
    return value


def search_args(args: Mapping[str, Any]) -> tuple[str, int]:
    """``memory_pg_search``'s query and top_k, or :class:`InvalidArgument`."""
    query = text_arg(args, "query", required=True)
    assert query is not None
    top_k: object = args.get("top_k")
    if top_k is None:
        top_k = 5
    elif isinstance(top_k, str) and top_k.strip().isdigit():
        top_k = int(top_k)  # models often quote numbers
    elif isinstance(top_k, float) and top_k.is_integer():
        top_k = int(top_k)
    return query, check_top_k(top_k, TOOL_MAX_TOP_K)


def add_args(args: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """``memory_pg_add``'s text, memory type and topic, or :class:`InvalidArgument`."""
    text = text_arg(args, "text", required=True)
    assert text is not None
    memory_type = text_arg(args, "memory_type", required=False) or "user_profile"
    if memory_type not in TOOL_MEMORY_TYPES:
        raise InvalidArgument(
            f"memory_type must be one of {', '.join(TOOL_MEMORY_TYPES)}, got {memory_type!r}"
        )
    return text, memory_type, text_arg(args, "topic", required=False)


__all__ = [
    "TOOLS",
    "TOOL_MAX_TOP_K",
    "TOOL_MEMORY_TYPES",
    "add_args",
    "error_json",
    "search_args",
    "text_arg",
]

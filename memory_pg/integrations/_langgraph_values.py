"""An item's value and the conditions on it: its JSON, its memory text, LangGraph's
filters and namespace patterns (pure: no database, LangGraph only for its field paths)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memory_pg.errors import InvalidArgument

#: The value fields whose text is the memory's text, first found first (LangMem: ``content``).
TEXT_FIELDS = ("content", "text")


#: The filter operators of LangGraph's ``search(filter=...)``, as SQL comparisons.
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def check_page(limit: object, offset: object) -> None:
    """A page of results: ``limit`` at least 1, ``offset`` at least 0, else
    :class:`InvalidArgument`."""
    for name, number, least in (("limit", limit, 1), ("offset", offset, 0)):
        if isinstance(number, bool) or not isinstance(number, int) or number < least:
            raise InvalidArgument(f"{name} is a whole number of at least {least}, got {number!r}")


def json_object(value: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``value`` as JSON gives it back, or :class:`InvalidArgument`."""
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"an item's value must be a JSON object: {exc}") from exc
    decoded: dict[str, Any] = json.loads(encoded)
    return decoded


def text_of(value: dict[str, Any], fields: Sequence[str], *, explicit: bool) -> str:
    """The memory text of a value: see the module's mapping."""
    if explicit:
        from langgraph.store.base import get_text_at_path

        parts = [t for f in fields for t in get_text_at_path(value, f) if t.strip()]
        if parts:
            return "\n".join(parts)
    else:
        for name in fields:
            found = value.get(name)
            if isinstance(found, str) and found.strip():
                return found
        strings = [s for s in _strings(value) if s.strip()]
        if strings:
            return "\n".join(strings)
    return json.dumps(value, ensure_ascii=False)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def equalities(filters: Mapping[str, Any] | None) -> tuple[bool, dict[str, Any]]:
    """The filter's plain equalities on scalars, as a containment object, and whether they
    are the whole filter (then the database's filtering is exact)."""
    narrowed: dict[str, Any] = {}
    exact = True
    for name, wanted in check_filter(filters).items():
        if isinstance(wanted, (str, int, float, bool)) and wanted is not None:
            target = narrowed
            *parents, last = name.split(".")
            for part in parents:
                target = target.setdefault(part, {})
            target[last] = wanted
        else:
            exact = False
    return exact, narrowed


def is_operator_dict(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(k in OPERATORS for k in value)


def check_filter(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """``filters`` as a dict, or :class:`InvalidArgument` naming what is wrong."""
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidArgument(f"filter must be a dict, got {type(filters).__name__}")
    for name, wanted in filters.items():
        if not isinstance(name, str) or not name or "" in name.split("."):
            raise InvalidArgument(f"filter fields are non-empty dotted names, got {name!r}")
        if isinstance(wanted, dict) and any(str(k).startswith("$") for k in wanted):
            unknown = [k for k in wanted if k not in OPERATORS]
            if unknown:
                raise InvalidArgument(
                    f"unknown filter operator {unknown[0]!r} on {name!r}: use one of "
                    + ", ".join(OPERATORS)
                )
    return dict(filters)


def matches(value: Mapping[str, Any], filters: Mapping[str, Any] | None) -> bool:
    """Whether a value passes ``filters``, as :func:`filter_conditions` decides in SQL
    (for results ranked by a search, which filters by containment first)."""
    for field_name, wanted in check_filter(filters).items():
        found: Any = value
        present = True
        for part in field_name.split("."):
            if isinstance(found, Mapping) and part in found:
                found = found[part]
            else:
                present = False
                break
        tests = wanted if is_operator_dict(wanted) else {"$eq": wanted}
        for op, operand in tests.items():
            if not _compare(op, found if present else None, operand, present):
                return False
    return True


def _compare(op: str, found: Any, operand: Any, present: bool) -> bool:
    if op == "$ne":
        return not present or found != operand
    if not present:
        return False
    if op == "$eq":
        return bool(found == operand)
    numbers = (int, float)
    if isinstance(found, bool) or isinstance(operand, bool):
        comparable = isinstance(found, bool) and isinstance(operand, bool)
    else:
        comparable = (isinstance(found, numbers) and isinstance(operand, numbers)) or (
            isinstance(found, str) and isinstance(operand, str)
        )
    if not comparable:
        return False
    if op == "$gt":
        return bool(found > operand)
    if op == "$gte":
        return bool(found >= operand)
    if op == "$lt":
        return bool(found < operand)
    return bool(found <= operand)


# -- namespace matching (LangGraph's list_namespaces) -----------------------------------


def namespace_matches(
    namespace: tuple[str, ...],
    prefix: Sequence[str] | None,
    suffix: Sequence[str] | None,
) -> bool:
    """Whether ``namespace`` starts with ``prefix`` and ends with ``suffix``, label by
    label, ``"*"`` standing for any one label."""

    def same(labels: Sequence[str], wanted: Sequence[str]) -> bool:
        return all(w == "*" or w == label for label, w in zip(labels, wanted, strict=True))

    if prefix and (len(namespace) < len(prefix) or not same(namespace[: len(prefix)], prefix)):
        return False
    if suffix and (
        len(namespace) < len(suffix) or not same(namespace[len(namespace) - len(suffix) :], suffix)
    ):
        return False
    return True


def fixed_prefix(prefix: Sequence[str] | None) -> tuple[str, ...]:
    """The labels of ``prefix`` before its first wildcard."""
    fixed: list[str] = []
    for label in prefix or ():
        if label == "*":
            break
        fixed.append(label)
    return tuple(fixed)

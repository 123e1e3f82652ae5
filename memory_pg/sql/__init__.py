"""One home for SQL: statement builders per topic, and named raw SQL in ``*.sql`` files.

The builders (``memories``, ``search``, ``lexical``, ``supersede``, ``forget``,
``locks``, ``setup``) return SQLAlchemy statements and do no I/O. SQL too
intricate for Core lives in named blocks of the ``.sql`` files beside them
(``-- name: x`` starts block ``x``), read by :func:`named`, the one loader.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

from sqlalchemy import TextClause, text

_NAME = re.compile(r"--\s*name:\s*(\w+)")


@cache
def blocks() -> dict[str, str]:
    """Every named block of every ``.sql`` file of this package, by name (names are unique)."""
    found: dict[str, list[str]] = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        current: list[str] | None = None
        for line in entry.read_text("utf-8").splitlines():
            match = _NAME.match(line)
            if match:
                if match.group(1) in found:
                    raise RuntimeError(f"SQL block {match.group(1)!r} is named twice")
                current = found.setdefault(match.group(1), [])
            elif current is not None and not line.lstrip().startswith("--"):
                current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


def named(name: str) -> str:
    """The text of the named block ``name`` (a ``KeyError`` names a block that is not there)."""
    return blocks()[name]


def statement(name: str, **params: Any) -> TextClause:
    """The named block ``name`` as a statement, with ``params`` bound."""
    stmt = text(named(name))
    return stmt.bindparams(**params) if params else stmt

"""The change patterns find what they found before, searched only where they can match."""

from __future__ import annotations

import re

from memory_pg import _facts
from memory_pg._regex import Prefiltered

TEXTS = (
    "数据库改用 PostgreSQL，不再使用 MySQL",
    "我们讨论了很久，数据库改用 TiDB 了",
    "我已经搬到上海了",
    "我妈妈搬到杭州了",
    "把 Redis 换成 Valkey",
    "We switched the frontend from React to Vue",
    "The team moved the standup to 10:30",
    "We are migrating everything to Kubernetes next month",
    "后端用 Go 而不是 Python",
    "no change is stated here at all, only words about a harbour crane",
    "",
    "switch",
    "x" * 3000 + " changed to Rust",
)


def _spans(matches: object) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in matches]  # type: ignore[attr-defined]


def test_every_change_pattern_finds_the_same_matches_prefiltered() -> None:
    for _, pattern in _facts._CHANGE_PATTERNS:
        wrapped = Prefiltered(pattern)
        for text in TEXTS:
            assert _spans(wrapped.finditer(text)) == _spans(pattern.finditer(text))


def test_a_pattern_without_the_lazy_subject_is_searched_as_it_is() -> None:
    plain = re.compile(r"(?P<old>\w+) → (?P<new>\w+)")
    assert Prefiltered(plain).needle is None
    assert _spans(Prefiltered(plain).finditer("a → b")) == _spans(plain.finditer("a → b"))


def test_a_long_text_stating_a_change_still_parses() -> None:
    change = _facts.parse_change("word " * 400 + "we switched the database to PostgreSQL")
    assert change is not None and change.new == "PostgreSQL"

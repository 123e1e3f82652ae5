"""A search's attribute part: whether a candidate states the attribute a question asks
for (a pure builder, no I/O; see :func:`memory_pg.scoring.attribute_boost`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Boolean, ColumnElement, Float, and_, case, func, literal

from memory_pg.config import RankingSettings
from memory_pg.text.attributes import answered_by, asked, subject_words
from memory_pg.text.references import Name, word_pattern


def states_asked(attributes: ColumnElement[Any], asked: ColumnElement[Any]) -> ColumnElement[Any]:
    """Whether a memory's stored ``attributes`` hold one the question asks for (false
    for a memory not analysed yet: NULL)."""
    overlap = attributes.op("&&", return_type=Boolean)(asked)
    return func.coalesce(overlap, literal(False), type_=Boolean)


def asked_about(
    query: str, content: str, names: Sequence[Name], rs: RankingSettings
) -> tuple[list[str], str]:
    """``(attributes, subject)`` of a search: the attributes whose statement answers
    what ``query`` asks (none when it asks none, or the ranking weighs none), and a
    pattern (:func:`subject_pattern`) of whom it asks about: the nouns of ``content``
    (the query less the words that named a time), or the ``names`` memories give
    what it describes ("" when it asks of the user alone)."""
    asking = asked(query) if rs.attribute_weight > 0 else ()
    if not asking:
        return [], ""
    words = subject_pattern(subject_words(content, asking))
    return list(answered_by(asking)), "|".join(p for p in (words, *(n.pattern for n in names)) if p)


def subject_pattern(words: Sequence[str]) -> str:
    """A PostgreSQL regular expression (for ``~*``) that finds any of the question's
    subject words (:func:`memory_pg.text.attributes.subject_words`), each by
    :func:`memory_pg.text.references.word_pattern`."""
    return "|".join(word_pattern(word) for word in words)


def attribute_factor(
    states: ColumnElement[Any], about: ColumnElement[Any] | None, rs: RankingSettings
) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    """``(factor, attribute_match)``: :func:`memory_pg.scoring.attribute_boost` in SQL.

    ``attribute_match`` is 1.0 for a candidate that states the asked attribute and
    names the question's subject (``about``: "堂哥" of "我堂哥今年多大？"; None when
    the question names none but the asker), 0.0 for the rest: an age of someone the
    question does not name is no answer. The factor is 1 for those and ``1 / (1 +
    attribute_weight)`` for the rest, but only when some candidate matches:
    otherwise every score stays as it was, and ``attribute_match`` is NULL.
    """
    matched = states if about is None else and_(states, about)
    applies = func.bool_or(matched).over()
    match = case((matched, literal(1.0, Float)), else_=literal(0.0, Float))
    weight = literal(rs.attribute_weight, Float)
    factor = case(((applies, (1.0 + weight * match) / (1.0 + weight))), else_=literal(1.0, Float))
    return factor, case((applies, match))


__all__ = ["asked_about", "attribute_factor", "states_asked", "subject_pattern"]

"""A search's attribute part: whether a candidate states the attribute a question asks
for (a pure builder, no I/O; see :func:`memory_pg.scoring.attribute_boost`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Float,
    Text,
    and_,
    bindparam,
    case,
    func,
    literal,
    or_,
)

from memory_pg.config import RankingSettings
from memory_pg.sql.core import SIMPLE

#: The question's subject: a regular expression, and the tsquery of its sounds.
_P_SUBJECT = bindparam("attribute_subject", type_=Text)
_P_SUBJECT_SOUNDS = bindparam("subject_sounds", type_=Text)


def names_subject(
    text: ColumnElement[Any], tsv: ColumnElement[Any], sounds: bool
) -> ColumnElement[Any]:
    """Whether a memory names the question's subject: its text matches the subject's
    pattern (``~*``), or, with ``sounds``, its own text holds one of the subject's
    sounds (the simple configuration: "游泳" for a typed "游勇")."""
    by_words = text.op("~*", is_comparison=True)(_P_SUBJECT)
    if not sounds:
        return by_words
    heard = func.to_tsquery(SIMPLE, _P_SUBJECT_SOUNDS)
    return or_(by_words, tsv.op("@@", return_type=Boolean)(heard))


def states_asked(attributes: ColumnElement[Any], asked: ColumnElement[Any]) -> ColumnElement[Any]:
    """Whether a memory's stored ``attributes`` hold one the question asks for (false
    for a memory not analysed yet: NULL)."""
    overlap = attributes.op("&&", return_type=Boolean)(asked)
    return func.coalesce(overlap, literal(False), type_=Boolean)


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


__all__ = ["attribute_factor", "names_subject", "states_asked"]

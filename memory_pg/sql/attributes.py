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
from sqlalchemy.dialects.postgresql import ARRAY

from memory_pg.config import RankingSettings
from memory_pg.sql.core import SIMPLE

#: The question's subject: a regular expression, and the tsquery of its sounds.
_P_SUBJECT = bindparam("attribute_subject", type_=Text)
_P_SUBJECT_SOUNDS = bindparam("subject_sounds", type_=Text)
#: The attributes the question names itself (of those whose statement answers it).
_P_ASKED_ITSELF = bindparam("asked_itself", type_=ARRAY(Text))

#: The match of a memory that states only an attribute related to the one asked ("在哪
#: 上班" answered by "在医院当护士", an occupation): 0.9 of a full match's factor at the
#: default weight (benchmarks/zh_dev.py, see docs/ranking.md).
RELATED_MATCH = 0.8


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
    """How well a memory's stored ``attributes`` answer the question: 1.0 where they
    hold one it names itself, :data:`RELATED_MATCH` where they hold only one whose
    statement also answers it, 0.0 otherwise (and for a memory not analysed yet: NULL)."""
    itself = attributes.op("&&", return_type=Boolean)(_P_ASKED_ITSELF)
    overlap = attributes.op("&&", return_type=Boolean)(asked)
    return case(
        (itself, literal(1.0, Float)),
        (overlap, literal(RELATED_MATCH, Float)),
        else_=literal(0.0, Float),
    )


def attribute_factor(
    states: ColumnElement[Any], about: ColumnElement[Any] | None, rs: RankingSettings
) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    """``(factor, attribute_match)``: :func:`memory_pg.scoring.attribute_boost` in SQL.

    ``attribute_match`` is ``states`` (:func:`states_asked`: 1.0 for the attribute
    asked, :data:`RELATED_MATCH` for a related one) for a candidate that names the
    question's subject (``about``: "堂哥" of "我堂哥今年多大？"; None when the
    question names none but the asker), 0.0 for the rest: an age of someone the
    question does not name is no answer. The factor is ``(1 + attribute_weight *
    match) / (1 + attribute_weight)``, but only when some candidate matches:
    otherwise every score stays as it was, and ``attribute_match`` is NULL.
    """
    stating = states > literal(0.0, Float)
    matched = stating if about is None else and_(stating, about)
    applies = func.bool_or(matched).over()
    match = case((matched, states), else_=literal(0.0, Float))
    weight = literal(rs.attribute_weight, Float)
    factor = case(((applies, (1.0 + weight * match) / (1.0 + weight))), else_=literal(1.0, Float))
    return factor, case((applies, match))


__all__ = ["RELATED_MATCH", "attribute_factor", "names_subject", "states_asked"]

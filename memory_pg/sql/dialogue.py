"""A search's turns of a conversation, weighed (pure builders, no I/O).

A conversation kept turn by turn holds questions ("What are their names?") whose
words match a query better than the answer after them ("Luna and Oliver!"). The
search statement (:mod:`memory_pg.sql.search`) ranks its candidates, then this
part lowers a question a little and lifts the candidate that answers it: the
turn that ``follows`` it (:mod:`memory_pg.sql.relations`). The Python twin is
:func:`memory_pg.scoring.dialogue_score`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Select,
    Text,
    case,
    cast,
    func,
    literal,
    null,
    or_,
    select,
)

from memory_pg.config import RankingSettings
from memory_pg.scoring import QUESTION_PATTERN
from memory_pg.tables import memory_links

ml = memory_links


def questions_answered(
    parts: Any,
    extra: list[ColumnElement[Any]],
    score: ColumnElement[Any],
    gates: list[ColumnElement[bool]],
    rs: RankingSettings,
    *,
    user_id: ColumnElement[Any],
    top_k: ColumnElement[Any],
) -> Select[Any]:
    """The ranked, gated candidates, the turns of a conversation weighed
    (:func:`memory_pg.scoring.dialogue_score`): a memory that asks a question loses
    ``question_discount`` of its score, and the candidate that ``follows`` it (the
    answer, the next turn of its conversation) ranks at least ``answer_share`` of the
    question's score. Only candidates are lifted: the answer must have been found too.
    """
    asks = parts.c.text.op("~", is_comparison=True)(literal(QUESTION_PATTERN, Text))
    scored = select(*parts.c, *extra, score.label("plain_score"), asks.label("question"))
    if gates:
        scored = scored.where(or_(*gates))
    ranked = scored.cte("scored")
    asked = ranked.alias("asked")
    kept = case(
        (ranked.c.question, ranked.c.plain_score * literal(1.0 - rs.question_discount, Float)),
        else_=ranked.c.plain_score,
    )
    # Not the score before this step, nor what only the score is computed from.
    columns = [c for c in ranked.c if c.name not in ("plain_score", "names_entity")]
    if rs.answer_share <= 0:  # no lift: the statement has no join for it
        return (
            select(*columns, cast(null(), Float).label("answer_score"), kept.label("score"))
            .order_by(kept.desc(), ranked.c.event_time.desc(), ranked.c.id)
            .limit(top_k)
        )
    # Each question's next turns (one, unless two writes raced), looked up by the
    # (user_id, dst) index once per question (a correlated subquery): joined, the
    # planner could read all of the user's links instead.
    followers = (
        select(func.array_agg(ml.c.src))
        .where(
            ml.c.user_id == user_id,
            ml.c.dst == asked.c.id,
            ml.c.relation == literal("follows", Text),
        )
        .correlate(asked)
        .scalar_subquery()
    )
    answered = (
        select(func.unnest(followers).label("id"), asked.c.plain_score)
        .where(asked.c.question)
        .subquery("answered")
    )
    lent = (
        select(
            answered.c.id,
            (func.max(answered.c.plain_score) * literal(rs.answer_share, Float)).label("lent"),
        )
        .group_by(answered.c.id)
        # Worked out once: as a subquery the planner, which takes the candidates for
        # one row, ran it again for each of them (LoCoMo: 0.95 s a search).
        .cte("lent")
        .prefix_with("MATERIALIZED")
    )
    final = func.greatest(kept, func.coalesce(lent.c.lent, literal(0.0, Float)))
    return (
        select(
            *columns,
            lent.c.lent.label("answer_score"),
            final.label("score"),
        )
        .select_from(ranked.outerjoin(lent, lent.c.id == ranked.c.id))
        .order_by(final.desc(), ranked.c.event_time.desc(), ranked.c.id)
        .limit(top_k)
    )

"""A question about what holds in the end gets the newer of two results that changes
the older first (:func:`memory_pg.plans.read._latest_first`, pure: rows in, rows out)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from memory_pg.plans.protocol import Rows
from memory_pg.plans.read import _latest_first

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def rows(*notes: tuple[str, float, int, float]) -> Rows:
    """Rows of ``(text, score, day, lexical)``, best first."""
    return Rows(
        {"id": i, "text": t, "score": s, "event_time": T0 + timedelta(days=d), "lexical": lx}
        for i, (t, s, d, lx) in enumerate(notes)
    )


def texts(out: list[dict[str, Any]]) -> list[str]:
    return [str(r["text"]) for r in out]


PLAN = ("家长会定在周五下午三点，在三楼会议室", 0.9, 0, 0.5)
MOVED = ("家长会改到下周一了，还是下午三点，地点不变", 0.6, 5, 0.4)
OTHER = ("女儿这学期数学进步挺大", 0.7, 3, 0.1)


def test_the_newer_change_is_placed_right_above_the_older() -> None:
    out = _latest_first(rows(PLAN, OTHER, MOVED), "家长会最后是哪天开的？", 10)
    assert texts(out) == [MOVED[0], PLAN[0], OTHER[0]]


def test_a_question_about_what_was_first_said_or_about_nothing_that_changes() -> None:
    for question in ("家长会原来定的是哪天？", "女儿数学怎么样？"):
        assert texts(_latest_first(rows(PLAN, OTHER, MOVED), question, 10)) == [
            PLAN[0],
            OTHER[0],
            MOVED[0],
        ]


def test_an_older_text_or_one_without_the_questions_words_stays_below() -> None:
    # The change written first is no change of what came after it.
    earlier = (MOVED[0], MOVED[1], -5, MOVED[3])
    assert texts(_latest_first(rows(PLAN, earlier), "家长会最后是哪天开的？", 10))[0] == PLAN[0]
    # A change of something else that shares none of the question's words.
    unrelated = ("停车费改成每月六百了", 0.5, 5, 0.0)
    rent = ("房租每月八千", 0.9, 0, 0.6)
    assert texts(_latest_first(rows(rent, unrelated), "现在房租多少？", 10))[0] == rent[0]

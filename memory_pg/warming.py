"""``warm_up``: a store builds its search statements ahead (issue 40), written once like
:mod:`memory_pg.methods` for both stores.

A search statement is built and compiled once per shape (the question's languages,
whether it names a time, a name or an attribute, the filters, the scope) and then
shared by every search of that shape. Building one costs about 50 ms of CPU, twenty
times a search, so a process's first search of each kind is its slowest; a
long-running one pays for the common kinds here instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_pg.methods import StoreBase
from memory_pg.operations import Op, read
from memory_pg.plans import read as read_plans
from memory_pg.plans.protocol import Plan
from memory_pg.sql.search import build_search

#: Questions of the kinds people ask, at least one of each kind of search statement
#: they build (:func:`warm_up`): in English, Chinese and both; naming a time, a
#: person or thing, an attribute asked of the user or of someone.
WARM_UP_QUESTIONS = (
    "what do we know about the project",
    "what did Alice say about the launch",
    "what happened last week",
    "what did Alice decide last Friday",
    "when is my birthday",
    "what does the user like to eat",
    "how old is Alice",
    "what was my job last year",
    "what was Alice's job last year",
    "有什么进展",
    "张伟说了什么",
    "上周发生了什么",
    "张伟上周说了什么",
    "我的生日是哪天",
    "我房东叫什么",
    "我姐姐是干什么的",
    "张伟住在哪里",
    "我堂哥上个月多大",
    "张伟上周住在哪里",
    "Postgres 的版本是多少",
    "Alice 上周说了什么",
    "我的 MacBook 是什么型号",
    "Alice 住在哪里",
    "我用的 IDE 叫什么",
    "我上周用的 IDE 叫什么",
    "where did the user work last year",
    "我去年的工资是多少",
    "上周 Iris 的生日是哪天",
    "张伟上周跟 Iris 聊了什么",
)


def warm_up(
    self: StoreBase[Any],
    *,
    agent_id: str | None = None,
    questions: Sequence[str] = WARM_UP_QUESTIONS,
) -> Op[int]:
    """Build the search statements of the common kinds of question now, so that the
    first search of each kind does not pay for it; returns how many were built.

    A search statement is built and compiled once per shape (the question's
    languages, whether it names a time, a name or an attribute, the filters, the
    scope) and then shared; building one costs about 50 ms of CPU, twenty times a
    search. A long-running process (``memory-pg serve`` and ``mcp`` do this at start)
    pays that once here instead of in the first searches it serves. The searches
    run as a user id nobody holds, read nothing and record no use; the query
    vector is a constant, so no text reaches the embedding model. ``agent_id``:
    warm the statements of searches made as an agent (another scope, other
    statements); the statements of a user with many memories are warmed too.
    ``questions``: the questions whose statements are built (a server builds them a
    few at a time, between requests).
    """
    nobody = f"memory-pg warm-up {os.urandom(8).hex()}"
    filters = read_plans.search_filters(
        self.settings, None, None, None, None, None, agent_id=agent_id
    )
    vector = np.zeros(self.embedding.dimension, dtype=np.float32)
    vector[0] = 1.0
    heavy = read_plans.HeavyUsers()
    heavy.note(nobody, True)
    before = build_search.cache_info().misses
    for question in questions:
        for users in (None, heavy):  # a light user's statement, and a heavy one's

            def plan(q: str = question, h: read_plans.HeavyUsers | None = users) -> Plan[Any]:
                return read_plans.plan_search(
                    nobody, q, vector, 5, filters, False, self.ranking, heavy_users=h
                )

            yield from read(plan, nobody, self.ef_search)
    return int(build_search.cache_info().misses - before)

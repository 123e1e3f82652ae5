"""``warm_up``: a long-running process builds its search statements ahead, so that
its first search of each kind does not pay about 50 ms for it (issue 40's p99), and
writes nothing while doing so."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from memory_pg.sql.search import build_search

#: Questions of the kinds people ask, none of them a warm-up question: each must find
#: its statement built.
ASKED = [
    "what did Bob tell me about the migration",
    "which database did we pick",
    "what did the team ship two weeks ago",
    "what did Carol decide yesterday",
    "where was I born",
    "what is Carol's email address",
    "how old is my nephew",
    "what was my salary last year",
    "那个项目最近怎么样",
    "李娜昨天说了什么",
    "上个月做了什么",
    "我老婆的手机号是多少",
    "我舅舅是干什么的",
    "王强住哪",
    "Redis 的端口是多少",
    "Bob 昨天说了什么",
]


def counts(store: Any) -> tuple[Any, ...]:
    with store.engine.connect() as conn:
        return tuple(
            conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM memory_pg_memories),"
                    " (SELECT count(*) FROM memory_pg_history),"
                    " (SELECT coalesce(sum(access_count), 0) FROM memory_pg_memories)"
                )
            ).one()
        )


@pytest.mark.parametrize("agent_id", [None, "planner"])
def test_warm_up_builds_the_statements_of_later_searches_and_writes_nothing(
    make_store: Any, agent_id: str | None
) -> None:
    store = make_store(user_id="wendy")
    store.add_memory("I was born in Porto; my nephew Tiago is 9.", "user_profile")
    store.add_memory("We picked PostgreSQL for the migration.", "key_decision")
    store.search("nephew")
    store.flush_uses()
    before = counts(store)

    build_search.cache_clear()
    assert store.warm_up(agent_id=agent_id) > 0
    assert store.warm_up(agent_id=agent_id) == 0  # built once per process
    store.flush_uses()
    assert counts(store) == before  # read nothing, counted no use, wrote no history

    built = build_search.cache_info().misses
    for question in ASKED:
        store.search(question, agent_id=agent_id)
    assert build_search.cache_info().misses == built


async def test_the_async_store_warms_up_too(db_url: str, embedder: Any) -> None:
    from memory_pg.async_store import AsyncMemoryStore

    build_search.cache_clear()
    async with AsyncMemoryStore(db_url, embedder=embedder) as store:
        assert await store.warm_up() > 0
        built = build_search.cache_info().misses
        await store.search("what did Carol decide yesterday", user_id="xavier")
        assert build_search.cache_info().misses == built

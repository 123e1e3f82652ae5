"""A search with ``expand`` runs one statement per shape, built once, ranking as built anew."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from sqlalchemy import Integer, Text, bindparam

from memory_pg.plans import relations
from memory_pg.plans.protocol import Plan
from memory_pg.sql import relations as relations_sql
from memory_pg.sql.search import SearchFilters, filter_conditions, search_statement
from memory_pg.text.query import analyse

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)


def _built_anew(user_id: str, step: tuple[Any, dict[str, Any]], filters: SearchFilters, depth: int):
    """The expanded statement as it was built before it was cached: values bound in."""
    stmt, values = step
    wider = relations_sql.expand_search(
        stmt,
        filter_conditions(user_id, filters),
        depth=depth,
        query_vector=bindparam("query_vector", type_=relations_sql.QueryVector()),
        user_id=bindparam("search_user_id", type_=Text()),
        top_k=bindparam("top_k", type_=Integer()),
        agent_id=filters.agent_id,
    )
    return wider, values


def _both(cached: Any, anew: Any) -> Plan[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    # One transaction: now() is one time for both, so the scores can be compared exactly.
    first = yield cached
    second = yield anew
    return [dict(r) for r in first], [dict(r) for r in second]


def _step(store: Any, user: str, query: str, filters: SearchFilters, top_k: int = 6):
    vector = store.embedder.embed_query(query)
    return search_statement(
        user, analyse(query, NOW), vector, top_k=top_k, filters=filters, ranking=store.ranking
    )


def test_the_expanded_statement_is_built_once_per_shape(store):
    types = SearchFilters(memory_types=("dialogue",))
    base = _step(store, "alice", "Caroline in Boston", types)
    one = relations.expand_step(base, types, 1)
    # Another user, query, filter value and size of the same shape: the same statement.
    other = SearchFilters(memory_types=("todo", "key_decision"))
    same_shape = _step(store, "bob", "Jo's paintings", other, 3)
    two = relations.expand_step(same_shape, other, 1)
    assert one[0] is two[0]
    assert one[1]["search_user_id"] == "alice" and two[1]["search_user_id"] == "bob"
    # Another depth or filter shape is another statement.
    assert relations.expand_step(same_shape, other, 2)[0] is not one[0]
    plain = SearchFilters()
    assert relations.expand_step(_step(store, "bob", "Jo", plain), plain, 1)[0] is not one[0]


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(
    "filters",
    [
        # The gate keeps the direct hits few, so that the walk adds to them.
        SearchFilters(min_similarity=0.5),
        SearchFilters(memory_types=("dialogue",), agent_id="planner", min_similarity=0.5),
        SearchFilters(
            metadata={"session_id": "s1"},
            since=datetime(2020, 1, 1, tzinfo=timezone.utc),
            min_similarity=0.5,
        ),
    ],
    ids=["none", "types-agent", "metadata-since"],
)
def test_the_cached_statement_ranks_as_one_built_anew(store, make_store, filters, depth):
    def turns(session: str, texts: list[str]) -> list[dict[str, Any]]:
        # No context (""): only the links lead from one turn to the next.
        return [{"text": t, "metadata": {"session_id": session}, "context": ""} for t in texts]

    store.add_memories(
        turns("s1", ["Caroline went to a support group in Boston", "Melanie paints sunsets"])
        + turns("s2", ["Caroline adopted a dog named Max", "Max loves the beach"])
        + turns("s1", ["Jo visited Caroline last week"])
    )
    store.add_memories(
        [{"text": "Caroline's private note about Boston", "private": True}], agent_id="planner"
    )
    make_store(user_id="bob").add_memories(["Caroline from Boston is bob's colleague"])
    expanded: set[str] = set()
    for query in ("Where did Caroline go?", "Max the dog"):
        step = _step(store, "alice", query, filters)
        cached = relations.expand_step(step, filters, depth)
        anew = _built_anew("alice", step, filters, depth)
        got, want = store.run_plan(_both(cached, anew), "alice", ef_search=store.ef_search)
        assert got == want
        expanded |= {r["text"] for r in got if r["via"] is not None}
    assert expanded  # the walk's part of the statement was compared too

"""What building the statement of ``search(..., expand=1)`` costs: anew each call, or cached.

Pure Python, no database: the search statement of one shape and its expansion, as
the store gets them per search, plus SQLAlchemy's cache key (which it computes on
every execution to find the compiled form). "anew" is how the expansion was built
before it was cached by shape. p50 of 50 calls, in milliseconds.

    python benchmarks/expand_statement.py

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sqlalchemy import Integer, Text, bindparam

from memory_pg.plans import relations
from memory_pg.sql import relations as relations_sql
from memory_pg.sql.search import SearchFilters, filter_conditions, search_statement
from memory_pg.text.query import analyse

FILTERS = SearchFilters(memory_types=("dialogue",))
VECTOR = np.ones(384, dtype=np.float32) / np.sqrt(384)


def _search() -> tuple[Any, dict[str, Any]]:
    return search_statement(
        "alice", analyse("where did Caroline go"), VECTOR, top_k=5, filters=FILTERS
    )


def anew() -> Any:
    stmt, _ = _search()
    return relations_sql.expand_search(
        stmt,
        filter_conditions("alice", FILTERS),
        depth=1,
        query_vector=bindparam("query_vector", type_=relations_sql.QueryVector()),
        user_id=bindparam("search_user_id", type_=Text()),
        top_k=bindparam("top_k", type_=Integer()),
    )


def cached() -> Any:
    return relations.expand_step(_search(), FILTERS, 1)[0]


def p50_ms(build: Callable[[], Any], n: int = 50) -> float:
    build()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        build()._generate_cache_key()
        times.append(time.perf_counter() - t0)
    return round(1000 * statistics.median(times), 2)


def main() -> int:
    print({"anew_ms_p50": p50_ms(anew), "cached_ms_p50": p50_ms(cached)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

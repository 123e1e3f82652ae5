"""The gate in front of a store's pool: first come, first served, a warning before a timeout."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from memory_pg.admission import Gate
from memory_pg.errors import DatabaseUnavailable


def _wait_until(condition: object, limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_a_returned_place_goes_to_the_first_in_line_not_to_the_one_returning_it() -> None:
    gate = Gate(1, timeout_s=30)
    order: list[str] = []
    holding = threading.Event()
    release = threading.Event()

    def searcher() -> None:
        # Returns its place and asks again at once, as a searching thread does.
        with gate.place():
            holding.set()
            release.wait(10)
            order.append("search 1")
        with gate.place():
            order.append("search 2")

    def writer() -> None:
        with gate.place():
            order.append("write")

    s = threading.Thread(target=searcher)
    s.start()
    holding.wait(10)
    w = threading.Thread(target=writer)
    w.start()
    _wait_until(lambda: gate.waiting() == 1)
    release.set()
    s.join(10)
    w.join(10)
    assert order == ["search 1", "write", "search 2"]


def test_callers_are_served_in_the_order_they_arrived() -> None:
    gate = Gate(1, timeout_s=30)
    order: list[int] = []
    release = threading.Event()
    holders = [threading.Thread(target=lambda: _hold(gate, release))]
    for t in holders:
        t.start()
    _wait_until(lambda: gate.free == 0)
    waiters = []
    for i in range(6):
        t = threading.Thread(target=lambda i=i: _take(gate, order, i))
        t.start()
        waiters.append(t)
        _wait_until(lambda i=i: gate.waiting() == i + 1)
    release.set()
    for t in holders + waiters:
        t.join(10)
    assert order == list(range(6))
    assert gate.free == 1


def _hold(gate: Gate, release: threading.Event) -> None:
    with gate.place():
        release.wait(10)


def _take(gate: Gate, order: list[int], i: int) -> None:
    with gate.place():
        order.append(i)


def test_a_long_wait_is_warned_of_before_it_fails(caplog: pytest.LogCaptureFixture) -> None:
    gate = Gate(1, timeout_s=0.4)
    release = threading.Event()
    holder = threading.Thread(target=lambda: _hold(gate, release))
    holder.start()
    _wait_until(lambda: gate.free == 0)
    with caplog.at_level(logging.WARNING, logger="memory_pg.admission"):
        with pytest.raises(DatabaseUnavailable, match=r"all 1 are in use.*pool_size"):
            with gate.place():
                pass  # pragma: no cover - never reached
    release.set()
    holder.join(10)
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and "waited" in warned[0] and "pool_size" in warned[0]
    # The place that timed out left no trace: the next caller gets in at once.
    with gate.place():
        assert gate.free == 0
    assert gate.free == 1 and gate.waiting() == 0

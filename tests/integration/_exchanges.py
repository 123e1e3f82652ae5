"""The network exchanges of a store, read from libpq's protocol trace of its connections.

An exchange is a burst of messages the client sends, then the server's replies
it waits for: the round trips a user pays for, counted on the client side.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psycopg import pq
from sqlalchemy import Engine, event

_MESSAGE = re.compile(r"^([FB])\t\d+\t(\w+)\t?(.*)$")


@dataclass
class Exchange:
    """The messages a client sent in one burst, and the server's replies to it."""

    sent: list[tuple[str, str]] = field(default_factory=list)
    received: list[tuple[str, str]] = field(default_factory=list)

    def statements(self) -> list[str]:
        """The text of every statement parsed or queried in this exchange."""
        return [body for kind, body in self.sent if kind in ("Parse", "Query")]


@dataclass
class Traced:
    """What :func:`traced` saw: filled in when its block ends."""

    exchanges: list[Exchange] = field(default_factory=list)


@contextlib.contextmanager
def traced(engine: Engine, *, dispose: bool = True) -> Iterator[Traced]:
    """Trace every connection ``engine``'s pool opens inside the block (the pool is
    emptied before and after it, so each connection is traced from its start).

    An async engine's pool is emptied by awaiting its ``dispose()``: pass
    ``dispose=False`` and await it at the start and the end of the block."""
    seen = Traced()
    with tempfile.NamedTemporaryFile("w+", suffix=".trace") as log:

        def trace(_dbapi: Any, record: Any) -> None:
            pgconn = record.driver_connection.pgconn
            pgconn.trace(os.dup(log.fileno()))
            pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

        if dispose:
            engine.dispose()
        event.listen(engine, "connect", trace)
        try:
            yield seen
        finally:
            if dispose:
                engine.dispose()  # closes the connections: libpq writes out their traces
            event.remove(engine, "connect", trace)
        seen.exchanges = parse(Path(log.name).read_text())


def parse(text: str) -> list[Exchange]:
    """The exchanges of a trace (closing a connection, ``Terminate``, is left out)."""
    messages: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        found = _MESSAGE.match(line)
        if found:
            messages.append((found[1], found[2], found[3]))
        elif messages:  # a statement's text runs over several lines
            side, kind, body = messages[-1]
            messages[-1] = (side, kind, body + "\n" + line)
    exchanges: list[Exchange] = []
    previous = ""
    for side, kind, body in messages:
        if kind == "Terminate":
            continue
        if side == "F" and previous != "F":
            exchanges.append(Exchange())
        if exchanges:
            (exchanges[-1].sent if side == "F" else exchanges[-1].received).append((kind, body))
        previous = side
    return exchanges

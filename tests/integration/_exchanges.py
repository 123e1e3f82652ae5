"""The network exchanges of a store, read from libpq's protocol trace of its connections.

An exchange is what a client sends before it waits for the server: it ends with a
message that asks for the replies (``Query``, ``Sync``, or a ``Flush`` on its own).
These are the round trips a user pays for, counted on the client side. (In
pipeline mode psycopg may read early replies while it is still sending; that is
not a wait, so replies do not split an exchange.)
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psycopg import pq
from sqlalchemy import Engine, event

_MESSAGE = re.compile(r"^([FB])\t\d+\t(\w+)\t?(.*)$")

#: Frontend messages after which the client waits for the server.
_WAITS = ("Query", "Sync", "Flush")


@dataclass
class Exchange:
    """The messages a client sent before it waited for the server's replies."""

    sent: list[tuple[str, str]] = field(default_factory=list)
    #: The text of every statement run in this exchange, in order: queried, or bound
    #: (an unnamed one as just parsed, a prepared one as it was parsed on this
    #: connection, maybe in an earlier exchange).
    ran: list[str] = field(default_factory=list)

    def statements(self) -> list[str]:
        """The text of every statement run in this exchange (see :attr:`ran`)."""
        return self.ran


#: The name and the text of a statement in a ``Parse`` message's trace, and the
#: statement a ``Bind`` binds.
_PARSE = re.compile(r'^\s*"([^"]*)" "(.*)" \d+(?: (?:NNNN|\d+))*\s*$', re.DOTALL)
_BIND = re.compile(r'^\s*"[^"]*" "([^"]*)"')


@dataclass
class Traced:
    """What :func:`traced` saw (filled in when its block ends): each connection's exchanges."""

    connections: list[list[Exchange]] = field(default_factory=list)

    @property
    def exchanges(self) -> list[Exchange]:
        """The exchanges of every connection, one connection after the other."""
        return [exchange for conn in self.connections for exchange in conn]


@contextlib.contextmanager
def traced(engine: Engine, *, dispose: bool = True) -> Iterator[Traced]:
    """Trace every connection ``engine``'s pool opens inside the block, each in a file
    of its own (the pool is emptied before and after it, so each connection is
    traced from its start).

    An async engine's pool is emptied by awaiting its ``dispose()``: pass
    ``dispose=False`` and await it at the start and the end of the block."""
    seen = Traced()
    with tempfile.TemporaryDirectory(prefix="memory-pg-trace-") as folder:

        def trace(_dbapi: Any, record: Any) -> None:
            log = Path(folder) / f"{time.monotonic_ns()}-{id(record)}.trace"
            pgconn = record.driver_connection.pgconn
            pgconn.trace(os.open(log, os.O_WRONLY | os.O_CREAT))  # libpq owns it now
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
        for log in sorted(Path(folder).iterdir()):
            seen.connections.append(parse(log.read_text()))


def parse(text: str) -> list[Exchange]:
    """The exchanges of one connection's trace (its closing, ``Terminate``, left out)."""
    sent: list[tuple[str, str]] = []
    for line in text.splitlines():
        found = _MESSAGE.match(line)
        if found:
            sent.append((found[2], found[3]) if found[1] == "F" else ("", ""))
        elif sent and sent[-1][0]:  # a statement's text runs over several lines
            kind, body = sent[-1]
            sent[-1] = (kind, body + "\n" + line)
    exchanges: list[Exchange] = []
    current = Exchange()
    parsed: dict[str, str] = {}  # statement name ("" unnamed) -> text, on this connection
    for kind, body in sent:
        if kind in ("", "Terminate"):
            continue
        if kind == "Parse" and (found := _PARSE.match(body)):
            parsed[found[1]] = found[2]
        elif kind == "Bind" and (found := _BIND.match(body)):
            current.ran.append(parsed.get(found[1], ""))
        elif kind == "Query":
            current.ran.append(body.strip().strip('"'))
        if (
            kind == "Flush"
            and not current.sent
            and exchanges
            and exchanges[-1].sent[-1][0] == "Sync"
        ):
            exchanges[-1].sent.append((kind, body))  # psycopg flushes after a Sync: same wait
            continue
        current.sent.append((kind, body))
        if kind in _WAITS:
            exchanges.append(current)
            current = Exchange()
    return exchanges

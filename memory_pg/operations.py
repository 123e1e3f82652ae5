"""The operation protocol: the steps an operation of :mod:`memory_pg.methods` yields,
and the wrappers that make an operation a store's method.

An *operation* is a generator, like a plan one level up: it validates the call, builds
plans and yields :class:`Run` (run this plan in a transaction), :class:`Blocking` (call
this function: embedding, file I/O) or :class:`Session` (call this function with a
connection). :class:`~memory_pg.store.MemoryStore` runs the steps in place;
:class:`~memory_pg.async_store.AsyncMemoryStore` awaits the plans on an
``AsyncConnection`` and sends the blocking work to a thread. Each store's public method
is the operation of the same name, wrapped by :func:`sync_method` or
:func:`async_method`, so names, signatures and docstrings are one text for both."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_pg.plans.protocol import Plan

P = ParamSpec("P")
T = TypeVar("T")


#: The caller's connection a write may join: a ``Connection`` for the sync store, an
#: ``AsyncConnection`` for the async one.
Conn = Connection | AsyncConnection


@dataclass(frozen=True)
class Run:
    """Run ``plan`` in one transaction as ``user_id`` (in ``conn``'s, if given)."""

    plan: Plan[Any]
    user_id: str | None
    conn: Conn | None = None
    #: The plan runs a nearest-neighbour statement (a search, or a write's lookup of
    #: what it may replace): the HNSW settings, and a plan made for the user's size
    #: (``protocol.begin``).
    ef_search: int | None = None
    #: Work that follows a committed write and only helps (statistics): its failure
    #: is logged as a warning and answered ``None``, never raised into the call.
    best_effort: bool = False
    #: The plan only reads: it may run on a replica (:mod:`memory_pg.replicas`);
    #: ``again`` makes it afresh, to run on the primary when a replica fails it.
    read: bool = False
    again: Callable[[], Plan[Any]] | None = None


@dataclass(frozen=True)
class Blocking:
    """Call ``fn(*args)``: work that would block an event loop (the async store threads it)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Session:
    """Call ``fn(connection)`` on a session connection, outside any transaction."""

    fn: Callable[[Connection], Any]


Step = Run | Blocking | Session
Op = Generator[Step, Any, T]


def _signature(op: Callable[..., Any]) -> inspect.Signature:
    """The operation's signature, returning what the store returns (``Op[X]`` -> ``X``)."""
    sig = inspect.signature(op)
    returned = str(sig.return_annotation)
    if returned.startswith("Op[") and returned.endswith("]"):
        sig = sig.replace(return_annotation=returned[3:-1])
    return sig


def sync_method(op: Callable[Concatenate[Any, P], Op[T]]) -> Callable[Concatenate[Any, P], T]:
    """The sync store's method of an operation: runs it to its value."""

    def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._drive(op(self, *args, **kwargs))  # type: ignore[no-any-return]

    functools.update_wrapper(method, op)
    method.__signature__ = _signature(op)  # type: ignore[attr-defined]
    return method


def async_method(
    op: Callable[Concatenate[Any, P], Op[T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The async store's method of an operation: a coroutine that runs it."""

    async def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._drive(op(self, *args, **kwargs))  # type: ignore[no-any-return]

    functools.update_wrapper(method, op)
    method.__signature__ = _signature(op)  # type: ignore[attr-defined]
    return method


def run(
    plan: Plan[T],
    user_id: str | None,
    conn: Conn | None = None,
    ef_search: int | None = None,
    *,
    best_effort: bool = False,
) -> Op[T]:
    step = Run(plan, user_id, conn, ef_search, best_effort)
    return (yield step)  # type: ignore[no-any-return]


def read(make: Callable[[], Plan[T]], user_id: str | None, ef_search: int | None = None) -> Op[T]:
    """Run the plan ``make()`` makes, which only reads: on a replica where the store has one."""
    step = Run(make(), user_id, None, ef_search, read=True, again=make)
    return (yield step)  # type: ignore[no-any-return]


def blocking(fn: Callable[..., T], *args: Any) -> Op[T]:
    return (yield Blocking(fn, args))  # type: ignore[no-any-return]


def session(fn: Callable[[Connection], T]) -> Op[T]:
    return (yield Session(fn))  # type: ignore[no-any-return]


__all__ = [
    "Blocking",
    "Conn",
    "Op",
    "Run",
    "Session",
    "Step",
    "async_method",
    "blocking",
    "read",
    "run",
    "session",
    "sync_method",
]

"""A server builds its search statements in the background once it is up
(:meth:`memory_pg.AsyncMemoryStore.warm_up`), so its first searches of each kind do
not pay for them.

Building a statement holds the event loop for about 50 ms, so the server builds
those of one question at a time and pauses as long between them: a request that
arrives meanwhile waits for one question's statements at most. It stops when the
server begins to shut down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.warming import WARM_UP_QUESTIONS

logger = logging.getLogger(__name__)

#: The agent the statements of agent-scoped searches are built as (any id builds the
#: same statements; the searches read nothing).
SOME_AGENT = "memory-pg-warm-up"

#: The pause after each question's statements, in seconds.
PAUSE_S = 0.05


async def warm_up(
    store: AsyncMemoryStore,
    agent_ids: Sequence[str | None],
    stop: asyncio.Event | None = None,
) -> None:
    """Build the statements of searches made as each of ``agent_ids`` (None: no agent),
    until ``stop`` is set.

    An optimisation, never a failure: an error is logged and the server goes on."""
    built = 0
    try:
        for agent_id in agent_ids:
            for question in WARM_UP_QUESTIONS:
                if stop is not None and stop.is_set():
                    return
                built += await store.warm_up(agent_id=agent_id, questions=[question])
                await asyncio.sleep(PAUSE_S)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the database went away, the store closed: searches build later
        logger.warning("search statements not built ahead: %s", type(exc).__name__)
        return
    logger.info("%d search statements built ahead", built)


async def stop(task: asyncio.Task[None]) -> None:
    """Cancel a warm-up still running (the server is stopping) and wait for it."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

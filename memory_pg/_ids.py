"""Ids of new memories: UUIDs of version 7 (RFC 9562), time first, in the order made.

The turns of one write share their ``created_at`` and often their ``event_time``; their
ids tell their order (the last turn of a conversation ends its chain, see
:mod:`memory_pg.sql.turns`). Time-ordered ids also keep new entries of the primary
key at the right end of its index instead of scattered over it.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid

_lock = threading.Lock()
_last = (0, 0)  # (milliseconds, counter) of the last id made in this process

_COUNTER_MAX = 0xFFF  # 12 bits: the ids of one millisecond, in order


def ordered_ids(n: int) -> list[uuid.UUID]:
    """``n`` new UUIDs, each greater than the one before (and than any this process made
    before): 48 bits of Unix milliseconds, a 12-bit counter within the millisecond
    (RFC 9562's method 1), 62 random bits."""
    global _last
    out = []
    with _lock:
        for _ in range(n):
            ms, counter = time.time_ns() // 1_000_000, 0
            if ms <= _last[0]:
                ms, counter = _last[0], _last[1] + 1
                if counter > _COUNTER_MAX:
                    ms, counter = ms + 1, 0
            _last = (ms, counter)
            value = (ms & (1 << 48) - 1) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62
            out.append(uuid.UUID(int=value | secrets.randbits(62)))
    return out


__all__ = ["ordered_ids"]

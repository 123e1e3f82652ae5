"""A dialogue turn's context from its own conversation (no I/O).

A turn alone often cannot be found: "Yes, last Friday" answers a question that it
does not repeat. A ``dialogue`` memory written with ``metadata["session_id"]`` and no
``context`` therefore gets the turn before it in that conversation as its context:
the previous ``dialogue`` turn of the same write, else the newest stored one of the
session, if it was said within :data:`MAX_PAUSE` of it (after a longer pause a turn
opens a new exchange: messages days apart share no frame). The context is embedded
and indexed with the turn (its words count ``RankingSettings.lexical_context_weight``
of the turn's own), and returned as ``context``; it is not part of the memory's text.

What it never does: give a shared memory the text of a private one as its context
(a private turn frames only a private turn of the same agent), or cross users (the
lookup is the user's own, under row-level security). ``context=""`` on an item, or
``StoreSettings(session_context=False)``, turns it off.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from memory_pg.plans.protocol import Plan
from memory_pg.plans.relations import SESSION_KEY
from memory_pg.sql import turns as sql

if TYPE_CHECKING:
    from memory_pg.plans.shapes import Prepared

#: How much of the previous turn becomes the context, in width units (a CJK character
#: counts 3, anything else 1): its end, which is what the turn answers. Small enough
#: that the turn's own words stay inside the model's input (256 tokens for the
#: bundled model; the context is embedded first).
CONTEXT_WIDTH = 240

#: The longest pause between two turns for the first to frame the second (event times;
#: a turn without one is said now).
MAX_PAUSE = timedelta(hours=1)

#: The memory type whose turns get their conversation's context.
DIALOGUE = "dialogue"


def session_of(metadata: Mapping[str, object]) -> str | None:
    """The conversation a memory belongs to: ``metadata["session_id"]``, if a text."""
    session = metadata.get(SESSION_KEY)
    return session if isinstance(session, str) and session else None


def _width(ch: str) -> int:
    return 3 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def tail(text: str, width: int = CONTEXT_WIDTH) -> str:
    """The end of ``text`` that fits in ``width`` units, starting at a word where the
    cut falls inside one (Chinese has no spaces: there it starts at the character)."""
    used = 0
    for i in range(len(text) - 1, -1, -1):
        used += _width(text[i])
        if used > width:
            cut = text[i + 1 :]
            space = cut.find(" ")
            if not text[i].isspace() and 0 <= space < len(cut) // 4:
                cut = cut[space:]
            return cut.strip()
    return text


def _wanted(prepared: Prepared) -> list[str | None]:
    """Per item: the session whose previous turn becomes its context, else None (not
    a dialogue turn, no session, or a context given)."""
    return [
        session_of(meta) if item.memory_type == DIALOGUE and item.context is None else None
        for item, meta in zip(prepared.items, prepared.metadata, strict=True)
    ]


def from_batch(prepared: Prepared, enabled: bool = True) -> list[str]:
    """Give each turn the turn before it in this write; returns the sessions whose
    first turn here needs the newest stored turn (:func:`plan_fill`)."""
    if not enabled:
        return []
    last: dict[str, int] = {}
    first: list[str] = []
    for i, session in enumerate(_wanted(prepared)):
        own = session_of(prepared.metadata[i])
        if session is not None:
            if session in last:
                before, turn = prepared.items[j := last[session]], prepared.items[i]
                if _may_frame(before.private, turn.private) and _close(
                    before.event_time, turn.event_time
                ):
                    prepared.contexts[i] = tail(prepared.texts[j])
            elif session not in first:
                first.append(session)
        if own is not None and prepared.items[i].memory_type == DIALOGUE:
            last[own] = i
    return first


def plan_fill(prepared: Prepared, sessions: Sequence[str]) -> Plan[None]:
    """Give the first turn of each of ``sessions`` in this write the last stored turn of
    its conversation that the writer may see (:func:`last_turn`)."""
    rows = yield sql.session_turns(prepared.user_id, sessions)
    by_session: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_session.setdefault(row["session"], []).append(row)
    seen: set[str] = set()
    for i, session in enumerate(_wanted(prepared)):
        if session is not None and session not in seen:
            turn = prepared.items[i]
            found = last_turn(by_session.get(session, []), prepared.agent_id, turn.private)
            if found is not None and _may_frame(found["private"], turn.private):
                if _close(found["event_time"], turn.event_time):
                    prepared.contexts[i] = tail(found["text"])
        own = session_of(prepared.metadata[i])
        if own is not None and prepared.items[i].memory_type == DIALOGUE:
            seen.add(own)  # from here on, the turn before is in this write
    return None


#: How many memories back from a conversation's end a writer looks for a turn it sees.
MAX_STEPS_BACK = 8


def last_turn(
    rows: Sequence[Mapping[str, Any]], agent_id: str | None, private: bool = False
) -> Mapping[str, Any] | None:
    """The last ``dialogue`` turn of one conversation that a turn of ``agent_id``
    (``private`` or not) may follow (:func:`memory_pg.sql.turns.may_follow`: a shared
    turn only shared ones), from its recent memories with the memory each ``follows``:
    start at the end of the chain of those (the one no other of them follows; one
    write's turns share their times, so times cannot tell) and step back past other
    types, replaced or expired memories and turns it may not follow (at most
    :data:`MAX_STEPS_BACK`)."""
    by_id = {r["id"]: r for r in rows}

    def followable(r: Mapping[str, Any]) -> bool:
        return sql.may_follow(r["private"], r["agent_id"], private, agent_id)

    eligible = [r for r in rows if followable(r)]
    followed = {r["follows"] for r in eligible}
    followed_at_all = {r["follows"] for r in rows}
    ends = [r for r in eligible if r["id"] not in followed]
    if not ends:
        return None
    # As the SQL chain end (memory_pg.sql.turns): a write's turns share their times,
    # their ids are in the order written.
    row: Mapping[str, Any] | None = max(
        ends,
        key=lambda r: (r["id"] not in followed_at_all, r["created_at"], r["event_time"], r["id"]),
    )
    for _ in range(MAX_STEPS_BACK):
        if row is None:
            return None
        usable = row["superseded_at"] is None and not row["expired"]
        if row["memory_type"] == DIALOGUE and usable and followable(row):
            return row
        row = by_id.get(row["follows"])
    return None


def _close(before: datetime | None, turn: datetime | None) -> bool:
    """Whether ``turn`` follows ``before`` within :data:`MAX_PAUSE` (None: now)."""
    now = datetime.now(timezone.utc)
    return abs((turn or now) - (before or now)) <= MAX_PAUSE


def _may_frame(source_private: bool, turn_private: bool) -> bool:
    """A private turn frames only a private turn (of the same agent: the writer sees
    no other agent's private memories)."""
    return turn_private or not source_private

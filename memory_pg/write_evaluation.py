"""Write-path evaluation: what a dialogue or a run of writes leaves as current memories.

A write-path set is JSON::

    {"name": "...",
     "cases": [{"id": "zh-moved-city", "lang": "zh", "split": "dev",
                "kind": "dialogue",
                "sessions": [["user: 我住在北京"], ["user: 我已经搬到上海了"]],
                "expect_current": ["搬到上海"],
                "expect_absent": [],
                "expect_superseded": ["我住在北京"]},
               {"id": "...", "kind": "memories",
                "memories": [{"text": "数据库使用 MySQL", "type": "key_decision"}], ...}]}

A ``dialogue`` case runs each session through a :class:`~memory_pg.wrapper.MemoryWrapper`
(offline compaction after every turn; the assistant's lines are its replies); a
``memories`` case calls ``add_memory`` once per memory. Each case has its own
throwaway user, erased afterwards; everything is judged through the public API
(``list_memories``). The markers are substrings of memory texts:

- ``expect_current``: facts that must be current afterwards (fact recall);
- ``expect_absent``: what must never be stored (a question, a request, the
  assistant's suggestion...): a stored memory holding one is a non-fact;
- ``expect_superseded``: memories that must have been replaced; any other
  replaced memory is a false supersession.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_pg.errors import InvalidEvalSet

if TYPE_CHECKING:
    from memory_pg.store import MemoryStore

__all__ = ["WriteCase", "WritePathSet", "evaluate_write_path", "load_write_path_set"]

#: The write-path set shipped with the package.
BUNDLED_WRITE_PATH = "eval_write_path.json"


@dataclass(frozen=True)
class WriteCase:
    """One dialogue (or run of writes) and what it must leave behind."""

    id: str
    kind: str
    lang: str
    split: str
    sessions: tuple[tuple[str, ...], ...]
    memories: tuple[tuple[str, str], ...]
    expect_current: tuple[str, ...]
    expect_absent: tuple[str, ...]
    expect_superseded: tuple[str, ...]


@dataclass(frozen=True)
class WritePathSet:
    """Write-path cases."""

    name: str
    cases: tuple[WriteCase, ...]


def _strs(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError("expected a list of strings")
    return tuple(str(v) for v in value)


def load_write_path_set(path: str | Path | None = None) -> WritePathSet:
    """Read a write-path set; None reads the bundled one.

    Raises:
        InvalidEvalSet: the file is missing, not JSON, or not the documented shape.
    """
    try:
        if path is None:
            raw = resources.files("memory_pg").joinpath("data", BUNDLED_WRITE_PATH)
            doc = json.loads(raw.read_text("utf-8"))
        else:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidEvalSet(
            f"cannot read write-path set {path or BUNDLED_WRITE_PATH}: {exc}"
        ) from exc
    try:
        cases = tuple(
            WriteCase(
                id=str(c["id"]),
                kind=str(c.get("kind", "dialogue")),
                lang=str(c.get("lang", "?")),
                split=str(c.get("split", "all")),
                sessions=tuple(_strs(s) for s in c.get("sessions", [])),
                memories=tuple(
                    (str(m["text"]), str(m.get("type", "key_decision")))
                    for m in c.get("memories", [])
                ),
                expect_current=_strs(c.get("expect_current", [])),
                expect_absent=_strs(c.get("expect_absent", [])),
                expect_superseded=_strs(c.get("expect_superseded", [])),
            )
            for c in doc["cases"]
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidEvalSet(
            f"write-path set {path or BUNDLED_WRITE_PATH} is malformed: {exc!r}"
        ) from exc
    if not cases:
        raise InvalidEvalSet("a write-path set needs cases")
    bad = [c.id for c in cases if c.kind not in ("dialogue", "memories")]
    if bad:
        raise InvalidEvalSet(f"case kind must be 'dialogue' or 'memories': {bad[:5]}")
    return WritePathSet(str(doc.get("name", path or BUNDLED_WRITE_PATH)), cases)


class _ScriptedAgent:
    """Replies with the session's assistant lines, in order."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    def chat(self, prompt: str) -> str:
        return self.replies.pop(0) if self.replies else "OK."


def _split_role(line: str) -> tuple[str, str]:
    role, sep, text = line.partition(":")
    if sep and role.strip().lower() in ("user", "assistant"):
        return role.strip().lower(), text.strip()
    return "user", line.strip()


def _run_case(store: MemoryStore, case: WriteCase, user_id: str) -> list[dict[str, Any]]:
    from memory_pg.wrapper import MemoryWrapper

    if case.kind == "memories":
        for text, memory_type in case.memories:
            store.add_memory(text, memory_type, user_id=user_id)
    for session in case.sessions:
        agent = _ScriptedAgent()
        with MemoryWrapper(agent, store, user_id=user_id, compact_threshold=1) as bot:
            lines = [_split_role(line) for line in session]
            for i, (role, text) in enumerate(lines):
                if role != "user":
                    continue
                nxt = lines[i + 1] if i + 1 < len(lines) else None
                agent.replies = [nxt[1]] if nxt and nxt[0] == "assistant" else []
                bot.chat(text)
    return store.list_memories(user_id=user_id, include_inactive=True, limit=1000)


def _judge(case: WriteCase, rows: list[dict[str, Any]]) -> dict[str, Any]:
    current = [r["text"] for r in rows if r.get("superseded_at") is None]
    replaced = [r["text"] for r in rows if r.get("superseded_at") is not None]
    facts_found = [m for m in case.expect_current if any(m in t for t in current)]
    non_facts = [t for t in (r["text"] for r in rows) if any(m in t for m in case.expect_absent)]
    made = [
        m
        for m in case.expect_superseded
        if any(m in t for t in replaced) and not any(m in t for t in current)
    ]
    false = [t for t in replaced if not any(m in t for m in case.expect_superseded)]
    ok = (
        len(facts_found) == len(case.expect_current)
        and not non_facts
        and len(made) == len(case.expect_superseded)
        and not false
    )
    return {
        "id": case.id,
        "lang": case.lang,
        "split": case.split,
        "ok": ok,
        "facts": len(case.expect_current),
        "facts_found": len(facts_found),
        "stored": len(rows),
        "non_facts_stored": len(non_facts),
        "supersessions_expected": len(case.expect_superseded),
        "supersessions_made": len(made),
        "false_supersessions": len(false),
        "current": current,
        "replaced": replaced,
    }


def _aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    facts = sum(r["facts"] for r in rows)
    stored = sum(r["stored"] for r in rows)
    expected = sum(r["supersessions_expected"] for r in rows)
    non_facts = sum(r["non_facts_stored"] for r in rows)
    made = sum(r["supersessions_made"] for r in rows)
    return {
        "cases": len(rows),
        "cases_ok": sum(r["ok"] for r in rows),
        "fact_recall": round(sum(r["facts_found"] for r in rows) / facts, 4) if facts else None,
        "non_fact_precision": round(1 - non_facts / stored, 4) if stored else None,
        "non_facts_stored": non_facts,
        "supersessions_expected": expected,
        "supersessions_made": made,
        "false_supersessions": sum(r["false_supersessions"] for r in rows),
    }


def evaluate_write_path(
    store: MemoryStore, write_set: WritePathSet, *, user_prefix: str | None = None
) -> dict[str, Any]:
    """Run every case for its own throwaway user, judge what is current, erase the users.

    Args:
        store: the store to measure (its supersession policy and judge are what is measured);
            bound to no user, since each case gets a user of its own.
        write_set: from :func:`load_write_path_set`.
        user_prefix: scratch users are ``<prefix>-<n>`` (default: a random ``evalw-...``).
    """
    prefix = user_prefix or f"evalw-{uuid.uuid4().hex[:12]}"
    rows = []
    for n, case in enumerate(write_set.cases):
        uid = f"{prefix}-{n}"
        try:
            rows.append(_judge(case, _run_case(store, case, uid)))
        finally:
            store.clear_user_memory(uid)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "split": defaultdict(list),
        "lang": defaultdict(list),
    }
    for r in rows:
        groups["split"][r["split"]].append(r)
        groups["lang"][r["lang"]].append(r)
    return {
        "name": write_set.name,
        "cases": len(rows),
        "overall": _aggregate(rows),
        "by_split": {k: _aggregate(v) for k, v in sorted(groups["split"].items())},
        "by_lang": {k: _aggregate(v) for k, v in sorted(groups["lang"].items())},
        "failures": [
            {k: r[k] for k in ("id", "split", "current", "replaced")} for r in rows if not r["ok"]
        ],
    }

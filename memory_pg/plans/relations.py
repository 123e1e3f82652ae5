"""Plans of the relations between memories: record them on write, walk them on read.

Generators of statements (no I/O), driven by the sync and the async store alike
(see :mod:`memory_pg.plans`). Writing runs inside the write's own transaction, so
a memory and its entities, mentions and links commit or vanish together.

Which links a write makes:

* ``mentions``: each new memory to the entities :func:`memory_pg.entities.extract`
  finds in its text (one upsert-and-insert statement for a whole batch), found before
  the transaction by :func:`with_entities`;
* ``follows``: a memory whose ``metadata["session_id"]`` names a conversation, to
  the memory before it in that conversation (the previous one of the batch, else
  the newest one already stored);
* ``supersedes``: a new memory to each memory it replaced (``superseded_by``), and
  on import between imported rows as their ``superseded_by`` says;
* ``merged_into`` / ``derived_from``: a consolidation's fragments to their summary
  and back (:func:`summary_steps`).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memory_pg import entities as extraction
from memory_pg.errors import InvalidArgument, MemoryNotFound
from memory_pg.plans.shapes import memory_dict
from memory_pg.sql import entities as sql_entities
from memory_pg.sql import relations as sql
from memory_pg.sql import turns as sql_turns
from memory_pg.sql.memories import NewMemory, get_memory
from memory_pg.sql.search import SearchFilters, filter_shape

if TYPE_CHECKING:  # the stores import this module: no cycle at run time
    from memory_pg.plans.protocol import Plan, Step

#: The metadata key that names a conversation: its turns follow one another.
SESSION_KEY = "session_id"

#: Deepest walk :func:`plan_related` and a search's ``expand`` take.
MAX_DEPTH = 3


def check_depth(depth: object, what: str = "depth") -> int:
    """``depth`` as an int in 0..MAX_DEPTH, else :class:`InvalidArgument`."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidArgument(f"{what} must be an integer from 0 to {MAX_DEPTH}, got {depth!r}")
    return depth


def check_kinds(kinds: object) -> tuple[str, ...] | None:
    """Entity kinds to list (a str or a sequence of them), else :class:`InvalidArgument`."""
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, (list, tuple)) or any(k not in extraction.KINDS for k in kinds):
        raise InvalidArgument(f"kinds must be among {list(extraction.KINDS)}, got {kinds!r}")
    return tuple(kinds)


def entities_of(row: NewMemory) -> tuple[extraction.Entity, ...]:
    """The entities a memory's text names (not its context: that frames it): as found
    before its write (``row.found``), else the rules', or those an LLM gave with it
    first (:func:`memory_pg.entities.combine`)."""
    if row.found is not None:
        return row.found
    return tuple(extraction.combine(row.entities, extraction.extract(row.text)))


def with_entities(rows: Sequence[NewMemory]) -> list[NewMemory]:
    """``rows`` with the entities they name found (``found``): CPU work, jieba's model
    loading on the first Chinese text, to do before the write's transaction opens so
    that no lock waits for it. A row that has them already is kept as it is."""
    return [
        row if row.found is not None else dataclasses.replace(row, found=entities_of(row))
        for row in rows
    ]


def found_entities(rows: Sequence[NewMemory]) -> list[sql.NewEntity]:
    """The entities of ``rows`` (:func:`entities_of`) as the rows a write records."""
    return [
        sql.NewEntity(row.id, f.name, f.key, f.kind, f.aliases)
        for row in rows
        for f in entities_of(row)
    ]


def plan_record(
    user_id: str,
    rows: Sequence[NewMemory],
    replaced: Mapping[uuid.UUID, uuid.UUID] | None = None,
) -> Plan[None]:
    """Entities, mentions and links of ``rows``, just inserted in this transaction.

    ``replaced``: ``{old: new}`` for the memories the write marked superseded; without
    it (an import), the rows' own ``superseded_by`` says what replaced them.
    """
    if not rows:
        return None
    found = found_entities(rows)
    if found:
        yield sql.record_mentions(user_id, found)
    links: list[tuple[uuid.UUID, str, uuid.UUID]] = []
    turns: dict[str, list[NewMemory]] = {}  # each session's turns so far in this write
    # Per scope (private, agent) and session: the turn that needs the stored chain's end.
    firsts: dict[tuple[bool, str | None], dict[str, uuid.UUID]] = {}
    for row in rows:
        session = row.metadata.get(SESSION_KEY)
        if not isinstance(session, str) or not session:
            continue
        before = next(
            (
                b
                for b in reversed(turns.get(session, []))
                if sql_turns.may_follow(b.private, b.agent_id, row.private, row.agent_id)
            ),
            None,
        )
        if before is not None:
            links.append((row.id, "follows", before.id))
        else:
            scope = (row.private, row.agent_id if row.private else None)
            firsts.setdefault(scope, {}).setdefault(session, row.id)
        turns.setdefault(session, []).append(row)
    for (private, agent_id), first in firsts.items():
        ends = yield sql_turns.last_turns(
            user_id, sorted(first), [r.id for r in rows], agent_id, private
        )
        links.extend((first[b["session"]], "follows", b["id"]) for b in ends)
    if replaced is not None:
        links.extend((new, "supersedes", old) for old, new in replaced.items())
    if links:
        yield sql.insert_links(user_id, links)
    if replaced is None:
        yield sql.supersedes_links(user_id, [r.id for r in rows])
    return None


def supersedes_step(user_id: str, replaced: Mapping[uuid.UUID, uuid.UUID]) -> Step:
    """Links ``new supersedes old`` for ``{old: new}`` (a replace marks after its insert)."""
    return sql.insert_links(user_id, [(new, "supersedes", old) for old, new in replaced.items()])


def summary_steps(user_id: str, summary: NewMemory, members: Sequence[uuid.UUID]) -> list[Step]:
    """What a consolidation summary adds: its mentions, and its links to its fragments."""
    steps: list[Step] = []
    found = found_entities([summary])
    if found:
        steps.append(sql.record_mentions(user_id, found))
    links = [(i, "merged_into", summary.id) for i in members]
    links += [(summary.id, "derived_from", i) for i in members]
    steps.append(sql.insert_links(user_id, links))
    return steps


# -- reads --------------------------------------------------------------------------------


def expand_step(
    search: tuple[Any, dict[str, Any]], filters: SearchFilters, expand: int
) -> tuple[Any, dict[str, Any]]:
    """A search statement and its values, widened by ``expand`` links (one statement,
    shared by every search of its shape: the values, the user's included, are the
    search's own)."""
    stmt, values = search
    return sql.expanded_search(stmt, filter_shape(filters), expand), values


def result_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A search or walk row as the dict callers get (ids as str)."""
    out = memory_dict(row)
    if out.get("via") is not None:
        out["via"] = str(out["via"])
    return out


def plan_related(
    user_id: str,
    memory_id: uuid.UUID,
    depth: int,
    agent_id: str | None,
    limit: int,
) -> Plan[list[dict[str, Any]]]:
    """Memories up to ``depth`` links from one the caller may see, nearest first."""
    found = yield get_memory(user_id, memory_id, agent_id)
    if not found:
        raise MemoryNotFound(f"no memory {memory_id} for this user")
    rows = yield sql.related_statement(user_id, memory_id, depth, agent_id, limit)
    return [result_dict(r) for r in rows]


def plan_entity(
    user_id: str,
    name: str,
    agent_id: str | None,
    include_inactive: bool,
    limit: int,
) -> Plan[dict[str, Any] | None]:
    """An entity by name or alias, with the memories naming it (newest first)."""
    key = extraction.entity_key(name)
    if not key:
        raise InvalidArgument(f"not an entity name: {name!r}")
    found = yield sql_entities.find_entity(user_id, key, name.strip(), agent_id)
    if not found:
        return None
    ent = found[0]
    rows = yield sql_entities.entity_memories(user_id, ent["id"], agent_id, include_inactive, limit)
    if not rows:  # named only in memories this agent may not see
        return None
    return {
        "id": str(ent["id"]),
        "name": ent["name"],
        "kind": ent["kind"],
        "aliases": list(ent["aliases"]),
        "memories": [memory_dict(r) for r in rows],
    }


def plan_entities(
    user_id: str, agent_id: str | None, kinds: Sequence[str] | None, limit: int
) -> Plan[list[dict[str, Any]]]:
    """A user's entities, most named first, with counts of the memories naming them."""
    rows = yield sql_entities.list_entities(user_id, agent_id, kinds, limit)
    return [
        {
            "id": str(r["id"]),
            "name": r["name"],
            "kind": r["kind"],
            "aliases": list(r["aliases"]),
            "mentions": int(r["mentions"]),
            "last_mentioned_at": r["last_mentioned_at"],
        }
        for r in rows
    ]


def plan_graph(
    user_id: str, name: str, agent_id: str | None, limit: int
) -> Plan[dict[str, Any] | None]:
    """An entity's neighbourhood: the memories naming it, and the entities named with it."""
    ent = yield from plan_entity(user_id, name, agent_id, False, limit)
    if ent is None:
        return None
    rows = yield sql_entities.co_mentioned(user_id, uuid.UUID(ent["id"]), agent_id, limit)
    ent["related_entities"] = [
        {"id": str(r["id"]), "name": r["name"], "kind": r["kind"], "shared": int(r["shared"])}
        for r in rows
    ]
    return ent


def graph_text(graph: Mapping[str, Any], width: int = 100) -> str:
    """The neighbourhood of :func:`plan_graph` as indented text."""
    lines = [f"{graph['name']} ({graph['kind']})"]
    if graph["aliases"]:
        lines.append("  also: " + ", ".join(graph["aliases"]))
    lines.append(f"  memories ({len(graph['memories'])}):")
    for mem in graph["memories"]:
        when = mem["event_time"].date().isoformat() if mem.get("event_time") else "?"
        text = " ".join(str(mem["text"]).split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"    {when}  {text}")
    if graph["related_entities"]:
        lines.append("  named with:")
        for other in graph["related_entities"]:
            lines.append(f"    {other['name']} ({other['kind']}) ×{other['shared']}")
    return "\n".join(lines)


def _dot_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def graph_dot(graph: Mapping[str, Any], width: int = 60) -> str:
    """The neighbourhood of :func:`plan_graph` as Graphviz ``dot``."""
    center = "e_" + graph["id"].replace("-", "")
    lines = [
        "graph memory_pg {",
        '  node [fontname="Noto Sans CJK SC, sans-serif"];',
        f"  {center} [shape=doubleoctagon, label={_dot_quote(graph['name'])}];",
    ]
    for mem in graph["memories"]:
        node = "m_" + str(mem["id"]).replace("-", "")
        text = " ".join(str(mem["text"]).split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"  {node} [shape=box, label={_dot_quote(text)}];")
        lines.append(f'  {center} -- {node} [label="mentions"];')
    for other in graph["related_entities"]:
        node = "e_" + other["id"].replace("-", "")
        lines.append(f"  {node} [shape=ellipse, label={_dot_quote(other['name'])}];")
        lines.append(f'  {center} -- {node} [label="×{other["shared"]}", style=dashed];')
    lines.append("}")
    return "\n".join(lines)


__all__ = [
    "MAX_DEPTH",
    "SESSION_KEY",
    "check_depth",
    "check_kinds",
    "entities_of",
    "expand_step",
    "found_entities",
    "graph_dot",
    "graph_text",
    "plan_entities",
    "plan_entity",
    "plan_graph",
    "plan_record",
    "plan_related",
    "result_dict",
    "summary_steps",
    "supersedes_step",
    "with_entities",
]

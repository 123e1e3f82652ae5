"""Read plans: search, get, list, history and stats, and the dicts callers get (no I/O)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
from sqlalchemy import Select

from memory_pg._validate import (
    check_agent_id,
    check_agent_ids,
    check_memory_type,
    check_metadata,
    check_text,
    check_time,
    check_top_k,
)
from memory_pg.config import RankingSettings, StoreSettings
from memory_pg.errors import InvalidArgument
from memory_pg.plans import relations
from memory_pg.plans.protocol import Plan, Rows, final
from memory_pg.plans.shapes import memory_dict, parse_memory_id
from memory_pg.roles import plan_require_every_user
from memory_pg.sql import memories
from memory_pg.sql.search import SearchFilters, search_statement
from memory_pg.sql.use import record_use
from memory_pg.text.attributes import ATTRIBUTES, asked, stated
from memory_pg.text.changes import judge, may_change
from memory_pg.text.cues import CHANGING
from memory_pg.text.query import Query, analyse
from memory_pg.text.questions import asks_latest, asks_outcome
from memory_pg.text.references import (
    Name,
    compared_with,
    name_in,
    names_given,
    refers,
    says_of,
    sides,
    word_pattern,
)
from memory_pg.text.relatives import SAID_OF, known_as, relation_of
from memory_pg.text.topics import product_topics
from memory_pg.text.words import content


def search_filters(
    settings: StoreSettings,
    memory_types: Sequence[str] | None,
    since: datetime | None,
    until: datetime | None,
    metadata_filter: Mapping[str, Any] | None,
    as_of: datetime | None,
    min_similarity: float | None = None,
    min_lexical: float | None = None,
    agent_id: str | None = None,
    agent_ids: Sequence[str] | None = None,
) -> SearchFilters:
    """The validated filters of a search."""
    types = None
    if memory_types is not None:
        if isinstance(memory_types, str):
            memory_types = [memory_types]
        types = tuple(check_memory_type(t, settings) for t in memory_types)
    meta = check_metadata(metadata_filter, settings) if metadata_filter else None
    return SearchFilters(
        memory_types=types,
        since=check_time(since, "since"),
        until=check_time(until, "until"),
        metadata=meta,
        as_of=check_time(as_of, "as_of"),
        min_similarity=check_gate(min_similarity, "min_similarity"),
        min_lexical=check_gate(min_lexical, "min_lexical"),
        agent_id=check_agent_id(agent_id, settings),
        agent_ids=check_agent_ids(agent_ids, settings),
    )


def check_gate(value: object, name: str) -> float | None:
    """A similarity or full-text threshold: None, or a number in -1..1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 <= value <= 1:
        raise InvalidArgument(f"{name} must be a number between -1 and 1, got {value!r}")
    return float(value)


class HeavyUsers:
    """The users a store has seen holding more memories than the full-text leg's sample.

    A search for one of them is built with the leg's time window
    (:data:`memory_pg.sql.lexical.PULL_WINDOW`), which bounds what their matches read
    and finds the same memories; a light user's search is built without it, so it does
    not pay for the larger statement. Each search's rows say whether its user held at
    least the sample (``user_heavy``), and the next search of that user follows: a
    heavy user's first search in a process runs without the window, a user who shrank
    gets the smaller statement back. A hint, never a result: either statement returns
    the same rows. Thread-safe; at most :attr:`limit` users (the oldest noted goes).
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._users: dict[str, None] = {}
        self._lock = threading.Lock()

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._users

    def note(self, user_id: str, heavy: bool) -> None:
        """Record what a search found about ``user_id``."""
        with self._lock:
            if not heavy:
                self._users.pop(user_id, None)
            elif user_id not in self._users:
                if len(self._users) >= self.limit:
                    del self._users[next(iter(self._users))]
                self._users[user_id] = None


def plan_search(
    user_id: str,
    query: str,
    vector: np.ndarray[Any, Any] | None,
    top_k: int,
    filters: SearchFilters,
    track_access: bool,
    ranking: RankingSettings | None = None,
    *,
    readability: float = 1.0,
    now: datetime | None = None,
    expand: int = 0,
    heavy_users: HeavyUsers | None = None,
) -> Plan[list[dict[str, Any]]]:
    """Rank, and record the use of what was returned, in one statement.

    Run it with ``run_plan(..., ef_search=...)``: the HNSW settings are set with the
    tenant, in the transaction's first statement. Without them, a heavy user's
    search over the HNSW index filters the user after the scan and returns too
    few rows. With no ``vector``, the full-text leg ranks alone. ``heavy_users``:
    the store's record of its heavy users, read for the statement and kept up to date.
    """
    touch = track_access and filters.as_of is None  # a look into the past is no use
    window = heavy_users is not None and user_id in heavy_users
    described = _described(query, ranking) if not expand else ()
    both = sides(query) if described else ()  # "我爸比我妈大几岁？"
    outcome = not expand and asks_outcome(query)  # "最后改到哪天了": what became of a plan
    # The statement is shared by every search of its shape; the values are this one's.
    rs = ranking or RankingSettings()
    reference = now or filters.as_of or datetime.now(timezone.utc)

    def analysed(text: str, names: Sequence[Name] = ()) -> Query:
        return analyse(
            text,
            reference,
            names,
            entities=rs.entity_weight > 0,
            attributes=rs.attribute_weight > 0,
        )

    def support(text: str, after: datetime | None = None) -> tuple[Select[Any], dict[str, Any]]:
        """A search for what backs an answer up: ``text`` asked, more rows read (only
        memories of ``after`` or later, when given)."""
        since = filters.since if after is None else max(filters.since or after, after)
        return search_statement(
            user_id,
            analysed(text),
            vector,
            top_k=max(top_k, SUPPORT_DEPTH),
            filters=replace(filters, since=since),
            ranking=ranking,
            readability=readability,
            window=window,
        )

    step = search_statement(
        user_id,
        analysed(query),
        vector,
        top_k=top_k,
        filters=filters,
        ranking=ranking,
        touch=touch and not (described or outcome),
        readability=readability,
        window=window,
    )
    if not described and not outcome:
        if expand:  # and the memories ``expand`` links from the best hits (issue 19)
            step = relations.expand_step(step, filters, expand)
        # Its only statement: the driver commits with it, in one network exchange.
        rows = yield final(step)
        if not expand:
            rows = _latest_first(rows, query, top_k)
        return _search_results(rows, vector, bool(expand), user_id, heavy_users)
    rows = yield step
    if described:
        # The query describes a thing, or asks an attribute of someone: what the best
        # memories call it ("我常去的那家健身房是乐刻") is asked about in its place,
        # and each memory keeps the better of its two scores, so the direct answers
        # stay where they were. Found no name: these are the results.
        best = [str(r["text"]) for r in rows[:NAMING_DEPTH]]
        names = names_given(described, best, query)
        kind = "" if names else relation_of(described, query)
        if kind:
            # A partner or a child no memory calls so ("我男朋友是干啥的？"): the one
            # the memories name beside what is said of such a relative is asked about.
            said = yield search_statement(
                user_id,
                analysed(SAID_OF[kind]),
                None,
                top_k=KNOWN_AS_DEPTH,
                filters=filters,
                ranking=ranking,
                readability=readability,
                window=window,
            )
            known = known_as(kind, described, [str(r["text"]) for r in [*rows, *said]])
            names = (known,) if known else ()
        if names:
            named = yield search_statement(
                user_id,
                analysed(name_in(query, described, names), names),
                vector,
                top_k=top_k,
                filters=filters,
                ranking=ranking,
                readability=readability,
                window=window,
            )
            # Only the memories that name it gain by the name: the rest of the second
            # search is the first one's words again.
            naming = [r for r in named if any(n.named_in(str(r["text"])) for n in names)]
            rows = _better_of(rows, _held_to(rows, naming, rs), top_k)
            # One hop: what the named thing's memory states of the asked attribute
            # ("小周老家是长沙的") answers with the memory that named it ("小周对猫毛
            # 过敏" for "不能跟猫待一块的那个人"), right below it.
            anchor = next(
                (r for r in rows[:NAMING_DEPTH] if any(n.named_in(str(r["text"])) for n in names)),
                None,
            )
            if anchor is not None:
                answers = [r for r in naming if (r.get("attribute_match") or 0.0) > 0.0]
                rows = _better_of(rows, _below_rows(anchor, answers), top_k)
        # A value stated against another's ("我老公比我大三岁") needs that value too
        # ("我今年三十二"): it is asked for, and ranks right below the comparison.
        for other, anchor in _comparisons(query, rows[:NAMING_DEPTH]):
            more = yield support(_about(query, described, other))
            rows = _better_of(rows, _below_rows(anchor, _stating(other, more, query)), top_k)
        # A question that compares two sides or adds them up ("我爸比我妈大几岁？",
        # "iPad和相机一共多少钱？") needs what it asks stated of each: asked of a side
        # alone where the best results do not state it, and both statements lead.
        leads = []
        for side, question in both:
            found = _stating(side, rows[:NAMING_DEPTH], query)
            if not found:
                found = _stating(side, (yield support(question)), query)
            if not found:
                break  # one side unknown: the results stay as they were
            leads.append(found[0])
        else:
            if leads and rows:
                top = max(r["score"] for r in rows)
                lead = [{**r, "score": top + 1e-6 * (len(leads) - i)} for i, r in enumerate(leads)]
                rows = _better_of(rows, Rows(lead), top_k)
    rows = _latest_first(rows, query, top_k)
    if outcome:
        rows = yield from _outcome(rows, query, support, top_k)
    if touch and rows:
        # The use is the plan's last statement, as a search's own touch is.
        yield final(record_use(user_id, [r["id"] for r in rows]))
    return _search_results(rows, vector, False, user_id, heavy_users)


#: How many of the best results are read for the names they give what a query describes.
NAMING_DEPTH = 5
#: How many memories holding what is said of a partner or a child are read for a name.
KNOWN_AS_DEPTH = 30
#: How many results of a search for the other side of a comparison are read for its value.
SUPPORT_DEPTH = 30


def _better_of(first: Rows, second: Rows, top_k: int) -> Rows:
    """The rows of two searches, each memory once with the better of its scores, best
    first (the newer first on a tie), ``top_k`` of them."""
    best: dict[Any, dict[str, Any]] = {}
    for row in [*first, *second]:
        kept = best.get(row["id"])
        if kept is None or row["score"] > kept["score"]:
            best[row["id"]] = row
    ranked = sorted(best.values(), key=lambda r: (-r["score"], -r["event_time"].timestamp()))
    out = Rows(ranked[:top_k])
    out.rowcount = len(out)
    return out


def _held_to(first: Rows, second: list[dict[str, Any]], rs: RankingSettings) -> Rows:
    """``second``'s rows held to the attribute part of ``first``: where the first search
    weighed the asked attribute and the second found no candidate to weigh it by
    (``attribute_match`` None), a row that states another attribute keeps the first
    search's division ("王姐的孙子…" answers no "王姐今年多大"). A row that stated it
    in the first search keeps its better score there."""
    if all(r.get("attribute_match") is None for r in first):
        return Rows(second)
    return Rows(
        {**r, "score": r["score"] / (1.0 + rs.attribute_weight), "attribute_match": 0.0}
        if r.get("attribute_match") is None
        else r
        for r in second
    )


def _about(query: str, described: tuple[str, ...], other: str) -> str:
    """``query`` asked of ``other`` in place of its subject (of the speaker for ``我``)."""
    if other != "我":
        return name_in(query, described, [Name(other, word_pattern(other))])
    for word in described:
        query = query.replace(word, " ")
    return query


def _comparisons(query: str, rows: Sequence[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The others that answers to ``query`` state its attribute against, each with the
    answer that does (at most two). Only answers of the asked subject count, and an
    other that two of them are stated against is left out: "我妹比我小六岁" and "小周比
    我小两岁" answer "谁大" between them without the speaker's own age."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if (row.get("attribute_match") or 0.0) > 0.0:
            for other in compared_with(query, [str(row["text"])]):
                found.setdefault(other, []).append(row)
    return [(other, hits[0]) for other, hits in found.items() if len(hits) == 1][:2]


def _stating(side: str, rows: Sequence[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """The rows that state what ``query`` asks of ``side`` (``我``: the speaker)."""
    asking = set(asked(query))
    return [
        r for r in rows if says_of(side, str(r["text"])) and asking & set(stated(str(r["text"])))
    ]


def _below_rows(anchor: dict[str, Any], rows: Sequence[dict[str, Any]]) -> Rows:
    """``rows`` other than ``anchor``, each placed right below it, in their order."""
    out = Rows()
    for row in rows:
        if row["id"] != anchor["id"]:
            out.append({**row, "score": anchor["score"] - 1e-6 * (len(out) + 1)})
    return out


def _latest_first(rows: Rows, query: str, top_k: int) -> Rows:
    """``rows`` with each of the best that a newer one changes (the write path's own
    decision, :func:`memory_pg.text.changes.judge`) placed right below that newer one,
    for a question about what holds now or in the end ("萱萱的考级最后改到哪天了？":
    "改到6月21号了" above "定在6月14号"). Memories the store keeps side by side, as
    dialogue is, are both current; the newer answers such a question. Others stay as
    they were: a question about what was first said, or any other, pays one regular
    expression."""
    if len(rows) < 2 or not asks_latest(query):
        return rows
    best = list(rows[:NAMING_DEPTH])
    moved = False
    for j, newer in enumerate(best):
        text = str(newer["text"])
        # (None of the question's words: "停车费改成…" answers no "现在房租多少？".)
        if j == 0 or not newer.get("lexical", 1.0) or not may_change(text):
            continue
        for older in best[:j]:
            said = str(older["text"])
            if older["event_time"] < newer["event_time"] and judge(
                said, text, (product_topics(said), product_topics(text))
            ):
                best[j] = {**newer, "score": older["score"] + 1e-7}
                moved = True
                break
    return _better_of(rows, Rows(best), top_k) if moved else rows


def _outcome(
    rows: Rows, query: str, support: Callable[..., Any], top_k: int
) -> Generator[Any, Rows, Rows]:
    """``rows`` with what became of the best one placed right above it, for a question
    about what holds in the end: a later memory the write path's own decision reads as
    a change of it, found by the best one's own words ("展会延期到4月10号" for "计划3月28号
    去广州参加饰品展会"; the question, "那次饰品展最终哪天去的", names neither).
    One more statement, for such questions only."""
    if not rows:
        return rows
    first = rows[0]
    said = str(first["text"])
    asking = set(asked(query))
    later = yield support(said, first["event_time"])
    for newer in later:
        text = str(newer["text"])
        if (
            newer["event_time"] > first["event_time"]
            and may_change(text)
            and _shared(said, text)  # one thing, by a word of its own
            and (not asking or asking & set(stated(text)))
            and (found := judge(said, text, (product_topics(said), product_topics(text))))
            and found.kind in CHANGING  # a word of change ("延期到"), not "以后" or "新"
        ):
            return _better_of(rows, Rows([{**newer, "score": first["score"] + 1e-7}]), top_k)
    return rows


def _shared(one: str, other: str) -> bool:
    """Whether two texts share a content word that names no time ("下午" is none)."""
    return any(not _TIME_WORD.fullmatch(w) for w in content(one) & content(other))


_TIME_WORD = next(a.states for a in ATTRIBUTES if a.name == "time")


def _described(query: str, ranking: RankingSettings | None) -> tuple[str, ...]:
    """The words by which ``query`` describes what memories may name otherwise
    (:func:`memory_pg.text.references.refers`), unless the ranking weighs no attribute."""
    if ranking is not None and ranking.attribute_weight <= 0:
        return ()
    return refers(query)


def _search_results(
    rows: Rows,
    vector: np.ndarray[Any, Any] | None,
    expanded: bool,
    user_id: str,
    heavy_users: HeavyUsers | None,
) -> list[dict[str, Any]]:
    shape = relations.result_dict if expanded else memory_dict
    out = [shape(r) | {"full_text_only": vector is None} for r in rows]
    # Expanded rows carry no ``user_heavy``; the direct hits do, unless the query had
    # no word (then nothing is learnt).
    held = [r.pop("user_heavy", None) for r in out]
    heavy = next((h for h in held if h is not None), None)
    if heavy_users is not None and heavy is not None:
        heavy_users.note(user_id, heavy)
    return out


def plan_stats(
    user_id: str | None, settings: StoreSettings, agent_id: object = None
) -> Plan[dict[str, Any]]:
    """Counts per memory type, for one user (with an agent: of what it may see) or
    (``None``) every user."""
    agent = check_agent_id(agent_id, settings)
    if agent is not None and user_id is None:
        raise InvalidArgument("agent_id counts one user's memories: give the user_id too")
    if user_id is None:  # every user: only a role that sees them all gets true counts
        yield from plan_require_every_user("stats")
    rows = yield final(memories.stats(user_id, agent))
    return stats_dict(rows, user_id)


def stats_dict(rows: Rows, user_id: str | None) -> dict[str, Any]:
    """The stats of :func:`plan_stats` rows."""
    by_type = {
        r["memory_type"]: {"current": r["current"], "superseded": r["superseded"]} for r in rows
    }
    return {
        "user_id": user_id,
        "memories": sum(v["current"] for v in by_type.values()),
        "superseded": sum(v["superseded"] for v in by_type.values()),
        "by_type": by_type,
    }


def plan_get(
    user_id: str, memory_id: str, settings: StoreSettings, agent_id: str | None = None
) -> Plan[dict[str, Any] | None]:
    """One memory of the user by id (current or not), or None."""
    stmt = memories.get_memory(
        user_id, parse_memory_id(memory_id), check_agent_id(agent_id, settings)
    )
    return _first(stmt)


def _first(stmt: Any) -> Plan[dict[str, Any] | None]:
    rows = yield final(stmt)  # a read alone: the driver commits with it, one exchange
    return memory_dict(rows[0]) if rows else None


def plan_list(
    user_id: str,
    settings: StoreSettings,
    memory_types: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
    agent_id: str | None = None,
    agent_ids: Sequence[str] | None = None,
) -> Plan[list[dict[str, Any]]]:
    """A user's memories, newest first (superseded ones only if asked).

    ``memory_types`` are checked as a search checks them: an unknown type is
    :class:`~memory_pg.errors.UnknownMemoryType`, not an empty list.
    """
    if isinstance(memory_types, str):
        memory_types = [memory_types]
    types = None
    if memory_types is not None:
        types = tuple(check_memory_type(t, settings) for t in memory_types)
    stmt = memories.list_memories(
        user_id,
        memory_types=types,
        include_inactive=include_inactive,
        limit=limit,
        agent_id=check_agent_id(agent_id, settings),
        agent_ids=check_agent_ids(agent_ids, settings),
    )
    return _all(stmt)


def plan_history(
    user_id: str,
    memory_id: str | None,
    settings: StoreSettings,
    agent_id: str | None = None,
    limit: int | None = None,
) -> Plan[list[dict[str, Any]]]:
    """Lifecycle events of a user (or of one memory), oldest first; with ``limit``,
    the latest that many."""
    mid = parse_memory_id(memory_id) if memory_id is not None else None
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidArgument(f"limit must be a whole number of at least 1, got {limit!r}")
    stmt = memories.history_of(user_id, mid, check_agent_id(agent_id, settings), limit)
    rows = yield final(stmt)
    events = [memory_dict(r) for r in rows]
    return events[::-1] if limit is not None else events


def _all(stmt: Any) -> Plan[list[dict[str, Any]]]:
    rows = yield final(stmt)
    return [memory_dict(r) for r in rows]


def check_query(query: object, top_k: object, settings: StoreSettings) -> tuple[str, int]:
    """A search's query text and ``top_k`` (1..1000), validated."""
    return check_text(query, settings, what="query"), check_top_k(top_k)

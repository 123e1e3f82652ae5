"""The full-text leg of a search: BM25 with per-user document frequencies (pure, no I/O)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Integer,
    Text,
    and_,
    bindparam,
    case,
    extract,
    false,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY

from memory_pg.config import RankingSettings
from memory_pg.scoring import (
    BM25_AVG_LENGTH,
    BM25_B,
    BM25_K1,
)
from memory_pg.sql.core import ENGLISH, SIMPLE
from memory_pg.tables import memories

m = memories


#: Document frequencies come from the user's most recent memories, this many: exact
#: for a user with fewer, a sample (the recent vocabulary) for a larger one, at a
#: bounded cost either way (the frequency of a common word is never counted over
#: the whole GIN posting list). 1000 rather than 500: at 500, three of LoCoMo's five
#: conversations (630-680 turns) fell under the ``PULL_MAX_SHARE`` rule below and
#: Recall@5 dropped 67.6% -> 65.4%; at 100k memories 1000 costs ~0.5 ms more.
IDF_SAMPLE = 1000
#: For a user with more memories than the sample, a word in more than this share of
#: the sample no longer pulls full-text candidates (at 100k memories, 2% is about
#: 2000 rows to score); it still scores. A query of only such words keeps its rarest.
PULL_MAX_SHARE = 0.02
#: For a user with fewer memories than the sample (but at least ``SMALL_PULL_MIN``),
#: a word in more than this share of them no longer pulls candidates either (it still
#: scores): a speaker's name in half of a conversation's turns had every turn that
#: names them scored (680 of 680 in a LoCoMo conversation, ~5.7 ms of a 9.8 ms search).
SMALL_PULL_MAX_SHARE = 0.25
SMALL_PULL_MIN = 100
#: For a user with more memories than the sample, the full-text leg scores at most
#: this many matching memories, the most recent. Scoring every match of a word found
#: in a few percent of a million memories cost ~275 ms; an older match beyond the
#: bound is left to the vector leg (recency decay ranks it lower anyway). Measured at
#: 100k (benchmarks/lexical_bound.py): queries of only common words p95 165 -> 97 ms,
#: 0.963 of the unbounded top 10 kept when all rows share one time (the worst case).
#: Alone it bounds the rows scored, not the rows read: the planner reads every
#: match of the pulling words through the GIN index and sorts them by time. At 1M a
#: pulling word in 3% of a user's memories meant ~30k rows read, 150-255 ms in a
#: hand-run EXPLAIN ANALYZE of the slowest queries of benchmarks/server_settings.py
#: (see benchmarks/README.md). ``PULL_WINDOW`` bounds the rows read.
LEXICAL_SCAN_MAX = 4000
#: Bound the rows read as well: the memories that hold every word, and those the
#: pulling words bring, are read first among the user's memories since a time chosen
#: so that, at the rate the sample holds those words, the span holds this many
#: bounds' worth of their matches (``PULL_WINDOW * LEXICAL_SCAN_MAX`` over the
#: words' share of the sample, at the rate the sample was written). The GIN bitmap
#: is intersected with the ``(user_id, created_at)`` index's before a row is read.
#: When the window holds fewer than the bound (the words were rarer, or memories
#: fewer, than the sample says), the older matches are read too: what the leg finds
#: is the same as without a window, only what it reads changes. 1.5, not 1: the
#: sample's count of a word is itself uncertain (30 in 1000 by about a fifth), and a
#: short window costs a second read. No window when the sample has no span (every
#: memory written at one time) or none of the words, or when the window would span
#: more than ``WINDOW_MAX_SHARE`` of the time since the user's first memory (a rare
#: word's: the ``created_at`` index would be read for most of the user's rows, which
#: cost more than reading the word's few matches). At 1M (benchmarks/lexical_bound.py,
#: queries whose words each pull 0.4-2% of the rows): p50 239 -> 52 ms, the same top
#: 10. Reading the window's part of the ``created_at`` index costs ~0.2 us a row
#: (its bitmap index scan over 230k rows took 52 ms): a narrower window is cheaper,
#: a shorter one reads twice.
#: Only in the statement of a search for a user the store has seen holding at least
#: the sample (``window=True``, see :class:`memory_pg.plans.read.HeavyUsers`): the
#: window's CTEs and branches make a larger statement, and a light user, who never
#: reads them, paid for it when every search carried them: at 10k memories over
#: 1000 users (benchmarks/search_overhead.py) 6.9 against 5.4 ms p50. 0 turns the
#: window off for every search (the statement of before it).
PULL_WINDOW = 1.5
WINDOW_MAX_SHARE = 0.25
#: For a user with more memories than the sample: when at least this many of their
#: memories hold every word of the query, those memories are the leg's candidates
#: (with the vector leg's own candidates that hold a query word), and the words do
#: not also pull the memories that hold only some of them. A memory that lacks a
#: word loses that word's whole IDF from its BM25 score; on template text, where
#: every word is in thousands of a heavy user's memories, pulling them all was most
#: of a search's time. Fewer full matches than this: the words pull as above.
FULL_MATCHES_ENOUGH = 5


def _joined(terms: Any, op: str, *where: ColumnElement[bool]) -> Any:
    """The query's words (those meeting ``where``) as one tsquery, each in parentheses,
    joined by ``op``; no word: the empty tsquery, which matches nothing."""
    word = literal("(").concat(func.querytree(terms.c.q_any)).concat(literal(")"))
    return (
        select(func.coalesce(func.string_agg(word, literal(op)), literal("")).cast(TSQUERY))
        .where(*where)
        .scalar_subquery()
    )


def _newest(where: list[ColumnElement[bool]], window: tuple[Any, Any] | None, name: str) -> Any:
    """The ``LEXICAL_SCAN_MAX`` most recent memories meeting ``where`` (``id`` and
    ``search_tsv``), read first from those written in ``window`` (since, until) when
    its start is not NULL, and from the older ones only when those are too few.

    Each read is its own branch; a branch whose one-time filter is false reads
    nothing. With a window the planner intersects the GIN bitmap with the
    ``(user_id, created_at)`` index's. The window's end is the newest sampled
    memory's time, which no memory under ``where`` passes: it is there for the
    planner, which estimates a range between two values it does not know as narrow
    (0.5% of the rows) and a bare lower bound as a third of them, and at a third it
    read the GIN matches alone. The window's matches are the CTE named ``name``.
    """
    if window is None:
        return (
            select(m.c.id, m.c.search_tsv)
            .where(*where)
            .order_by(m.c.created_at.desc())
            .limit(LEXICAL_SCAN_MAX)
        )
    since, until = window
    recent = (
        select(m.c.id, m.c.search_tsv, m.c.created_at)
        .where(*where, since.is_not(None), m.c.created_at >= since, m.c.created_at <= until)
        .cte(name)
        .prefix_with("MATERIALIZED")
    )
    too_few = select(func.count()).select_from(recent).scalar_subquery() < LEXICAL_SCAN_MAX
    older = select(m.c.id, m.c.search_tsv, m.c.created_at).where(
        *where,
        or_(since.is_(None), too_few),
        or_(since.is_(None), m.c.created_at < since),
    )
    rows = union_all(select(recent.c.id, recent.c.search_tsv, recent.c.created_at), older)
    both = rows.subquery()
    return (
        select(both.c.id, both.c.search_tsv)
        .order_by(both.c.created_at.desc())
        .limit(LEXICAL_SCAN_MAX)
    )


def lexical_leg(
    conds: list[ColumnElement[bool]],
    english: bool,
    cjk: bool,
    rs: RankingSettings,
    near_ids: Any | None = None,
    *,
    window: bool = False,
) -> tuple[Any, ColumnElement[bool] | None]:
    """The full-text candidates, ranked by BM25 with per-user document frequencies,
    and whether the user holds at least the sample (None: the query has no word).

    PostgreSQL's ``ts_rank`` has no inverse document frequency: a speaker's name in
    half the memories weighs as much as a rare word. Here each query word's
    document frequency is counted in the user's ``IDF_SAMPLE`` most recent current
    memories (all of them for most users), so a rare word dominates a common one.
    Counting over the GIN index instead cost a user with 100k memories about 3 ms
    per common word (the whole posting list is read before any LIMIT); the sample
    costs one short index scan for all words. A word found only in a memory's
    context (weight ``C``) counts
    ``rs.lexical_context_weight`` of a word in its own text. Scores are scaled by
    the best candidate's, so ``lexical`` is 1.0 for the best full-text match.

    ``conds`` are the search's filters, the one naming the user first.
    ``english`` and ``cjk`` say which word lists the query has; the lists themselves
    are the parameters ``lex_{en,cjk}_{any,own}`` (from ``term_queries``).

    ``near_ids`` (a select of one ``id`` column) are the vector leg's candidates. For
    a user larger than the sample, whose matches are bounded (``LEXICAL_SCAN_MAX``,
    ``FULL_MATCHES_ENOUGH``), they are scored too, by whichever query words they hold.

    ``window``: bound what a larger user's matches read by a time window
    (:data:`PULL_WINDOW`); what the leg finds is the same either way.
    """
    window = window and PULL_WINDOW > 0
    words = []
    for config, present, name in ((ENGLISH, english, "en"), (SIMPLE, cjk, "cjk")):
        if not present:
            continue
        toks = (
            func.unnest(
                bindparam(f"lex_{name}_any", type_=ARRAY(Text)),
                bindparam(f"lex_{name}_own", type_=ARRAY(Text)),
            )
            .table_valued("any_q", "own_q")
            .render_derived(name=f"tok_{name}")
        )
        words.append(
            select(
                func.to_tsquery(config, toks.c.any_q).label("q_any"),
                func.to_tsquery(config, toks.c.own_q).label("q_own"),
            ).select_from(toks)
        )
    if not words:
        # No word to look for: an empty leg with the columns the fusion joins on.
        empty = select(
            m.c.id,
            literal(0.0, Float).label("lex_score"),
            literal(0, Integer).label("rank"),
        ).where(false())
        return empty.cte("lex"), None
    raw = (words[0] if len(words) == 1 else union_all(*words)).subquery("term_raw")
    # Stop words become empty queries; two words with one stem count once.
    nth = func.row_number().over(partition_by=func.querytree(raw.c.q_any)).label("nth")
    numbered = (
        select(raw.c.q_any, raw.c.q_own, nth)
        .where(func.numnode(raw.c.q_any) > 0)
        .subquery("numbered")
    )
    terms0 = select(numbered.c.q_any, numbered.c.q_own).where(numbered.c.nth == 1).cte("terms0")
    # The user's most recent memories under the same filters: the IDF's collection.
    # (With the window, their times too: it is sized from them.)
    timed = [m.c.created_at] if window else []
    recent = (
        select(m.c.id, m.c.search_tsv, *timed)
        .where(*conds)
        .order_by(m.c.created_at.desc())
        .limit(IDF_SAMPLE)
        .cte("recent")
        .prefix_with("MATERIALIZED")
    )
    # Counted once: every use below reads the one row.
    sampled = (
        select(
            func.count().label("n"),
            *(
                [
                    func.max(recent.c.created_at).label("newest"),
                    func.min(recent.c.created_at).label("oldest"),
                ]
                if timed
                else []
            ),
        )
        .select_from(recent)
        .cte("sampled")
        .prefix_with("MATERIALIZED")
    )
    n_recent = select(sampled.c.n).scalar_subquery()
    df = (
        select(func.count())
        .select_from(recent)
        .where(recent.c.search_tsv.op("@@")(terms0.c.q_own))
        .correlate(terms0)
        .scalar_subquery()
    )
    # Materialised: each frequency is counted once, not once per use of ``df``.
    counted = (
        select(terms0.c.q_any, terms0.c.q_own, df.label("df"), n_recent.label("n"))
        .cte("counted")
        .prefix_with("MATERIALIZED")
    )
    terms = select(
        counted.c.q_any,
        counted.c.q_own,
        counted.c.df,
        counted.c.n,
        # scoring.idf, in SQL.
        func.ln(1.0 + (counted.c.n - counted.c.df + 0.5) / (counted.c.df + 0.5)).label("idf"),
    ).cte("terms")
    # Words that pull candidates: for a user larger than the sample, all but the ones
    # common for this user, unless every word is that common.
    rarest = select(func.min(terms.c.df)).scalar_subquery()
    pulls = or_(
        # A user under the sample: every word pulls while they hold few
        # memories, then the words in at most a quarter of them.
        and_(
            terms.c.n < IDF_SAMPLE,
            or_(
                terms.c.n < SMALL_PULL_MIN,
                terms.c.df <= terms.c.n * SMALL_PULL_MAX_SHARE,
            ),
        ),
        terms.c.df <= terms.c.n * PULL_MAX_SHARE,
        terms.c.df == rarest,
    )
    pulling = _joined(terms, " | ", pulls)
    # A user with fewer memories than the sample has them all in ``recent``: they are
    # scored there, and the GIN index is never read (its posting lists span every
    # user: a common word's grows with the table, not with this user). A larger user's
    # candidates come from the GIN index. One branch runs; the other's one-time
    # filter is false before it reads a row.
    whole = n_recent < IDF_SAMPLE
    every_word = _joined(terms, " & ")
    full_window = pull_window = None
    if window:
        # Each list's window (PULL_WINDOW): its start, NULL for none. How often the
        # sample holds the list's words (the memories holding every word, and the sum
        # of the pulling words' frequencies), and the user's first memory (one step
        # into the created_at index).
        in_sample = (
            select(
                select(func.count())
                .select_from(recent)
                .where(recent.c.search_tsv.op("@@")(every_word))
                .scalar_subquery()
                .label("full"),
                select(func.sum(terms.c.df)).where(pulls).scalar_subquery().label("pull"),
                # The user's alone (``conds[0]``): with the search's other filters the
                # index walk could pass most of a heavy user's rows before one met them.
                select(func.min(m.c.created_at)).where(conds[0]).scalar_subquery().label("first"),
                # The sampled memories written after the oldest sampled time: the
                # rate is these over the span. Memories written in one transaction
                # share its time: counting the oldest time's too (all 1000 over a
                # span that starts at the last of them) overstated the rate, by two
                # for memories added 500 to a call, and the window held too few.
                select(func.count())
                .select_from(recent)
                .where(recent.c.created_at > select(sampled.c.oldest).scalar_subquery())
                .scalar_subquery()
                .label("after_oldest"),
            )
            # No row for a user under the sample: none of this is worked out for them.
            .where(~whole)
            .cte("in_sample")
            .prefix_with("MATERIALIZED")
        )
        newest = extract("epoch", sampled.c.newest).cast(Float)
        span = newest - extract("epoch", sampled.c.oldest).cast(Float)
        matches = literal(PULL_WINDOW * LEXICAL_SCAN_MAX, Float)
        # The earliest start a window may have.
        first = extract("epoch", in_sample.c.first).cast(Float)
        earliest = newest - (newest - first) * literal(WINDOW_MAX_SHARE, Float)

        # Seconds per sampled memory.
        pace = span / func.nullif(in_sample.c.after_oldest, 0).cast(Float)

        def since(count: Any) -> Any:
            # The time in which the user writes ``matches`` memories holding the
            # words, at the sample's rates of both.
            start = newest - pace * sampled.c.n.cast(Float) * matches / func.nullif(count, 0).cast(
                Float
            )
            return case((and_(span > 0, count > 0, start > earliest), func.to_timestamp(start)))

        windows = (
            select(
                since(in_sample.c.full).label("full"),
                since(in_sample.c.pull).label("pull"),
                sampled.c.newest,
            )
            # One row each.
            .select_from(in_sample.join(sampled, true()))
            .cte("windows")
            .prefix_with("MATERIALIZED")
        )
        until = select(windows.c.newest).scalar_subquery()
        full_window = (select(windows.c.full).scalar_subquery(), until)
        pull_window = (select(windows.c.pull).scalar_subquery(), until)
    # A larger user's memories that hold every word (GIN intersects the words' posting
    # lists, rarest first, before it reads a row), the most recent first.
    full = (
        _newest([*conds, ~whole, m.c.search_tsv.op("@@")(every_word)], full_window, "full_recent")
        .cte("full_matches")
        .prefix_with("MATERIALIZED")
    )
    enough = select(func.count()).select_from(full).scalar_subquery() >= FULL_MATCHES_ENOUGH
    # Too few of those: the pulling words bring the memories that hold some words.
    pulled = _newest(
        [*conds, ~whole, ~enough, m.c.search_tsv.op("@@")(pulling)], pull_window, "pulled_recent"
    ).subquery("pulled")
    sources: list[tuple[Any, list[ColumnElement[bool]]]] = [
        (recent, [whole, recent.c.search_tsv.op("@@")(pulling)]),
        (pulled, [pulled.c.search_tsv.op("@@")(pulling)]),
        (full, []),
    ]
    if near_ids is not None:
        # The vector leg's candidates get their full-text score too, whichever words
        # they hold: the fusion ranks them by both legs.
        near = (
            select(m.c.id, m.c.search_tsv)
            .where(
                *conds,
                ~whole,
                m.c.id.in_(near_ids),
                m.c.search_tsv.op("@@")(_joined(terms, " | ")),
            )
            .subquery("near")
        )
        sources.append((near, []))
    scored = []
    for source, where in sources:
        tsv = source.c.search_tsv
        own_len = func.length(func.ts_filter(tsv, literal_column("'{d}'::\"char\"[]")))
        per_term = case(
            (tsv.op("@@")(terms.c.q_own), 1.0),
            (tsv.op("@@")(terms.c.q_any), literal(float(rs.lexical_context_weight))),
            else_=0.0,
        )
        matched = select(func.sum(terms.c.idf * per_term)).scalar_subquery()
        # scoring.bm25, in SQL.
        length_norm = (BM25_K1 + 1.0) / (
            1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * own_len / BM25_AVG_LENGTH)
        )
        scored.append(select(source.c.id, (matched * length_norm).label("bm25")).where(*where))
    # A memory found by two sources has one score.
    raw_scored = union_all(*scored).subquery("lex_raw")
    both = (
        select(raw_scored.c.id, func.max(raw_scored.c.bm25).label("bm25"))
        .group_by(raw_scored.c.id)
        .subquery("lex_scored")
    )
    lex_inner = (
        select(both.c.id, both.c.bm25)
        .order_by(both.c.bm25.desc(), both.c.id)
        .limit(rs.candidates)
        .subquery("lex_inner")
    )
    best = func.max(lex_inner.c.bm25).over()
    lex = select(
        lex_inner.c.id,
        (lex_inner.c.bm25 / func.nullif(best, literal(0.0, Float), type_=Float)).label("lex_score"),
        func.row_number().over(order_by=(lex_inner.c.bm25.desc(), lex_inner.c.id)).label("rank"),
    ).cte("lex")
    return lex, ~whole

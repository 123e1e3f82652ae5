"""A heavy user's full-text leg scores a bounded number of matches, the most recent,
reading the recent ones first (a time window)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import event

from memory_pg.sql import lexical, search
from memory_pg.sql.setup import set_tenant
from memory_pg.text.query import analyse

#: The window as the benchmarks measured it (the shipped ``PULL_WINDOW``).
WINDOW = 1.5

QUERIES = ["coffee", "coffee tea", "Berlin bakery", "tea with Anna", "piano lesson friday"]


def _ranked(store: Any, query: str) -> list[tuple[str, float, float]]:
    hits = store.search(query, top_k=10, track_access=False)
    return [(h["id"], h["score"], round(h["lexical"], 6)) for h in hits]


def _full_text_only(store: Any, query: str, top_k: int) -> dict[str, float]:
    """The full-text leg alone (``full_text_only``): each hit's text and ``lexical``
    score, in rank order."""
    hits = store.search(query, top_k=top_k, full_text_only=True, track_access=False)
    return {h["text"]: h["lexical"] for h in hits}


def _same_ranking(a: list[tuple[str, float, float]], b: list[tuple[str, float, float]]) -> bool:
    """Same memories in the same order with the same full-text scores. The final score
    holds recency, which moves with the clock between the two searches (by about 1e-6
    here), so it is compared to 1e-4."""
    return [(i, lex) for i, _, lex in a] == [(i, lex) for i, _, lex in b] and all(
        x[1] == pytest.approx(y[1], abs=1e-4) for x, y in zip(a, b, strict=True)
    )


def test_the_bound_keeps_the_ranking_of_the_unbounded_leg(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sample of 5 puts this user among the heavy ones, whose candidates come from
    # the GIN index: the branch the bound applies to.
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "PULL_MAX_SHARE", 0.25)
    store.add_memories(
        [f"coffee with Anna, visit {i}" for i in range(6)]
        + [
            "a tea ceremony in Kyoto",
            "moved to Berlin to open a bakery",
            "piano lesson every friday",
            "tea with Anna after the piano lesson",
            "Berlin has the best coffee",
        ]
    )
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 10**9)
    unbounded = {q: _ranked(store, q) for q in QUERIES}
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 100)
    bounded = {q: _ranked(store, q) for q in QUERIES}
    assert all(_same_ranking(bounded[q], unbounded[q]) for q in QUERIES), (bounded, unbounded)
    assert all(unbounded[q] for q in QUERIES)


def test_beyond_the_bound_only_the_most_recent_matches_score(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 3)
    # One call each: each memory is newer than the one before.
    for i in range(8):
        store.add_memory(f"coffee with Anna, visit {i}")
    by_text = _full_text_only(store, "coffee", 8)
    assert sorted(by_text) == [f"coffee with Anna, visit {i}" for i in (5, 6, 7)]
    assert all(score > 0 for score in by_text.values())


FULL = [f"coffee with Anna at the bakery, visit {i}" for i in range(6)]
PARTIAL = [f"coffee at the station, visit {i}" for i in range(4)] + [
    "Anna bakes bread on Sundays",
    "the bakery on the corner closed",
]


def test_when_enough_memories_hold_every_word_they_alone_are_pulled(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A heavy user (more memories than the sample) whose every query word pulls.
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "PULL_MAX_SHARE", 1.0)
    store.add_memories(FULL + PARTIAL)
    query = "coffee with Anna at the bakery"

    # Six memories hold every word, more than FULL_MATCHES_ENOUGH: they are the leg's.
    assert len(FULL) >= lexical.FULL_MATCHES_ENOUGH
    tiered = _full_text_only(store, query, 20)
    assert sorted(tiered) == sorted(FULL)

    # Asking for more full matches than there are: the words pull the partial ones
    # too, and the full matches still rank first, with the same scores.
    monkeypatch.setattr(lexical, "FULL_MATCHES_ENOUGH", len(FULL) + 1)
    pulled = _full_text_only(store, query, 20)
    assert set(pulled) == set(FULL + PARTIAL)
    assert list(pulled)[: len(FULL)] == list(tiered)
    assert all(pulled[t] == pytest.approx(tiered[t]) for t in FULL)
    assert all(0 < pulled[t] < min(tiered.values()) for t in PARTIAL)


def test_another_users_full_matches_neither_count_nor_show(
    store: Any, make_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "PULL_MAX_SHARE", 1.0)
    bob = make_store(user_id="bob")
    bob.add_memories(FULL + [f"bob's note {i}" for i in range(4)])
    # Alice holds two full matches: too few by her own memories, so her words pull
    # her partial matches too; Bob's six full matches do not count for her.
    store.add_memories(FULL[:2] + PARTIAL)
    assert 2 < lexical.FULL_MATCHES_ENOUGH <= len(FULL)
    alice_sees = _full_text_only(store, "coffee with Anna at the bakery", 20)
    assert set(alice_sees) == set(FULL[:2] + PARTIAL)
    hits = store.search("coffee with Anna at the bakery", top_k=20, track_access=False)
    assert {h["user_id"] for h in hits} == {"alice"}
    assert set(_full_text_only(bob, "coffee with Anna at the bakery", 20)) == set(FULL)


def test_a_heavy_users_vector_candidates_get_their_full_text_score(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A heavy user: "Caroline" is in most of the sampled memories, so it pulls no
    # candidates; "painting" does.
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "PULL_MAX_SHARE", 0.25)
    store.add_memories(
        [f"Caroline went hiking on day {i}" for i in range(6)]
        + ["Caroline started painting sunsets", "Melanie: the kids love the beach"]
    )
    query = "When did Caroline start painting"
    alone = _full_text_only(store, query, 8)
    assert list(alone) == ["Caroline started painting sunsets"]

    # In the hybrid search the hiking memories come from the vector leg, and the
    # full-text leg scores them by the word they hold, below the painting one.
    hits = store.search(query, top_k=8, track_access=False)
    lexical_of = {h["text"]: h["lexical"] or 0.0 for h in hits}
    assert hits[0]["text"] == "Caroline started painting sunsets"
    assert lexical_of["Caroline started painting sunsets"] == 1.0
    hiking = [t for t in lexical_of if "hiking" in t]
    assert hiking and all(0 < lexical_of[t] < 1.0 for t in hiking)
    assert lexical_of.get("Melanie: the kids love the beach", 0.0) == 0.0


def test_a_word_in_most_of_a_small_users_memories_scores_but_pulls_no_match(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user of 8 memories counts as "small but not tiny" here: every memory is in
    # the sample, and a word in more than a quarter of them pulls no candidates.
    monkeypatch.setattr(lexical, "SMALL_PULL_MIN", 4)
    store.add_memories(
        [f"Caroline: I went hiking on day {i}" for i in range(6)]
        + ["Caroline: I started painting sunsets", "Melanie: the kids love the beach"]
    )
    hits = store.search("When did Caroline start painting", top_k=8, track_access=False)
    lexical_of = {h["text"]: h["lexical"] or 0.0 for h in hits}
    # The memory with the rare word ranks first and its score counts "Caroline" too.
    assert hits[0]["text"] == "Caroline: I started painting sunsets"
    assert lexical_of["Caroline: I started painting sunsets"] == 1.0
    # The name alone (in 7 of 8) pulled nothing: those turns are found by the vector
    # leg only, not scored by the full-text one.
    hiking = [t for t in lexical_of if "hiking" in t]
    assert hiking and all(lexical_of[t] == 0.0 for t in hiking)

    # A query of only such words still finds its matches (the rarest word pulls).
    by_name = store.search("Caroline", top_k=8, track_access=False)
    assert sum(1 for h in by_name if (h["lexical"] or 0) > 0) == 7


def _imported(store: Any, texts: list[str], created_at: datetime) -> None:
    """``texts`` imported as memories written at ``created_at`` (an import keeps it)."""
    lines = [json.dumps({"text": t, "created_at": created_at.isoformat()}) for t in texts]
    assert store.import_user_memory(io.StringIO("\n".join(lines) + "\n")) == len(texts)


@pytest.fixture
def windowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window on (``WINDOW``), a sample of 5 and a bound of 3: a user of a few
    memories is a heavy one, whose matches the window and the bound apply to."""
    monkeypatch.setattr(lexical, "PULL_WINDOW", WINDOW)
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 3)


def _pull_reads(store: Any, query: str) -> tuple[int, bool]:
    """What the pull read for ``query`` (``EXPLAIN ANALYZE`` of the search statement):
    the memories its time window returned (0: no window), and whether it also read
    the older matches."""
    stmt, values = search.search_statement(
        store.user_id, analyse(query), None, top_k=10, filters=search.SearchFilters(), window=True
    )
    with store.engine.begin() as conn:
        conn.execute(set_tenant(store.user_id))
        compiled = stmt.compile(dialect=conn.dialect)
        plan = conn.exec_driver_sql(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled), compiled.construct_params(values)
        ).scalar_one()

    def walk(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node] + [n for child in node.get("Plans", []) for n in walk(child)]

    nodes = walk(plan[0]["Plan"])
    (window,) = [n for n in nodes if n.get("Subplan Name") == "CTE pulled_recent"]
    (pulled,) = [n for n in nodes if n.get("Alias") == "pulled"]
    # Under ``pulled`` the window is a CTE scan; a scan of the table is the older read.
    older = [n for n in walk(pulled) if n.get("Relation Name") == "memory_pg_memories"]
    assert len(older) == 1, older
    return int(window["Actual Rows"]), older[0]["Actual Loops"] > 0


@contextlib.contextmanager
def sent_by(store: Any) -> Iterator[list[str]]:
    """The statements the store sends while the context is open."""
    sent: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


def _windowed_full_text_only(store: Any, query: str) -> dict[str, float]:
    """:func:`_full_text_only` as the store runs it for a user it knows to be heavy:
    the first search finds that out, the second is the one with the window."""
    _full_text_only(store, query, 10)
    with sent_by(store) as sent:
        found = _full_text_only(store, query, 10)
    assert any("pulled_recent" in s for s in sent), "the search ran without the window"
    return found


def _heavy_coffee_drinker(store: Any, recent: list[str]) -> list[str]:
    """A user who wrote about coffee at the old station a month ago, then ``recent``
    one memory at a time (each newer than the one before); the old texts."""
    old = [f"coffee at the old station, visit {i}" for i in range(3)]
    for i, text in enumerate(old):  # a day apart: "the most recent" is one set
        _imported(store, [text], datetime.now(timezone.utc) - timedelta(days=30 - i))
    for text in recent:
        store.add_memory(text)
    return old


def test_a_window_with_enough_recent_matches_reads_no_older_one(
    store: Any, windowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A heavy user (more memories than the sample of 5), a bound of 3: four of the
    # five sampled memories hold "coffee", so the window spans about the sample.
    recent = [f"coffee with Anna, day {i}" for i in range(4)]
    _heavy_coffee_drinker(store, ["planted tomatoes", recent[0], recent[1], "watered them"])
    for text in recent[2:]:
        store.add_memory(text)

    found = _windowed_full_text_only(store, "coffee")
    assert set(found) == set(recent[1:])  # the three most recent matches
    assert _pull_reads(store, "coffee") == (4, False)  # the month-old ones were not read
    # The same as reading every match (the statement before the window).
    monkeypatch.setattr(lexical, "PULL_WINDOW", 0.0)
    assert _full_text_only(store, "coffee", 10) == found


def test_a_window_with_too_few_matches_also_reads_the_older_ones(
    store: Any, windowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One of the five sampled memories holds "coffee": the window is a few seconds
    # long and holds one match, fewer than the bound of 3, so the older matches are
    # read too, and the leg finds what it found without a window.
    old = _heavy_coffee_drinker(
        store, [f"planted tomatoes, row {i}" for i in range(4)] + ["coffee with Anna"]
    )
    found = _windowed_full_text_only(store, "coffee")
    assert set(found) == {"coffee with Anna", *old[1:]}
    assert _pull_reads(store, "coffee") == (1, True)
    monkeypatch.setattr(lexical, "PULL_WINDOW", 0.0)
    assert _full_text_only(store, "coffee", 10) == found


def test_memories_written_at_one_time_have_no_window_to_narrow(store: Any, windowed: None) -> None:
    # The sample has no time span (one import, one time): every match is read, as
    # before the window, however common the word is.
    texts = [f"coffee at the old station, visit {i}" for i in range(3)] + [
        f"planted tomatoes in the garden, row {i}" for i in range(5)
    ]
    _imported(store, texts, datetime.now(timezone.utc) - timedelta(days=30))
    assert set(_full_text_only(store, "coffee", 10)) == set(texts[:3])
    assert _pull_reads(store, "coffee") == (0, True)


def test_a_window_over_most_of_the_users_time_is_not_taken(store: Any, windowed: None) -> None:
    # One of the five sampled memories holds "coffee", and the user's first memory
    # is a few writes older than the sample: a window holding 1.5 bounds' worth of
    # "coffee" would reach back past it, so the matches are read as before.
    texts = [f"coffee at the old station, visit {i}" for i in range(3)]
    texts += [f"planted tomatoes, row {i}" for i in range(4)] + ["coffee with Anna"]
    for text in texts:
        store.add_memory(text)
    found = _full_text_only(store, "coffee", 10)
    assert set(found) == {"coffee with Anna", *texts[1:3]}
    assert _pull_reads(store, "coffee") == (0, True)


def test_only_a_user_seen_holding_more_than_the_sample_gets_the_window(
    make_store: Callable[..., Any], windowed: None
) -> None:
    shared = make_store()  # one store for both users, each call naming its user
    for i in range(6):  # heavy: more memories than the sample of 5
        shared.add_memory(f"coffee with Anna, day {i}", user_id="heavy")
    for text in ("coffee with Ben", "planted tomatoes"):
        shared.add_memory(text, user_id="light")

    def search(user: str) -> tuple[bool, list[str]]:
        """Whether the search statement sent had the window, and the texts found."""
        with sent_by(shared) as sent:
            hits = shared.search("coffee", user_id=user, top_k=10, track_access=False)
        assert not any("user_heavy" in h for h in hits)  # a hint, not a result's field
        return any("pulled_recent" in s for s in sent), [h["text"] for h in hits]

    # A heavy user's first search in this store runs without the window (nothing is
    # known of them yet), the next ones with it; a light user's never do.
    first = search("heavy")
    assert first[0] is False and len(first[1]) == 6
    assert search("heavy") == (True, first[1])
    for _ in range(2):
        window, texts = search("light")
        assert window is False and texts[0] == "coffee with Ben"
        assert not any("Anna" in t for t in texts)  # the other user's stay theirs
    # A heavy user who erases their memories is light again from the next search on.
    shared.clear_user_memory("heavy")
    shared.add_memory("coffee at home", user_id="heavy")
    assert search("heavy") == (True, ["coffee at home"])  # the search that finds out
    assert search("heavy") == (False, ["coffee at home"])

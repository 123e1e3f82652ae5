"""Bad input: each case is a typed error that wrote nothing, or is stored and reads back intact.

One database and one store serve the whole corpus (a fresh clone per case would
cost more than the cases); each refused case compares the row counts of every
user-data table before and after, so a half-written call would show.
"""

from __future__ import annotations

import io
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any

import numpy as np
import psycopg
import pytest

from memory_pg._validate import check_topic
from memory_pg.entities import Entity
from memory_pg.errors import (
    EmptyText,
    InvalidArgument,
    InvalidInput,
    InvalidMetadata,
    InvalidText,
    InvalidUserId,
    MemoryPgError,
    TextTooLong,
    UnknownMemoryType,
)
from memory_pg.store import MemoryInput, MemoryStore
from tests.integration._security_support import extra_database, row_counts

UTC = timezone.utc
NOW = datetime(2026, 1, 1, tzinfo=UTC)


class _NoOffset(tzinfo):
    """A time zone that does not know its offset."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


class _BadEmbedder:
    """The real model, spoiled by ``spoil`` on the way out."""

    def __init__(self, inner: Any, spoil: Callable[[np.ndarray], np.ndarray]) -> None:
        self.inner = inner
        self.spoil = spoil
        self.model_name = inner.model_name
        self.dimension = inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.spoil(np.asarray(self.inner.embed_documents(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.inner.embed_query(text))


def _zero_row(vectors: np.ndarray, index: int, value: float = 0.0) -> np.ndarray:
    out = vectors.copy()
    out[index, :] = value
    return out


def _poison_row(vectors: np.ndarray, value: float, index: int = -1) -> np.ndarray:
    out = vectors.copy()
    out[index, 0] = value
    return out


@pytest.fixture(scope="module")
def admin(pg_server: Any) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(
        host=pg_server.host,
        port=pg_server.port,
        user=pg_server.user,
        password=pg_server.password,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        yield conn


@pytest.fixture(scope="module")
def corpus_db(admin: psycopg.Connection[Any], pg_template: Any) -> Iterator[str]:
    with extra_database(admin, pg_template.template_dbname) as name:
        yield name


@pytest.fixture(scope="module")
def owner(pg_server: Any, corpus_db: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(
        host=pg_server.host,
        port=pg_server.port,
        user=pg_server.user,
        password=pg_server.password,
        dbname=corpus_db,
        autocommit=True,
    ) as conn:
        yield conn


@pytest.fixture(scope="module")
def any_user_store(pg_server: Any, corpus_db: str, embedder: Any) -> Iterator[MemoryStore]:
    """A store bound to no user, on the same database: ``corpus_store`` refuses others."""
    with MemoryStore(pg_server.url(corpus_db), embedder=embedder) as store:
        yield store


@pytest.fixture(scope="module")
def corpus_store(pg_server: Any, corpus_db: str, embedder: Any) -> Iterator[MemoryStore]:
    with MemoryStore(pg_server.url(corpus_db), user_id="alice", embedder=embedder) as store:
        # Something to search, get and delete around, so refusals are not vacuous.
        store.add_memory("the team chose PostgreSQL", "key_decision", {"source": "seed"})
        yield store


def _add(**kwargs: Any) -> Callable[[MemoryStore], Any]:
    text = kwargs.pop("text", "a perfectly fine memory")
    return lambda s: s.add_memory(text, **kwargs)


def _with_entity(entity: Entity) -> Callable[[MemoryStore], Any]:
    return lambda s: s.add_memories([MemoryInput("Ann came by", entities=[entity])])


def _batch(bad: Any, at: int = 49, size: int = 60) -> Callable[[MemoryStore], Any]:
    def call(s: MemoryStore) -> Any:
        items: list[Any] = [
            MemoryInput(f"batch item {i} {uuid.uuid4()}", "todo") for i in range(size)
        ]
        items[at] = bad
        return s.add_memories(items)

    return call


R = "refused"
_SQLISH = [
    "'; DROP TABLE memory_pg_memories; --",
    '" OR 1=1 --',
    "$$; SELECT 1; $$ $tag$",
    "%s %(x)s {0} :name ? $1",
    "back\\slash \\x00 \\\\",
    "/* comment */ -- line",
    "E'\\n' U&'\\0041'",
    ") UNION SELECT usename, passwd FROM pg_shadow --",
    "@> ->> #> ? ?| ?& || ::jsonb",
    "null",
    "'{}'::jsonb",
    "\\'; TRUNCATE memory_pg_history; --",
]

# (case id, call, expected error class)
REFUSED: list[tuple[str, Callable[[MemoryStore], Any], type[MemoryPgError]]] = [
    # -- text
    ("text-empty", _add(text=""), EmptyText),
    ("text-space", _add(text=" "), EmptyText),
    ("text-whitespace-mix", _add(text="\n\t \r"), EmptyText),
    ("text-ideographic-space", _add(text="\u3000\u3000"), EmptyText),
    ("text-too-long", _add(text="x" * 8001), TextTooLong),
    ("text-huge", _add(text="数据库" * 200_000), TextTooLong),
    ("text-nul-inside", _add(text="a\x00b"), InvalidText),
    ("text-nul-only", _add(text="\x00"), InvalidText),
    ("text-lone-high-surrogate", _add(text="\ud800"), InvalidText),
    ("text-lone-low-surrogate", _add(text="a\udfffb"), InvalidText),
    ("text-none", _add(text=None), InvalidText),
    ("text-bytes", _add(text=b"bytes"), InvalidText),
    ("text-int", _add(text=42), InvalidText),
    ("text-list", _add(text=["a"]), InvalidText),
    # -- metadata
    ("meta-set", _add(metadata={"tags": {"a", "b"}}), InvalidMetadata),
    ("meta-bytes", _add(metadata={"blob": b"\x00\x01"}), InvalidMetadata),
    ("meta-object", _add(metadata={"obj": object()}), InvalidMetadata),
    ("meta-nan", _add(metadata={"score": float("nan")}), InvalidMetadata),
    ("meta-inf", _add(metadata={"score": float("inf")}), InvalidMetadata),
    ("meta-neg-inf", _add(metadata={"score": -math.inf}), InvalidMetadata),
    ("meta-nested-nan", _add(metadata={"a": [{"b": math.nan}]}), InvalidMetadata),
    ("meta-int-key", _add(metadata={1: "a"}), InvalidMetadata),
    ("meta-tuple-key", _add(metadata={(1, 2): "a"}), InvalidMetadata),
    ("meta-none-key", _add(metadata={None: "a"}), InvalidMetadata),
    ("meta-nul-key", _add(metadata={"a\x00": 1}), InvalidMetadata),
    ("meta-nul-value", _add(metadata={"a": "b\x00"}), InvalidMetadata),
    ("meta-surrogate-value", _add(metadata={"a": "\udc80"}), InvalidMetadata),
    ("meta-surrogate-key", _add(metadata={"\ud83d": 1}), InvalidMetadata),
    ("meta-giant", _add(metadata={"blob": "x" * 70_000}), InvalidMetadata),
    ("meta-many-keys", _add(metadata={f"k{i}": i for i in range(20_000)}), InvalidMetadata),
    ("meta-deep-21", _add(metadata=_nested(21)), InvalidMetadata),
    ("meta-deep-100k", _add(metadata=_nested(100_000)), InvalidMetadata),
    (
        "meta-deep-list",
        _add(metadata={"a": [[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]}),
        InvalidMetadata,
    ),
    ("meta-cyclic", _add(metadata=_cyclic()), InvalidMetadata),
    ("meta-list", _add(metadata=[1, 2]), InvalidMetadata),
    ("meta-str", _add(metadata='{"a": 1}'), InvalidMetadata),
    ("meta-int-5000-digits", _add(metadata={"n": 10**5000}), InvalidMetadata),
    ("meta-datetime", _add(metadata={"at": NOW}), InvalidMetadata),
    ("meta-date", _add(metadata={"on": date(2026, 1, 1)}), InvalidMetadata),
    ("meta-decimal", _add(metadata={"price": Decimal("1.10")}), InvalidMetadata),
    ("meta-uuid", _add(metadata={"ref": uuid.uuid4()}), InvalidMetadata),
    ("meta-complex", _add(metadata={"z": 1j}), InvalidMetadata),
    ("meta-numpy-float", _add(metadata={"x": np.float32(1.5)}), InvalidMetadata),
    # -- memory type
    ("type-unknown", _add(memory_type="unknown"), UnknownMemoryType),
    ("type-empty", _add(memory_type=""), UnknownMemoryType),
    ("type-upper", _add(memory_type="USER_PROFILE"), UnknownMemoryType),
    ("type-sql", _add(memory_type="todo'; DROP TABLE memory_pg_memories; --"), UnknownMemoryType),
    ("type-none", _add(memory_type=None), UnknownMemoryType),
    ("type-int", _add(memory_type=5), UnknownMemoryType),
    ("type-nul", _add(memory_type="todo\x00"), UnknownMemoryType),
    # -- importance
    ("importance-negative", _add(importance=-0.01), InvalidArgument),
    ("importance-above-one", _add(importance=1.01), InvalidArgument),
    ("importance-nan", _add(importance=math.nan), InvalidArgument),
    ("importance-inf", _add(importance=math.inf), InvalidArgument),
    ("importance-str", _add(importance="0.5"), InvalidArgument),
    ("importance-bool", _add(importance=True), InvalidArgument),
    ("importance-10-to-400", _add(importance=10**400), InvalidArgument),
    ("importance-10-to-5000", _add(importance=10**5000), InvalidArgument),
    ("importance-negative-subnormal", _add(importance=-1e-320), InvalidArgument),
    # -- topic
    ("topic-int", _add(topic=5), InvalidArgument),
    ("topic-too-long", _add(topic="t" * 201), InvalidArgument),
    ("topic-nul", _add(topic="db\x00"), InvalidArgument),
    ("topic-surrogate", _add(topic="db\ud800"), InvalidArgument),
    # -- times
    ("event-naive", _add(event_time=datetime(2026, 1, 1)), InvalidArgument),
    ("event-str", _add(event_time="2026-01-01T00:00:00Z"), InvalidArgument),
    ("event-epoch-int", _add(event_time=1_700_000_000), InvalidArgument),
    ("event-date", _add(event_time=date(2026, 1, 1)), InvalidArgument),
    (
        "event-no-offset-tz",
        _add(event_time=datetime(2026, 1, 1, tzinfo=_NoOffset())),
        InvalidArgument,
    ),
    ("event-year-1", _add(event_time=datetime.min.replace(tzinfo=UTC)), InvalidArgument),
    ("event-year-9999-end", _add(event_time=datetime.max.replace(tzinfo=UTC)), InvalidArgument),
    (
        "event-utc-year-10000",
        _add(event_time=datetime(9999, 12, 31, 20, tzinfo=timezone(timedelta(hours=-14)))),
        InvalidArgument,
    ),
    (
        "event-utc-year-0",
        _add(event_time=datetime(1, 1, 1, 5, tzinfo=timezone(timedelta(hours=14)))),
        InvalidArgument,
    ),
    ("expires-naive", _add(expires_at=datetime(2030, 1, 1)), InvalidArgument),
    ("expires-str", _add(expires_at="tomorrow"), InvalidArgument),
    ("expires-year-9999-end", _add(expires_at=datetime.max.replace(tzinfo=UTC)), InvalidArgument),
    ("expires-float", _add(expires_at=1.5), InvalidArgument),
    # -- user ids
    ("user-empty", _add(user_id=""), InvalidUserId),
    ("user-space", _add(user_id=" "), InvalidUserId),
    ("user-tab", _add(user_id="\t"), InvalidUserId),
    ("user-256", _add(user_id="u" * 256), InvalidUserId),
    ("user-10k", _add(user_id="u" * 10_000), InvalidUserId),
    ("user-nul", _add(user_id="bob\x00"), InvalidUserId),
    ("user-escape", _add(user_id="bob\x1b[2J"), InvalidUserId),
    ("user-del", _add(user_id="bob\x7f"), InvalidUserId),
    ("user-newline", _add(user_id="bob\nalice"), InvalidUserId),
    ("user-tab-inside", _add(user_id="bob\talice"), InvalidUserId),
    ("user-carriage-return", _add(user_id="bob\r"), InvalidUserId),
    ("user-line-separator", _add(user_id="bob\u2028alice"), InvalidUserId),
    ("user-c1-control", _add(user_id="bob\x85"), InvalidUserId),
    ("user-surrogate", _add(user_id="bob\ud800"), InvalidUserId),
    ("user-int", _add(user_id=42), InvalidUserId),
    # ids that print as "alice" but would be other tenants
    ("user-zero-width-space", _add(user_id="al\u200bice"), InvalidUserId),
    ("user-zero-width-joiner", _add(user_id="alice\u200d"), InvalidUserId),
    ("user-word-joiner", _add(user_id="\u2060alice"), InvalidUserId),
    ("user-bom", _add(user_id="\ufeffalice"), InvalidUserId),
    ("user-bidi-override", _add(user_id="\u202ealice"), InvalidUserId),
    ("user-bidi-isolate", _add(user_id="alice\u2066"), InvalidUserId),
    ("user-rtl-mark", _add(user_id="alice\u200f"), InvalidUserId),
    ("user-soft-hyphen", _add(user_id="al\u00adice"), InvalidUserId),
    ("user-tag-character", _add(user_id="alice\U000e0041"), InvalidUserId),
    ("user-variation-selector", _add(user_id="alice\ufe0f"), InvalidUserId),
    ("user-hangul-filler", _add(user_id="alice\u3164"), InvalidUserId),
    ("user-no-break-space", _add(user_id="alice\u00a0"), InvalidUserId),
    ("user-ideographic-space", _add(user_id="用户\u3000一"), InvalidUserId),
    ("user-decomposed", _add(user_id="jose\u0301"), InvalidUserId),
    ("user-invisible-search", lambda s: s.search("db", user_id="al\u200bice"), InvalidUserId),
    (
        "user-invisible-import",
        lambda s: s.import_user_memory(io.StringIO('{"text": "x"}\n'), user_id="\u202ealice"),
        InvalidUserId,
    ),
    ("user-invisible-erase", lambda s: s.clear_user_memory("al\u00adice"), InvalidUserId),
    (
        "user-invisible-turn",
        lambda s: s.append_turn("user", "hi", user_id="a\u200bb"),
        InvalidUserId,
    ),
    ("user-bytes", _add(user_id=b"alice"), InvalidUserId),
    # -- search arguments
    ("topk-zero", lambda s: s.search("db", top_k=0), InvalidArgument),
    ("topk-negative", lambda s: s.search("db", top_k=-1), InvalidArgument),
    ("topk-too-big", lambda s: s.search("db", top_k=1001), InvalidArgument),
    ("topk-float", lambda s: s.search("db", top_k=1.5), InvalidArgument),
    ("topk-str", lambda s: s.search("db", top_k="5"), InvalidArgument),
    ("topk-none", lambda s: s.search("db", top_k=None), InvalidArgument),
    ("topk-bool", lambda s: s.search("db", top_k=True), InvalidArgument),
    ("topk-nan", lambda s: s.search("db", top_k=math.nan), InvalidArgument),
    ("query-empty", lambda s: s.search(""), EmptyText),
    ("query-space", lambda s: s.search("   "), EmptyText),
    ("query-nul", lambda s: s.search("db\x00"), InvalidText),
    ("query-too-long", lambda s: s.search("q" * 8001), TextTooLong),
    ("query-none", lambda s: s.search(None), InvalidText),
    ("query-surrogate", lambda s: s.search("\udfff"), InvalidText),
    ("filter-set", lambda s: s.search("db", metadata_filter={"a": {1}}), InvalidMetadata),
    ("filter-nan", lambda s: s.search("db", metadata_filter={"a": math.nan}), InvalidMetadata),
    ("filter-int-key", lambda s: s.search("db", metadata_filter={1: 1}), InvalidMetadata),
    ("filter-list", lambda s: s.search("db", metadata_filter=["a"]), InvalidMetadata),
    ("filter-type", lambda s: s.search("db", memory_types=["nope"]), UnknownMemoryType),
    ("filter-since-naive", lambda s: s.search("db", since=datetime(2020, 1, 1)), InvalidArgument),
    ("filter-asof-str", lambda s: s.search("db", as_of="yesterday"), InvalidArgument),
    # -- memory ids
    ("get-not-uuid", lambda s: s.get("not-a-uuid"), InvalidArgument),
    ("get-empty", lambda s: s.get(""), InvalidArgument),
    ("get-none", lambda s: s.get(None), InvalidArgument),
    ("get-int", lambda s: s.get(123), InvalidArgument),
    ("get-sql", lambda s: s.get("' OR '1'='1"), InvalidArgument),
    ("get-bad-hex", lambda s: s.get("00000000-0000-0000-0000-00000000000g"), InvalidArgument),
    ("get-bytes", lambda s: s.get(b"\x00" * 16), InvalidArgument),
    ("delete-not-uuid", lambda s: s.delete_memory("not-a-uuid"), InvalidArgument),
    ("delete-empty", lambda s: s.delete_memory(""), InvalidArgument),
    ("delete-none", lambda s: s.delete_memory(None), InvalidArgument),
    ("delete-sql", lambda s: s.delete_memory("1; DELETE FROM memory_pg_memories"), InvalidArgument),
    ("delete-wildcard", lambda s: s.delete_memory("%"), InvalidArgument),
    ("history-not-uuid", lambda s: s.history("*"), InvalidArgument),
    # -- batches: one bad item among valid ones writes nothing at all
    ("batch-int-item", lambda s: s.add_memories(["ok", 5]), InvalidArgument),
    (
        "batch-unknown-field",
        lambda s: s.add_memories([{"text": "x", "owner": "bob"}]),
        InvalidArgument,
    ),
    ("batch-no-text", lambda s: s.add_memories([{"memory_type": "todo"}]), InvalidArgument),
    ("batch-none-item", lambda s: s.add_memories(["ok", None]), InvalidArgument),
    ("batch-50th-empty", _batch(MemoryInput("")), EmptyText),
    ("batch-50th-nul", _batch(MemoryInput("bad\x00")), InvalidText),
    ("batch-50th-metadata", _batch(MemoryInput("x", metadata={"s": {1}})), InvalidMetadata),
    ("batch-50th-type", _batch(MemoryInput("x", "nope")), UnknownMemoryType),
    (
        "batch-50th-naive-time",
        _batch(MemoryInput("x", event_time=datetime(2026, 1, 1))),
        InvalidArgument,
    ),
    ("batch-50th-user-field", _batch({"text": "x", "user_id": "bob"}), InvalidArgument),
    ("batch-last-importance", _batch(MemoryInput("x", importance=2), at=59), InvalidArgument),
    # A str or a dict is not a batch ("hello" stored "h", "e", "l", "o").
    ("batch-str", lambda s: s.add_memories("hello"), InvalidArgument),
    ("batch-dict", lambda s: s.add_memories({"text": "x"}), InvalidArgument),
    ("batch-none", lambda s: s.add_memories(None), InvalidArgument),
    # Already expired: never current, it would still have replaced the current memory.
    (
        "expires-past",
        _add(expires_at=datetime.now(timezone.utc) - timedelta(minutes=1)),
        InvalidArgument,
    ),
    (
        "batch-50th-expired",
        _batch(MemoryInput("x", expires_at=datetime(2020, 1, 1, tzinfo=timezone.utc))),
        InvalidArgument,
    ),
    # An Entity is checked as a dict is.
    ("entity-nul", _with_entity(Entity("Ann\x00a", "person", "ann")), InvalidArgument),
    ("entity-surrogate", _with_entity(Entity("\ud800", "person", "x")), InvalidArgument),
    ("entity-name-int", _with_entity(Entity(5, "person", "5")), InvalidArgument),  # type: ignore[arg-type]
    ("entity-kind", _with_entity(Entity("Ann", "pet", "ann")), InvalidArgument),
    ("entity-long-key", _with_entity(Entity("x" * 201, "thing", "x")), InvalidArgument),
]

# (case id, spoil) for an embedder that misbehaves; every one is refused, nothing written.
SPOILED: list[tuple[str, Callable[[np.ndarray], np.ndarray]]] = [
    ("vector-wrong-dimension", lambda v: v[:, :-1]),
    ("vector-too-long", lambda v: np.hstack([v, v[:, :1]])),
    ("vector-missing-row", lambda v: v[:-1]),
    ("vector-flat", lambda v: v.reshape(-1)),
    ("vector-nan-in-50th", lambda v: _poison_row(v, math.nan, 49)),
    ("vector-inf-in-last", lambda v: _poison_row(v, math.inf)),
    ("vector-zero-in-50th", lambda v: _zero_row(v, 49)),
    ("vector-tiny-in-last", lambda v: _zero_row(v, -1, 1e-30)),
]


@pytest.mark.parametrize(
    ("call", "expected"), [(c, e) for _, c, e in REFUSED], ids=[i for i, _, _ in REFUSED]
)
def test_refused_and_nothing_written(corpus_store, owner, call, expected):
    before = row_counts(owner)
    with pytest.raises(expected) as caught:
        call(corpus_store)
    assert isinstance(caught.value, MemoryPgError)
    assert row_counts(owner) == before


@pytest.mark.parametrize("spoil", [s for _, s in SPOILED], ids=[i for i, _ in SPOILED])
def test_a_misbehaving_embedder_writes_nothing(pg_server, corpus_db, embedder, owner, spoil):
    with MemoryStore(
        pg_server.url(corpus_db), user_id="alice", embedder=_BadEmbedder(embedder, spoil)
    ) as store:
        before = row_counts(owner)
        with pytest.raises(InvalidInput):
            store.add_memories([f"spoiled item {i} {uuid.uuid4()}" for i in range(60)])
        assert row_counts(owner) == before


@pytest.mark.parametrize("value", _SQLISH, ids=[f"sql-{i}" for i in range(len(_SQLISH))])
def test_sql_metacharacters_are_stored_as_written(corpus_store, any_user_store, value):
    user = "user " + value  # an odd but valid tenant
    memory_id = any_user_store.add_memory(
        "note: " + value,
        "key_decision",
        {value: value, "list": [value], "nested": {value: [value, {value: value}]}},
        user_id=user,
        topic=value,
    )
    got = any_user_store.get(memory_id, user_id=user)
    assert got["text"] == "note: " + value
    assert got["metadata"] == {
        value: value,
        "list": [value],
        "nested": {value: [value, {value: value}]},
    }
    assert got["topic"] == check_topic(value)
    found = any_user_store.search(value, user_id=user, metadata_filter={value: value})
    assert [r["id"] for r in found] == [memory_id]
    assert any_user_store.search(value, user_id=user, metadata_filter={value: "other"}) == []
    # Nobody else sees it, and the seed memory of alice is still there.
    assert corpus_store.search(value, top_k=50, metadata_filter={value: value}) == []
    assert any_user_store.clear_user_memory(user) == 1
    assert corpus_store.list_memories()[0]["text"] == "the team chose PostgreSQL"


STORED: list[tuple[str, dict[str, Any]]] = [
    ("text-at-limit", {"text": "x" * 8000}),
    ("text-zero-width", {"text": "\u200b"}),
    ("text-control-char", {"text": "bell\x07 and form\x0cfeed"}),
    ("text-emoji", {"text": "🧠💾 remember this"}),
    ("text-rtl", {"text": "مرحبا بالعالم"}),
    ("text-line-separator", {"text": "a\u2028b\u2029c"}),
    ("meta-deep-20", {"metadata": _nested(20)}),
    ("meta-big-int", {"metadata": {"n": 10**400}}),
    ("meta-floats", {"metadata": {"a": 0.1, "b": 1e-7, "c": -2.5, "d": 1e20}}),
    ("meta-empty-key", {"metadata": {"": ""}}),
    ("meta-unicode-keys", {"metadata": {"用户": "张三", "🙂": ["👍"]}}),
    ("meta-nulls-bools", {"metadata": {"n": None, "t": True, "f": False, "l": []}}),
    ("user-emoji", {"user_id": "🙂"}),
    ("user-chinese", {"user_id": "用户一"}),
    ("user-spaces-inside", {"user_id": "a b"}),
    ("user-at-limit", {"user_id": "u" * 255}),
    (
        "time-aware-offset",
        {"event_time": datetime(2020, 2, 29, 23, 59, tzinfo=timezone(timedelta(hours=8)))},
    ),
    ("time-far-past", {"event_time": datetime(1, 1, 3, tzinfo=UTC)}),
    ("time-far-future", {"expires_at": datetime(9999, 12, 29, tzinfo=UTC)}),
    ("user-composed", {"user_id": "jos\u00e9"}),
    ("user-emoji-skin-tone", {"user_id": "\U0001f44d\U0001f3fd"}),
    ("importance-subnormal", {"importance": 1e-320}),
    ("importance-tiny", {"importance": 1e-300}),
]


@pytest.mark.parametrize("fields", [f for _, f in STORED], ids=[i for i, _ in STORED])
def test_unusual_but_valid_input_round_trips(any_user_store, fields):
    fields = dict(fields)
    text = fields.pop("text", f"unusual {uuid.uuid4()}")
    user = fields.get("user_id", "roundtrip")
    fields.setdefault("user_id", user)
    memory_id = any_user_store.add_memory(text, **fields)
    got = any_user_store.get(memory_id, user_id=user)
    assert got["text"] == text
    assert got["metadata"] == fields.get("metadata", {})
    if "importance" in fields:  # below what the real column holds: stored as 0
        assert got["importance"] == 0.0
        assert any_user_store.search(text, user_id=user)[0]["id"] == memory_id
    for key in ("event_time", "expires_at"):
        if key in fields:
            assert got[key] == fields[key]
    assert [m["id"] for m in any_user_store.list_memories(user_id=user)] == [memory_id]
    assert any_user_store.clear_user_memory(user) == 1


def test_an_unknown_memory_id_is_simply_absent(corpus_store, owner):
    before = row_counts(owner)
    stranger = str(uuid.uuid4())
    assert corpus_store.get(stranger) is None
    assert corpus_store.delete_memory(stranger) is False
    assert corpus_store.history(stranger) == []
    assert row_counts(owner) == before

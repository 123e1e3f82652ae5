"""Input checks: each refusal is a typed error that names the problem."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from memory_pg import errors
from memory_pg._validate import (
    check_importance,
    check_memory_type,
    check_metadata,
    check_text,
    check_time,
    check_top_k,
    check_topic,
    check_user_id,
    content_hash,
)
from memory_pg.config import StoreSettings

S = StoreSettings()


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", errors.EmptyText),
        ("   \n\t ", errors.EmptyText),
        ("x" * (S.max_text_chars + 1), errors.TextTooLong),
        ("a\x00b", errors.InvalidText),
        ("lone \ud800 surrogate", errors.InvalidText),
        (b"bytes", errors.InvalidText),
        (None, errors.InvalidText),
    ],
)
def test_bad_text_is_refused(text, error):
    with pytest.raises(error):
        check_text(text, S)


def test_text_at_the_limit_and_chinese_are_accepted():
    assert check_text("数" * S.max_text_chars, S) == "数" * S.max_text_chars
    assert check_text("  使用 PostgreSQL  ", S) == "  使用 PostgreSQL  "


@pytest.mark.parametrize(
    ("user_id", "error"),
    [
        (None, errors.MissingUserScope),
        ("", errors.InvalidUserId),
        ("  ", errors.InvalidUserId),
        ("u" * 256, errors.InvalidUserId),
        ("a\x00b", errors.InvalidUserId),
        ("tab\tuser", errors.InvalidUserId),
        (42, errors.InvalidUserId),
    ],
)
def test_bad_user_ids_are_refused(user_id, error):
    with pytest.raises(error):
        check_user_id(user_id, S)


@pytest.mark.parametrize("user_id", ["alice", "用户-42", "a@b.example", "x' OR '1'='1", "🙂"])
def test_printable_user_ids_are_accepted(user_id):
    assert check_user_id(user_id, S) == user_id


def test_missing_scope_is_also_an_invalid_input():
    with pytest.raises(errors.InvalidInput, match="user_id"):
        check_user_id(None, S)


@pytest.mark.parametrize(
    "metadata",
    [
        {"a": {1, 2}},
        {"a": b"bytes"},
        {"a": object()},
        {"a": math.nan},
        {"a": math.inf},
        {1: "non-str key"},
        {"a\x00": 1},
        {"a": "nul\x00"},
        ["not", "a", "dict"],
        "a string",
    ],
)
def test_metadata_that_is_not_a_json_object_is_refused(metadata):
    with pytest.raises(errors.InvalidMetadata):
        check_metadata(metadata, S)


def test_deep_and_huge_metadata_are_refused():
    deep: dict[str, object] = {}
    node = deep
    for _ in range(S.max_metadata_depth + 1):
        node["k"] = {}
        node = node["k"]  # type: ignore[assignment]
    with pytest.raises(errors.InvalidMetadata, match="deeper"):
        check_metadata(deep, S)
    with pytest.raises(errors.InvalidMetadata, match="bytes"):
        check_metadata({"blob": "x" * (S.max_metadata_bytes + 1)}, S)


def test_metadata_is_copied_as_plain_json():
    source = {"tags": ("a", "b"), "n": 1, "中文": "值"}
    assert check_metadata(source, S) == {"tags": ["a", "b"], "n": 1, "中文": "值"}
    assert check_metadata(None, S) == {}


def test_memory_types_builtin_and_added():
    assert check_memory_type("key_decision", S) == "key_decision"
    with pytest.raises(errors.UnknownMemoryType, match="known"):
        check_memory_type("keydecision", S)
    team = StoreSettings(memory_types=(*S.memory_types, "meeting_note"))
    assert check_memory_type("meeting_note", team) == "meeting_note"


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, "0.5", True])
def test_importance_out_of_range_is_refused(value):
    with pytest.raises(errors.InvalidArgument):
        check_importance(value, S)


def test_importance_defaults():
    assert check_importance(None, S) == S.default_importance
    assert check_importance(1, S) == 1.0


def test_naive_and_non_datetime_times_are_refused():
    with pytest.raises(errors.InvalidArgument, match="time zone"):
        check_time(datetime(2026, 1, 1), "event_time")
    with pytest.raises(errors.InvalidArgument):
        check_time("2026-01-01", "event_time")
    aware = datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=8)))
    assert check_time(aware, "event_time") == aware


def test_topic_is_normalised():
    assert check_topic("  DataBase ") == "database"
    assert check_topic("数据库") == "数据库"
    assert check_topic("   ") is None
    with pytest.raises(errors.InvalidArgument):
        check_topic(3)


@pytest.mark.parametrize("top_k", [0, -1, 1001, 2.5, "5", True])
def test_top_k_out_of_range_is_refused(top_k):
    with pytest.raises(errors.InvalidArgument):
        check_top_k(top_k)


def test_content_hash_ignores_case_width_and_spacing_only():
    assert content_hash("Use  PostgreSQL") == content_hash("use postgresql")
    assert content_hash("ＰｏｓｔｇｒｅＳＱＬ") == content_hash("postgresql")
    assert content_hash("use PostgreSQL") != content_hash("use MySQL")

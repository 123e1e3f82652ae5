"""Import: a damaged line is a typed error naming it; a vector that cannot be used is made again."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np
import pytest

from memory_pg.errors import InvalidArgument, InvalidImport, InvalidInput
from tests.conftest import count_rows


def _line(store: Any, **fields: Any) -> str:
    record = {"text": "the team chose PostgreSQL", "embedding_model": store.embedder.model_name}
    record.update(fields)
    return json.dumps(record)


def _import(store: Any, *lines: str) -> int:
    return int(store.import_user_memory(io.StringIO("".join(line + "\n" for line in lines))))


def _unit(store: Any, text: str) -> list[float]:
    return [float(x) for x in store.embedder.embed_documents([text])[0]]


DAMAGED: list[tuple[str, dict[str, Any]]] = [
    ("strings", {"embedding": ["0.1"] * 384}),
    ("nested", {"embedding": [[0.1] * 384]}),
    ("bools", {"embedding": [True] * 384}),
    ("nulls", {"embedding": [None] * 384}),
    ("object", {"embedding": {"0": 0.1}}),
    ("string", {"embedding": "[0.1, 0.2]"}),
    ("huge-int", {"embedding": [10**400] + [0] * 383}),
    ("past-float32", {"embedding": [1e39] + [0.0] * 383}),
    ("text-int", {"text": 5}),
    ("type-unknown", {"memory_type": "nope"}),
    ("importance-huge", {"importance": 10**400}),
    ("time-int", {"event_time": 5}),
    ("id-int", {"id": 5}),
    ("count-past-integer", {"access_count": 2**31}),
    ("count-float", {"access_count": 1.5}),
    ("metadata-list", {"metadata": [1]}),
]


@pytest.mark.parametrize("fields", [f for _, f in DAMAGED], ids=[i for i, _ in DAMAGED])
def test_a_damaged_record_is_a_typed_error_naming_its_line(store, raw, fields):
    with pytest.raises(InvalidImport, match="line 2") as caught:
        _import(store, _line(store, text="a fine first line"), _line(store, **fields))
    assert isinstance(caught.value, InvalidArgument) and isinstance(caught.value, InvalidInput)
    assert count_rows(raw, "memory_pg_memories") == 0


@pytest.mark.parametrize(
    "payload",
    [
        b'{"text": "fine"}\n{"text": "caf\xe9"}\n',  # Latin-1, not UTF-8
        b'{"text": "fine"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        b'{"text": "fine"}\n{"text": "x", "n": ' + b"9" * 5000 + b"}\n",
        b'{"text": "fine"}\n{"text": "x", "embedding": [NaN]}\n',
    ],
    ids=["not-utf8", "deep-nesting", "int-5000-digits", "nan"],
)
def test_a_damaged_file_is_a_typed_error(store, raw, tmp_path, payload):
    path = tmp_path / "dump.jsonl"
    path.write_bytes(payload)
    with pytest.raises(InvalidImport, match=r"line 2|UTF-8"):
        store.import_user_memory(str(path))
    assert count_rows(raw, "memory_pg_memories") == 0


@pytest.mark.parametrize(
    "embedding",
    [[0.0] * 384, [0] * 384, [1e-46] * 384, [0.1] * 383, [0.1] * 385, [0.1]],
    ids=["zero", "zero-ints", "below-float32", "short", "long", "one"],
)
def test_a_vector_with_no_direction_or_the_wrong_length_is_made_again(store, embedding):
    assert _import(store, _line(store, text="my cat is called Miso", embedding=embedding)) == 1
    store.add_memory("the team chose PostgreSQL for the database")
    for query in ("what is my cat called", "database", "tea or coffee"):
        for hit in store.search(query, top_k=5):
            assert math.isfinite(hit["score"]) and math.isfinite(hit["similarity"])
    hit = store.search("what is my cat called", top_k=1, min_similarity=0.3)[0]
    assert hit["text"] == "my cat is called Miso"
    # The vector is the model's own: the gate of a query about something else holds.
    assert store.search("database choice", top_k=5, min_similarity=0.9) == []


@pytest.mark.parametrize("scale", [1.0, 3.0, 1e-30], ids=["as-exported", "long", "tiny"])
def test_a_vector_of_the_model_is_kept_at_any_length(store, scale):
    vector = [scale * x for x in _unit(store, "my cat is called Miso")]
    assert _import(store, _line(store, text="my cat is called Miso", embedding=vector)) == 1
    store.add_memory("the team chose PostgreSQL for the database")
    hit = store.search("what is my cat called", top_k=1, min_similarity=0.3)[0]
    assert hit["text"] == "my cat is called Miso"
    assert hit["similarity"] == pytest.approx(
        float(
            np.dot(
                _unit(store, "my cat is called Miso"),
                store.embedder.embed_query("what is my cat called"),
            )
        ),
        abs=1e-4,
    )


def test_a_zero_vector_already_stored_never_passes_a_similarity_gate(store, raw):
    # Rows written before zero vectors were refused: one is set to zero behind the store.
    zero = store.add_memory("an imported row with a zero vector")
    store.add_memory("the team chose PostgreSQL")
    raw.execute(
        "UPDATE memory_pg_memories SET embedding = array_fill(0, ARRAY[384])::vector WHERE id = %s",
        (zero,),
    )
    assert all(h["id"] != zero for h in store.search("PostgreSQL", min_similarity=0.9))
    assert all(h["id"] != zero for h in store.search("quantum physics", min_similarity=0.05))
    for hit in store.search("an imported row", top_k=5):
        assert math.isfinite(hit["score"]) and math.isfinite(hit["similarity"])
        if hit["id"] == zero:
            assert hit["similarity"] == 0.0


def test_an_export_holding_an_expired_memory_is_restored_as_it_was(store):
    """A backup that cannot be restored is data lost: the default export holds the
    expired memories too, and the import refused their past expiry (a review found it)."""
    import time
    from datetime import datetime, timedelta, timezone

    store.add_memory("I live in Hangzhou", "user_profile")
    soon = datetime.now(timezone.utc) + timedelta(seconds=1)
    store.add_memory("Renew the passport", "todo", expires_at=soon)
    time.sleep(1.2)
    out = io.StringIO()
    assert store.export_user_memory(out) == 2
    store.clear_user_memory()

    assert store.import_user_memory(io.StringIO(out.getvalue())) == 2
    assert [m["text"] for m in store.list_memories()] == ["I live in Hangzhou"]
    everything = {m["text"]: m for m in store.list_memories(include_inactive=True)}
    assert set(everything) == {"I live in Hangzhou", "Renew the passport"}
    assert everything["Renew the passport"]["expires_at"] <= datetime.now(timezone.utc)
    # A new memory still may not expire in the past.
    with pytest.raises(InvalidArgument, match="has passed"):
        store.add_memory("Call the bank", "todo", expires_at=soon)


def test_one_id_twice_in_a_file_is_a_damaged_file(store, raw):
    """The second line used to be skipped as 'already there': its text silently lost."""
    same = "6f1c1b4e-8a43-4a53-9a7e-6a1c3b1e2f10"
    with pytest.raises(InvalidImport, match=r"line 2: id .* is on line 1 too"):
        _import(
            store,
            _line(store, id=same, text="I am allergic to penicillin"),
            _line(store, id=same, text="My blood type is O negative"),
        )
    assert count_rows(raw, "memory_pg_memories") == 0

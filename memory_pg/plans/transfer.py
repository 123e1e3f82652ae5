"""Transfer plans: a user's memories out as JSON lines, and back in (no I/O but the file's)."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import IO, Any

import numpy as np

from memory_pg._validate import check_agent_id, check_time
from memory_pg.config import StoreSettings
from memory_pg.embedding import Embedder
from memory_pg.errors import InvalidImport, InvalidInput
from memory_pg.plans import relations
from memory_pg.plans.protocol import Plan, Rows
from memory_pg.plans.shapes import Prepared, memory_dict, parse_memory_id
from memory_pg.plans.write import (
    INSERT_CHUNK,
    check_entities,
    new_rows,
    plan_model_unchanged,
    prepare,
)
from memory_pg.sql import locks, memories
from memory_pg.sql import relations as relations_sql
from memory_pg.sql.memories import MAX_ACCESS_COUNT, NewMemory


def plan_export(user_id: str, include_inactive: bool) -> Plan[Rows]:
    """The rows of an export, vectors included, oldest first; a memory that names
    entities carries them as ``entities`` (name, kind, aliases), for an import to
    restore (the LLM's aliases cannot be found again from the text)."""
    rows = yield memories.export_rows(user_id, include_inactive)
    mentions = yield relations_sql.export_mentions(user_id)
    named: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for m in mentions:
        named.setdefault(m["memory_id"], []).append(
            {
                "name": m["name"],
                "kind": m["kind"],
                # This memory's own spellings only: an import gives them back to it.
                "aliases": [x for x in dict.fromkeys(m["spellings"]) if x != m["name"]],
            }
        )
    for row in rows:
        # None named (or written before relations): no field, and an import finds
        # them by the rules, as it does for an export made before this field.
        if row["id"] in named:
            row["entities"] = named[row["id"]]
    return rows


def write_lines(target: str | IO[str], rows: Rows, with_embeddings: bool) -> int:
    """Write exported rows as JSON lines to a path or an open text file; returns the count."""
    fh, close = open_text(target, "w")
    try:
        for row in rows:
            embedding = row.pop("embedding", None)
            vec = vector_list(embedding) if with_embeddings and embedding is not None else None
            fh.write(export_line(row, vec) + "\n")
    finally:
        if close:
            fh.close()
    return len(rows)


def read_lines(
    source: str | IO[str], user_id: str, settings: StoreSettings, embedder: Embedder
) -> tuple[Prepared, list[list[float] | None]]:
    """:func:`parse_import` of a path or an open text file."""
    fh, close = open_text(source, "r")
    try:
        return parse_import(user_id, fh, settings, embedder)
    finally:
        if close:
            fh.close()


def texts_to_embed(prepared: Prepared, given: list[list[float] | None]) -> list[str]:
    """The texts whose exported vector cannot be reused, in order."""
    return [t for t, v in zip(prepared.embed_texts, given, strict=True) if v is None]


def vector_list(value: Any) -> list[float]:
    """A stored vector as a JSON-ready list of floats."""
    return [float(x) for x in np.asarray(value, dtype=np.float32).tolist()]


def export_line(row: Mapping[str, Any], vector: list[float] | None) -> str:
    """One exported memory as a JSON line (no user id; the vector if given)."""
    record = {
        k: (v.isoformat() if isinstance(v, datetime) else v)
        for k, v in memory_dict(row).items()
        if k not in ("user_id",)
    }
    if vector is not None:
        record["embedding"] = vector
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def parse_import(
    user_id: str, lines: Iterable[str], settings: StoreSettings, embedder: Embedder
) -> tuple[Prepared, list[list[float] | None]]:
    """The memories of an export for ``user_id`` (in scope), and each one's reusable
    vector (None: embed it again). A damaged line raises :class:`InvalidImport`."""
    items: list[dict[str, Any]] = []
    vectors: list[list[float] | None] = []
    overrides: list[dict[str, Any]] = []
    lines_of: dict[uuid.UUID, int] = {}  # each id's line: a file holds a memory once
    uid = user_id
    for number, line in _numbered_lines(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        # ValueError: an int past Python's digit limit; RecursionError: deep nesting.
        except (ValueError, RecursionError) as exc:
            raise InvalidImport(f"line {number} is not JSON: {exc}") from exc
        if not isinstance(record, dict) or "text" not in record:
            raise InvalidImport(f"line {number} is not a memory object with a 'text'")
        try:
            item, override = _import_record(record)
            # Agent scope as exported (not an override of the insert: NewMemory fields).
            agent = check_agent_id(record.get("agent_id"), settings)
            private = record.get("private", False)
            if not isinstance(private, bool) or (private and agent is None):
                raise InvalidImport("private must be a bool, with an agent_id")
            override["agent_id"], override["private"] = agent, private
            # Each record is checked on its own, so an error can name its line.
            prepare(settings, uid, [item], restoring=True)
            vector = _import_vector(
                record.get("embedding"),
                embedder.dimension,
                reuse=record.get("embedding_model") == embedder.model_name,
            )
        except InvalidInput as exc:
            raise InvalidImport(f"line {number}: {exc}") from exc
        if "id" in override:
            if (first := lines_of.setdefault(override["id"], number)) != number:
                raise InvalidImport(
                    f"line {number}: id {override['id']} is on line {first} too; "
                    "nothing was written"
                )
        items.append(item)
        overrides.append(override)
        vectors.append(vector)
    prepared = prepare(settings, uid, items, restoring=True)
    prepared.overrides = overrides
    return prepared, vectors


def import_rows(
    prepared: Prepared,
    given: list[list[float] | None],
    embedded: np.ndarray[Any, Any],
    embedder: Embedder,
) -> list[NewMemory]:
    """The rows to insert: the exported vectors where reusable, else ``embedded``'s in
    order; ids, times, use counts and the entities named as exported."""
    dim = embedder.dimension
    vectors = np.zeros((len(prepared.texts), dim), dtype=np.float32)
    j = 0
    for i, vec in enumerate(given):
        if vec is not None:
            vectors[i] = np.asarray(vec, dtype=np.float32)
        else:
            vectors[i] = embedded[j]
            j += 1
    rows = new_rows(prepared, vectors, embedder)
    out = []
    for row, override in zip(rows, prepared.overrides, strict=True):
        override = dict(override)
        memory_id = override.pop("id", row.id)
        scope = {"agent_id": override.pop("agent_id", None)}
        scope["private"] = override.pop("private", False)
        found = override.pop("entities", None)
        fields = {**row.__dict__, **scope, "id": memory_id, "found": found, "overrides": override}
        out.append(NewMemory(**fields))
    return out


def plan_import(rows: list[NewMemory], model: str) -> Plan[int]:
    """Insert exported rows as they were; ids or texts already there are skipped."""
    yield from plan_model_unchanged(model)
    count = 0
    if rows:
        yield locks.xact_lock_shared(locks.user_lock_key(rows[0].user_id))
    imported: set[uuid.UUID] = set()
    for start in range(0, len(rows), INSERT_CHUNK):
        result = yield memories.insert_memories(rows[start : start + INSERT_CHUNK], "imported")
        count += len(result)
        imported.update(r["memory_id"] for r in result)
    # Relations are derived again from the imported rows, as on a write.
    yield from relations.plan_record(
        rows[0].user_id if rows else "", [r for r in rows if r.id in imported]
    )
    yield from plan_model_unchanged(model)
    return count


def _numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    number = 0
    try:
        for number, line in enumerate(lines, 1):
            yield number, line
    except UnicodeDecodeError as exc:
        raise InvalidImport(f"the file is not UTF-8 text after line {number}: {exc}") from exc


def _import_record(record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record's memory fields, and the stored fields it keeps (ids, times, use)."""
    item = {
        "text": record["text"],
        "memory_type": record.get("memory_type", "dialogue"),
        "metadata": record.get("metadata"),
        "topic": record.get("topic"),
        "importance": record.get("importance"),
        "event_time": _parse_time(record.get("event_time"), "event_time"),
        "expires_at": _parse_time(record.get("expires_at"), "expires_at"),
        "context": record.get("context"),
    }
    override: dict[str, Any] = {}
    if record.get("id"):
        override["id"] = parse_memory_id(record["id"])
    for key in ("created_at", "updated_at", "valid_from", "superseded_at", "last_accessed_at"):
        if record.get(key):
            override[key] = _parse_time(record[key], key)
    if record.get("superseded_by"):
        override["superseded_by"] = parse_memory_id(record["superseded_by"])
    if record.get("entities") is not None:
        # As exported: restored as they are, not found again (see :func:`plan_export`).
        override["entities"] = check_entities(record["entities"])
    if record.get("access_count") is not None:
        count = record["access_count"]
        if (
            isinstance(count, bool)
            or not isinstance(count, int)
            or not 0 <= count <= MAX_ACCESS_COUNT
        ):
            raise InvalidImport(f"access_count must be a count up to {MAX_ACCESS_COUNT}")
        override["access_count"] = count
    return item, override


def _import_vector(value: object, dim: int, *, reuse: bool) -> list[float] | None:
    """An exported vector to store as it is, or None to embed the text again.

    A vector that is not a list of numbers is a damaged file (:class:`InvalidImport`);
    one of another model, of the wrong length, or of no length (all zero) is
    replaced by the configured model's vector of the text. A vector of another
    length than 1 is scaled to length 1, as the model's own are.
    """
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in value
    ):
        raise InvalidImport("'embedding' must be a list of numbers")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        try:
            vector = np.asarray(value, dtype=np.float64)
        except OverflowError:  # an int past float's range
            vector = np.asarray([math.inf])
        if not np.isfinite(vector).all() or not np.isfinite(vector.astype(np.float32)).all():
            raise InvalidImport("'embedding' holds NaN, infinite or out-of-range values")
        if not reuse or len(value) != dim:
            return None
        # Zero as it would be stored: components below float32's range count as 0.
        if not np.any(vector.astype(np.float32)):
            return None
        length = float(np.linalg.norm(vector))
    if abs(length - 1.0) > 1e-3:
        vector = vector / length
    return [float(x) for x in vector]


def _parse_time(value: object, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidImport(f"{what} must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidImport(f"{what} {value!r} is not an ISO 8601 time") from exc
    return check_time(parsed, what)


def open_text(target: str | IO[str], mode: str) -> tuple[IO[str], bool]:
    """A text file for a path or an already open file; True when the caller must close it."""
    if isinstance(target, str):
        return open(target, mode, encoding="utf-8"), True
    return target, False


def load_rows(
    source: str | IO[str], user_id: str, settings: StoreSettings, embedder: Embedder
) -> list[NewMemory]:
    """The rows of an export file: parsed, embedded where needed, with their entities
    (blocking work: the stores run it off the event loop, before the transaction)."""
    prepared, given = read_lines(source, user_id, settings, embedder)
    to_embed = texts_to_embed(prepared, given)
    embedded = embedder.embed_documents(to_embed) if to_embed else np.zeros((0, 0))
    return relations.with_entities(import_rows(prepared, given, embedded, embedder))

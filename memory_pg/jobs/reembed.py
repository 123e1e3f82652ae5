"""Re-embedding: every memory's vector made again by another (or the same) model.

How it stays safe and resumable: the command adds a transient column
``embedding_next vector(N)`` (not a migration: it exists only while a run is in
progress, and is recorded in the settings row ``reembed``), fills it in batches,
each its own transaction, while the old column keeps serving searches. Rows with
``embedding_next IS NULL`` are pending, so an interrupted run continues where it
stopped. When none is left, one short transaction under an exclusive table lock
(waited for at most ``SWAP_LOCK_TIMEOUT_MS``, as is the lock that adds the column:
queries queue behind a waiting request) drops the old column (and with it the HNSW
index), renames the new one, records the model and dimension in the ``embedding``
settings row; the HNSW index is then rebuilt with ``CREATE INDEX CONCURRENTLY`` so
searches are never blocked by it.
After the swap, the table equals what the migrations declare, column order aside.

Writers still using the old model keep working during the run (their new rows are
picked up by the next batch), and fail after the swap with a dimension or model
mismatch: restart them with the new model.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, cast

import psycopg
from psycopg import sql as psycopg_sql
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from memory_pg import pooling
from memory_pg.embedding import Embedder, embedding_text, unusable_rows
from memory_pg.errors import EmbeddingError, InvalidArgument, QueryTimeout
from memory_pg.plans.protocol import LOCK_NOT_AVAILABLE
from memory_pg.roles import require_owner
from memory_pg.sql import named, setup, statement
from memory_pg.sql.core import vector_literal

logger = logging.getLogger(__name__)

#: Settings row naming the model a run in progress re-embeds to.
REEMBED_SETTING = "reembed"
EMBEDDING_SETTING = "embedding"
#: Settings row keeping the HNSW index's build settings from the swap to the rebuild.
GRAPH_SETTING = "hnsw_index"
#: The schema's build settings (tables.py, migration 0002), for an index that had none.
GRAPH_DEFAULTS = {"m": 16, "ef_construction": 64}
#: pgvector's bounds for each (hnsw.c); it also needs ef_construction >= 2 * m.
_GRAPH_LIMITS = {"m": (2, 100), "ef_construction": (4, 1000)}
_WHOLE_NUMBER = re.compile(r"[1-9][0-9]{0,3}")

#: Called after each batch with (done, total).
Progress = Callable[[int, int], None]

_SWAP_TRIES = 5
#: How long the swap waits for the table's ACCESS EXCLUSIVE lock. While the request
#: waits for the transactions that hold the table, every later query of the table
#: waits behind it; so it gives up, fills what arrived meanwhile, and tries again.
SWAP_LOCK_TIMEOUT_MS = 2000


@dataclass
class ReembedReport:
    """What one ``reembed`` run did.

    Attributes:
        model: the model vectors now come from.
        dimension: its vector length.
        previous_model: the model recorded before.
        previous_dimension: its vector length.
        reembedded: rows embedded by this run (a resumed run counts only its own).
        resumed: an interrupted run to the same model was continued.
        batches: update transactions run.
        duration_s: wall-clock seconds.
    """

    model: str
    dimension: int
    previous_model: str | None
    previous_dimension: int | None
    reembedded: int = 0
    resumed: bool = False
    batches: int = 0
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)


def stderr_progress() -> Progress:
    """A progress bar on stderr: tqdm when installed, else a plain line per batch."""
    try:
        from tqdm import tqdm
    except ImportError:

        def plain(done: int, total: int) -> None:
            print(f"reembed: {done}/{total} rows", file=sys.stderr, flush=True)

        return plain
    bar: Any = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="row", desc="reembed", file=sys.stderr)
        bar.total = max(total, done)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update


def reembed(
    engine: Engine,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    progress: Progress | None = None,
) -> ReembedReport:
    """Re-embed every memory with ``embedder`` and switch the database to its model.

    Args:
        engine: the database; its role must own the tables and see every user's
            rows (a superuser, or the owner in ``memory_pg_maintenance``), else
            :class:`~memory_pg.errors.RoleRequired` before anything is changed.
        embedder: the target model; may be the recorded one (vectors made again).
        batch_size: rows embedded and written per transaction.
        progress: called with (done, total) after each batch.
    """
    if batch_size < 1:
        raise InvalidArgument("batch_size must be at least 1")
    # CREATE INDEX CONCURRENTLY runs outside a transaction, under a session timeout.
    pooling.require_session(engine, "reembed", "a session statement_timeout over its index build")
    started = time.monotonic()
    model, dimension = str(embedder.model_name), int(embedder.dimension)
    target: dict[str, Any] = {"model": model, "dimension": dimension}
    with engine.connect() as conn:
        require_owner(conn, "reembed")
        with conn.begin():
            recorded = _setting(conn, EMBEDDING_SETTING)
            running = _setting(conn, REEMBED_SETTING)
            # A graph the rebuild could not build is refused before anything is written:
            # the index's settings, or with no index those an earlier swap recorded.
            if _graph_settings(conn) is None:
                _checked_graph(_setting(conn, GRAPH_SETTING) or {}, RECORD_FIX)
            present = bool(conn.execute(statement("reembed_column_exists")).scalar())
        report = ReembedReport(
            model=model,
            dimension=dimension,
            previous_model=recorded.get("model") if recorded else None,
            previous_dimension=recorded.get("dimension") if recorded else None,
        )
        report.resumed = present and running == target
        if not report.resumed and _add_column(conn, target) == "busy":
            raise QueryTimeout(
                f"reembed: other transactions held memory_pg_memories for "
                f"{SWAP_LOCK_TIMEOUT_MS} ms, so its new column could not be added; nothing "
                "was changed: run reembed again when it is quieter"
            )
        outcome = ""
        for attempt in range(_SWAP_TRIES):
            _fill(conn, embedder, batch_size, progress, report)
            outcome = _swap(conn, target)
            if outcome == "swapped":
                break
            if outcome == "busy" and attempt < _SWAP_TRIES - 1:
                time.sleep(SWAP_LOCK_TIMEOUT_MS / 1000)  # the queries that queued behind it
        else:
            if outcome == "busy":
                raise QueryTimeout(
                    f"reembed: other transactions held memory_pg_memories at the last of "
                    f"{_SWAP_TRIES} tries of the swap ({SWAP_LOCK_TIMEOUT_MS} ms each); "
                    "the new vectors are kept: run reembed again when it is quieter"
                )
            # Writers outpacing the swap five times in a row.
            logger.warning("reembed: rows kept arriving; run the command again to finish")
            report.duration_s = round(time.monotonic() - started, 3)
            return report
    _ensure_index(engine)
    report.duration_s = round(time.monotonic() - started, 3)
    logger.info("reembed: %d rows re-embedded with %s", report.reembedded, report.model)
    return report


def _setting(conn: Connection, key: str) -> dict[str, Any] | None:
    row = conn.execute(setup.read_setting(key)).first()
    return dict(row[0]) if row else None


def _fill(
    conn: Connection,
    embedder: Embedder,
    batch_size: int,
    progress: Progress | None,
    report: ReembedReport,
) -> None:
    with conn.begin():
        pending = int(conn.execute(statement("reembed_pending")).scalar() or 0)
    total = report.reembedded + pending
    if progress is not None:
        progress(report.reembedded, total)
    # user_id is never empty (a check constraint), so this key sorts before every row.
    after: tuple[str, str] = ("", "00000000-0000-0000-0000-000000000000")
    while True:
        with conn.begin():
            rows = conn.execute(
                statement(
                    "reembed_next_batch", n=batch_size, after_user=after[0], after_id=after[1]
                )
            ).all()
        if not rows:
            return
        after = (rows[-1].user_id, str(rows[-1].id))
        vectors = embedder.embed_documents([embedding_text(r.text, r.context) for r in rows])
        bad = unusable_rows(vectors)
        if bad:
            raise EmbeddingError(
                f"{embedder.model_name} gave a vector with no direction (zero, NaN or "
                f"infinite) for memory {rows[bad[0]].id}: nothing of this batch was written"
            )
        with conn.begin():
            conn.execute(
                statement(
                    "reembed_write_batch",
                    uids=[r.user_id for r in rows],
                    ids=[str(r.id) for r in rows],
                    vecs=[vector_literal(v) for v in vectors],
                )
            )
        report.reembedded += len(rows)
        report.batches += 1
        if progress is not None:
            progress(report.reembedded, max(total, report.reembedded))


def _unless_busy(step: Callable[[], str]) -> str:
    """``step()``, or ``busy`` when it gave up waiting for the table (lock_timeout)."""
    try:
        return step()
    except DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        logger.warning(
            "reembed: other transactions held memory_pg_memories for %d ms", SWAP_LOCK_TIMEOUT_MS
        )
        return "busy"


def _add_column(conn: Connection, target: dict[str, Any]) -> str:
    """Add the column the new vectors go to (``added``), or ``busy``."""

    def add() -> str:
        with conn.begin():
            # ADD COLUMN takes the table's ACCESS EXCLUSIVE lock, as the swap does.
            conn.execute(statement("lock_timeout_local", timeout=f"{SWAP_LOCK_TIMEOUT_MS}ms"))
            conn.execute(statement("reembed_drop_column"))
            conn.execute(statement("reembed_embedding_dim", d=str(target["dimension"])))
            conn.execute(statement("reembed_add_column"))
            conn.execute(setup.write_setting(REEMBED_SETTING, target))
        return "added"

    return _unless_busy(add)


def _swap(conn: Connection, target: dict[str, Any]) -> str:
    """Swap the columns in one transaction: ``swapped``, or ``rows`` when rows arrived
    meanwhile, or ``busy`` when other transactions held the table too long."""
    return _unless_busy(lambda: _swap_locked(conn, target))


def _swap_locked(conn: Connection, target: dict[str, Any]) -> str:
    with conn.begin():
        # The swap rewrites nothing but may scan the table (NOT NULL, model names).
        conn.execute(statement("statement_timeout_off_local"))
        conn.execute(statement("lock_timeout_local", timeout=f"{SWAP_LOCK_TIMEOUT_MS}ms"))
        conn.execute(statement("reembed_lock_table"))
        conn.execute(statement("lock_timeout_local", timeout="0"))  # held: nothing to wait for
        if int(conn.execute(statement("reembed_pending")).scalar() or 0):
            return "rows"
        graph = _graph_settings(conn, warn=True)
        if graph is not None:  # no index: an earlier run stopped before the rebuild
            conn.execute(setup.write_setting(GRAPH_SETTING, graph))
        conn.execute(statement("reembed_swap_drop"))
        conn.execute(statement("reembed_swap_rename"))
        conn.execute(statement("reembed_swap_not_null"))
        conn.execute(statement("reembed_swap_model", model=target["model"]))
        conn.execute(setup.write_setting(EMBEDDING_SETTING, target))
        conn.execute(setup.delete_setting(REEMBED_SETTING))
    return "swapped"


#: How to mend settings recorded by an earlier swap (the index they came from is gone).
RECORD_FIX = (
    "the HNSW settings recorded by an earlier reembed (settings row 'hnsw_index')",
    "correct or delete that row as the tables' owner, then run reembed again",
)


def _index_fix(index: str) -> tuple[str, str]:
    return (
        f"the HNSW index {index}",
        f"ALTER INDEX {index} SET (...) (with a lock_timeout: it locks the index), "
        "then run reembed again",
    )


def _graph_int(key: str, value: object, where: tuple[str, str]) -> int:
    low, high = _GRAPH_LIMITS[key]
    text = str(value).strip()
    # PostgreSQL also reads 0x20 or 040 (octal) here; only plain decimals are taken.
    if not _WHOLE_NUMBER.fullmatch(text) or not low <= int(text) <= high:
        raise InvalidArgument(
            f"{where[0]} has {key} {text!r}, not a whole number from {low} to {high}: {where[1]}"
        )
    return int(text)


def _checked_graph(options: Mapping[str, object], where: tuple[str, str]) -> dict[str, int]:
    """``options`` over the schema's settings, if pgvector can build a graph with them.

    Raises:
        InvalidArgument: a value that is not a plain decimal in pgvector's range, or
            ``ef_construction`` below twice ``m``; ``where`` says whose and what to do.
    """
    graph = {
        key: _graph_int(key, options.get(key, GRAPH_DEFAULTS[key]), where) for key in GRAPH_DEFAULTS
    }
    if graph["ef_construction"] < 2 * graph["m"]:
        raise InvalidArgument(
            f"{where[0]} has ef_construction {graph['ef_construction']} and m {graph['m']}: "
            f"pgvector builds a graph only with ef_construction at least twice m (here "
            f"{2 * graph['m']}): {where[1]}"
        )
    return graph


def _graph_settings(conn: Connection, *, warn: bool = False) -> dict[str, int] | None:
    """The vector column's HNSW build settings (its options over the schema's); None: no index.

    Raises:
        InvalidArgument: options pgvector could not build a new index with.
    """
    indexes = conn.execute(statement("hnsw_index_options")).all()
    if not indexes:
        return None
    if warn and len(indexes) > 1:
        logger.warning(
            "reembed: %d HNSW indexes on the vector column (%s); the rebuild makes one, "
            "with the settings of %s",
            len(indexes),
            ", ".join(i.name for i in indexes),
            indexes[0].name,
        )
    options: dict[str, str] = {}
    for option in indexes[0].options:  # "m=16", as reloptions holds them
        key, _, value = str(option).partition("=")
        options[key] = value
    return _checked_graph(options, _index_fix(indexes[0].name))


def _ensure_index(engine: Engine) -> None:
    """(Re)build the HNSW index without blocking searches; repairs a failed build.

    The graph gets the ``m`` and ``ef_construction`` set on the dropped index (a
    DBA may have raised them for users holding many memories), else the schema's.
    """
    with engine.connect() as raw:
        conn = raw.execution_options(isolation_level="AUTOCOMMIT")
        graph = _checked_graph(_setting(conn, GRAPH_SETTING) or {}, RECORD_FIX)
        create = psycopg_sql.SQL(named("hnsw_index_create")).format(
            m=psycopg_sql.Literal(graph["m"]),
            ef_construction=psycopg_sql.Literal(graph["ef_construction"]),
        )
        # Building an index over many rows takes longer than any query should.
        conn.execute(statement("statement_timeout_off"))
        try:
            state = conn.execute(statement("hnsw_index_state")).first()
            if state is not None and not state.valid:
                conn.execute(statement("hnsw_index_drop"))
            driver = cast("psycopg.Connection[Any]", conn.connection.driver_connection)
            driver.execute(create)
        finally:
            conn.execute(statement("statement_timeout_reset"))


__all__ = ["ReembedReport", "reembed", "stderr_progress"]

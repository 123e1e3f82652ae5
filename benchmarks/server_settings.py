"""A heavy user's search under server settings that need a restart, restarted between blocks.

PostgreSQL's default ``shared_buffers`` is 128 MB, and the embedded server keeps
it. A user holding 1M memories has a 6 GB table (2 GB of it the HNSW graph): a
search then finds most of the pages it reads outside the server's buffers, in the
operating system's cache (a system call and a copy each) or on disk. This loads
``run.py``'s heavy user (``build_dataset``, one user, ``--rows`` rows from
``--pool`` pool texts, precomputed vectors, supersession off as in ``run.py``'s
bulk load) into an embedded server of its own, ``VACUUM ANALYZE``, then for each
``--config`` (the order reversed every other round, ``--rounds`` times):

* ``ALTER SYSTEM RESET ALL``, ``ALTER SYSTEM SET`` each of its settings, and a
  restart of the server (the buffers start empty; the operating system's cache
  keeps what it held);
* ``--warm`` searches, untimed, then ``--searches`` timed ones, through
  ``MemoryStore.search`` with the query vector precomputed (``run.py``'s "store"
  search), with the pages read from outside the buffers and found in them per
  search (``pg_stat_database``). Every block warms on the same queries and times
  the same others, so the settings are compared on the same questions.

``--index-after`` drops the HNSW index before the fill and builds it with
``CREATE INDEX`` after (``--maintenance-work-mem``), which fills 1M rows in a
fraction of the time; that graph is built in bulk, not insert by insert as an
agent's writes build it (``hnsw_density.py`` compares the two: similar recall).

    python benchmarks/server_settings.py --rows 1000000 --index-after \
        --config shared_buffers=128MB --config shared_buffers=4GB --rounds 2 \
        --out benchmarks/results/server_settings-1m.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql
from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import build_dataset  # noqa: E402
from benchmarks.forget_bench import percentiles  # noqa: E402
from benchmarks.systems import lookup_of, real_pool  # noqa: E402
from memory_pg.config import SupersedePolicy  # noqa: E402
from memory_pg.server import EmbeddedServer  # noqa: E402
from memory_pg.sql import lexical as sql_lexical  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

HNSW = "memory_pg_memories_embedding_hnsw_idx"
BLOCKS = text("SELECT blks_read, blks_hit FROM pg_stat_database WHERE datname = current_database()")
SIZES = text(
    "SELECT pg_total_relation_size('memory_pg_memories'), "
    "pg_relation_size(to_regclass('" + HNSW + "'))"
)


class Scratch:
    """An embedded server in a temporary folder that can be restarted."""

    def __init__(self, parent: str | None = None) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="memory-pg-settings-", dir=parent))
        os.chmod(self.home, 0o755)  # the embedded server may run as another user
        self.server: EmbeddedServer | None = None

    def start(self) -> str:
        """Start the server; returns the SQLAlchemy URL of its database."""
        self.stop()
        self.server = EmbeddedServer(self.home)
        return self.server.start()

    def stop(self) -> None:
        """Stop the server (this process is its only holder)."""
        if self.server is not None:
            self.server.stop()  # the last holder: the server stops
            self.server = None

    def restart_with(self, config: dict[str, str]) -> str:
        """Reset the server's settings, set ``config``'s, and restart; returns the URL."""
        url = self.start()
        admin = create_engine(url, isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                driver = conn.connection.driver_connection
                driver.execute("ALTER SYSTEM RESET ALL")
                for name, value in config.items():
                    # A utility statement takes no bound parameter: name and value are quoted.
                    driver.execute(
                        sql.SQL("ALTER SYSTEM SET {} = {}").format(
                            sql.Identifier(name), sql.Literal(value)
                        )
                    )
        finally:
            admin.dispose()
        self.stop()
        return self.start()

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def _fill(url: str, data: Any, lookup: Any, args: Any) -> dict[str, Any]:
    """Write the heavy user's memories, build the HNSW index after them with
    ``--index-after``, ``VACUUM ANALYZE``; returns the times and sizes."""
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    store = MemoryStore(url, embedder=lookup, auto_migrate=True)
    started = time.perf_counter()
    try:
        store.supersede = SupersedePolicy(enabled=False)  # as run.py's bulk load
        with admin.connect() as conn:
            index_sql = conn.execute(
                text("SELECT pg_get_indexdef(to_regclass('" + HNSW + "'))")
            ).scalar_one()
            if args.index_after:
                conn.execute(text("DROP INDEX " + HNSW))
        for user, ix in data.user_batches(500):
            items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
            store.add_memories(items, user_id=user)
        filled = time.perf_counter()
        with admin.connect() as conn:
            if args.index_after:
                conn.execute(
                    text("SELECT set_config('maintenance_work_mem', :m, false)"),
                    {"m": args.maintenance_work_mem},
                )
                conn.execute(text(index_sql))
            conn.execute(text("VACUUM ANALYZE memory_pg_memories"))
            table, graph = conn.execute(SIZES).one()
    finally:
        store.close()
        admin.dispose()
    return {
        "fill_s": round(filled - started, 1),
        "index_and_vacuum_s": round(time.perf_counter() - filled, 1),
        "table_mb_with_indexes": round(table / 2**20),
        "hnsw_mb": round(graph / 2**20),
    }


OTHER_BACKENDS = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


def _counts_after_exits(admin: Any) -> tuple[int, int]:
    """``pg_stat_database``'s page counts once the closed store's backends are gone.

    A backend reports its counts at most once a second, and at the latest as it
    exits: wait (up to 10 s) until no backend but this one is connected."""
    with admin.connect() as conn:
        for _ in range(100):
            if conn.execute(OTHER_BACKENDS).scalar_one() == 0:
                break
            conn.rollback()  # a new snapshot of the activity view
            time.sleep(0.1)
        read, hit = conn.execute(BLOCKS).one()
    return int(read), int(hit)


def _block(
    url: str, data: Any, lookup: Any, config: dict[str, str], names: list[str], args: Any
) -> dict:
    """Searches of the heavy user on a freshly restarted server.

    Every block warms on the same ``--warm`` queries and times the same
    ``--searches`` others, so the configs are compared on the same questions. The
    timed phase's store first runs one more warming query (its connection opened,
    its caches filled), which the page counts include. ``names``: the settings to
    report (every config's, so a setting left from an earlier block would show).
    """
    admin = create_engine(url)
    user = data.users[0]
    timed = data.query_texts[: args.searches]
    warming = data.query_texts[args.searches : args.searches + args.warm + 1]
    times: list[float] = []
    try:
        with admin.connect() as conn:
            shown = {
                name: conn.execute(text("SELECT current_setting(:n)"), {"n": name}).scalar_one()
                for name in names
            }
        store = MemoryStore(url, embedder=lookup)
        try:
            for query in warming[:-1]:
                store.search(query, 10, user_id=user)
        finally:
            store.close()
        read0, hit0 = _counts_after_exits(admin)
        store = MemoryStore(url, embedder=lookup)
        try:
            store.search(warming[-1], 10, user_id=user)
            with _FullCollections() as collections:
                for query in timed:
                    t0 = time.perf_counter()
                    store.search(query, 10, user_id=user)
                    times.append((time.perf_counter() - t0) * 1000)
        finally:
            store.close()
        read1, hit1 = _counts_after_exits(admin)
    finally:
        admin.dispose()
    counted = args.searches + 1
    return {
        "config": _label(config),
        "settings_shown": shown,
        "search_ms": percentiles(times),
        "search_mean_ms": round(float(np.mean(times)), 2),
        "searches_over_60_ms": sum(t > 60 for t in times),
        "full_gc_during": len(collections.ms),
        "full_gc_max_ms": round(max(collections.ms, default=0.0), 1),
        "pages_read_per_search": round((read1 - read0) / counted, 1),
        "pages_hit_per_search": round((hit1 - hit0) / counted, 1),
    }


class _FullCollections:
    """The durations of this process's full garbage collections while in the block."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self._start = 0.0

    def _note(self, phase: str, info: dict[str, Any]) -> None:
        """``gc.callbacks``' hook: time each generation-2 collection."""
        if info["generation"] == 2:
            if phase == "start":
                self._start = time.perf_counter()
            else:
                self.ms.append((time.perf_counter() - self._start) * 1000)

    def __enter__(self) -> _FullCollections:
        gc.callbacks.append(self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._note)


def _label(config: dict[str, str]) -> str:
    """``config`` as it was given: ``name=value,name=value``."""
    return ",".join(name + "=" + value for name, value in config.items())


def _parse_config(spec: str) -> dict[str, str]:
    """``name=value[,name=value...]`` as a dict; a malformed pair is refused."""
    config: dict[str, str] = {}
    for pair in spec.split(","):
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise argparse.ArgumentTypeError("expected name=value[,name=value...]: " + spec)
        config[name.strip()] = value.strip()
    return config


def _summary(blocks: list[dict]) -> dict[str, Any]:
    """Per config: the median of its blocks' figures."""
    out: dict[str, Any] = {}
    for label in dict.fromkeys(b["config"] for b in blocks):
        mine = [b for b in blocks if b["config"] == label]
        out[label] = {
            key: float(np.median([b["search_ms"][key] for b in mine]))
            for key in ("p50_ms", "p95_ms", "p99_ms")
        }
        out[label]["p99_ms_each_block"] = [b["search_ms"]["p99_ms"] for b in mine]
        out[label]["pages_read_per_search"] = float(
            np.median([b["pages_read_per_search"] for b in mine])
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Load, run the blocks; print, write (``--out``) and return the report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000, help="the heavy user's memories")
    p.add_argument("--pool", type=int, default=10_000, help="pool texts (as run.py)")
    p.add_argument(
        "--config",
        action="append",
        type=_parse_config,
        help="settings of one kind of block, name=value[,name=value...]; repeat for each "
        "(default: shared_buffers=128MB, then shared_buffers=4GB)",
    )
    p.add_argument("--rounds", type=int, default=2, help="passes, the configs' order reversed")
    p.add_argument("--warm", type=int, default=200, help="untimed searches after each restart")
    p.add_argument("--searches", type=int, default=400, help="timed searches per block")
    p.add_argument("--queries", type=int, default=700, help="queries drawn (warming and timed)")
    p.add_argument("--index-after", action="store_true", help="build the HNSW index after the fill")
    p.add_argument("--maintenance-work-mem", default="4GB")
    p.add_argument("--scratch-dir", help="where the server's folder goes (default: the temp dir)")
    p.add_argument(
        "--pull-window",
        type=float,
        default=sql_lexical.PULL_WINDOW,
        help="the full-text leg's PULL_WINDOW (0: no window) for the heavy user's searches "
        "after their first (default: the shipped one)",
    )
    p.add_argument("--out")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.searches < 1 or args.warm < 0:
        p.error("--searches must be at least 1 and --warm at least 0")
    if args.warm + args.searches + 1 > args.queries:
        p.error("--queries must hold --warm + --searches + 1 queries: warming and timing differ")
    configs = args.config or [{"shared_buffers": "128MB"}, {"shared_buffers": "4GB"}]

    real, texts, vectors = real_pool(args.pool)
    data = build_dataset("sb", args.rows, 1, texts, vectors, queries=args.queries)
    lookup = lookup_of(real, data)
    report: dict[str, Any] = {
        "command": "python benchmarks/server_settings.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "rows": args.rows,
        "pull_window": args.pull_window,
        "load_average_start": round(os.getloadavg()[0], 2),
    }
    names = list(dict.fromkeys(name for config in configs for name in config))
    scratch = Scratch(args.scratch_dir)
    # The data set lives in this process for the whole run: at 1M rows a full
    # collection that walked it took ~110 ms in an ad hoc run, inside whichever
    # search it fell in. Frozen, the collector leaves it alone until the run ends.
    gc.collect()
    gc.freeze()
    shipped_window = sql_lexical.PULL_WINDOW  # restored with the collector
    sql_lexical.PULL_WINDOW = args.pull_window
    try:
        report["load"] = _fill(scratch.start(), data, lookup, args)
        print(json.dumps(report["load"]), flush=True)
        blocks: list[dict] = []
        for r in range(args.rounds):
            for config in configs if r % 2 == 0 else configs[::-1]:
                url = scratch.restart_with(config)  # stops the server it held first
                blocks.append(_block(url, data, lookup, config, names, args))
                print(json.dumps(blocks[-1]), flush=True)
        report["blocks"] = blocks
        report["summary"] = _summary(blocks)
        report["load_average_end"] = round(os.getloadavg()[0], 2)
    finally:
        scratch.remove()
        gc.unfreeze()  # a caller's process (the smoke test's) collects as before
        sql_lexical.PULL_WINDOW = shipped_window
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()

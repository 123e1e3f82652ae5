"""HNSW graph settings against near-duplicate memories: recall, build and insert cost.

Issue 18 item 1 asks the vector leg for Recall@10 ≥ 0.95 against exact at 1M.
``run.py``'s 1M heavy user (``--pool 10000``) holds about 100 noisy copies of each
pool text, and its Recall@10 stays at 0.77-0.82 for any ``ef_search`` from 100 to
800 (``ef_search_sweep.py``): the graph built with ``m`` 16 and
``ef_construction`` 64 does not reach the exact top 10 among near-ties. This
measures, on a smaller table with the same number of copies per pool text, what
other graph settings give and what they cost, before any migration changes the
index:

* the data is ``run.py``'s (``build_dataset``, one user): ``--rows`` rows made from
  ``--pool`` pool texts' real vectors plus noise, queries a pool vector plus
  three times the noise; the exact top 10 by brute force;
* a bare table ``hnsw_density`` (``id``, ``embedding vector(384)``; one of that
  name in ``--database-url`` is dropped first, and the table is dropped at the end)
  filled once; for each ``M:EFC``
  in ``--settings`` the HNSW index (cosine) is built (time, size), then Recall@10,
  tie-aware as ``run.py`` counts it, and the statement's p50 for each
  ``--ef``; then ``--inserts`` more rows are inserted in batches of 100 and timed
  (the index's share is the time less the same inserts without an index, done
  first), and deleted again.

What a miss is (``same_text``, ``cosine_gap``): among near-copies the exact top 10
are the copies whose noise happens to point towards the query; a returned copy
of the same text in their place counts as a miss in Recall@10.

    python benchmarks/hnsw_density.py --rows 100000 --pool 1000 \\
        --settings 16:64,16:200,32:128 --out benchmarks/results/hnsw_density.json

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import build_dataset, exact_top_k  # noqa: E402
from benchmarks.forget_bench import hnsw_build_mb  # noqa: E402
from benchmarks.run import _recall  # noqa: E402
from memory_pg.sql.core import vector_literal  # noqa: E402

TABLE = "hnsw_density"
INDEX = "hnsw_density_embedding_idx"
INSERT_BATCH = 100


def _pool(size: int) -> tuple[list[tuple[str, str]], np.ndarray]:
    """``run.py``'s first ``size`` pool texts (a prefix of any larger pool) and vectors."""
    from benchmarks.systems import real_pool

    _, texts, vectors = real_pool(size)
    return texts, vectors


def _fill(conn: psycopg.Connection[Any], vectors: np.ndarray, first_id: int = 0) -> None:
    with conn.cursor() as cur:
        copy_stmt = sql.SQL("COPY {} (id, embedding) FROM STDIN").format(sql.Identifier(TABLE))
        with cur.copy(copy_stmt) as copy:
            for i, v in enumerate(vectors):
                copy.write_row((first_id + i, vector_literal(v)))
    conn.commit()


def _insert_seconds(conn: psycopg.Connection[Any], vectors: np.ndarray, first_id: int) -> float:
    """Insert ``vectors`` in batches of 100, each its own transaction; wall seconds."""
    stmt = sql.SQL(
        "INSERT INTO {} (id, embedding) SELECT * FROM unnest(%s::int[], CAST(%s AS vector[]))"
    ).format(sql.Identifier(TABLE))
    started = time.perf_counter()
    for lo in range(0, len(vectors), INSERT_BATCH):
        chunk = vectors[lo : lo + INSERT_BATCH]
        ids = list(range(first_id + lo, first_id + lo + len(chunk)))
        literal = "{" + ",".join('"' + vector_literal(v) + '"' for v in chunk) + "}"
        conn.execute(stmt, (ids, literal))
        conn.commit()
    return time.perf_counter() - started


def _drop_extra(conn: psycopg.Connection[Any], first_id: int) -> None:
    conn.execute(
        sql.SQL("DELETE FROM {} WHERE id >= %s").format(sql.Identifier(TABLE)), (first_id,)
    )
    conn.commit()
    conn.autocommit = True
    conn.execute(sql.SQL("VACUUM {}").format(sql.Identifier(TABLE)))
    conn.autocommit = False


def _build(conn: psycopg.Connection[Any], m: int, efc: int, rows: int) -> dict[str, Any]:
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(INDEX)))
    graph_mb = hnsw_build_mb(rows, 384)  # the whole graph in memory
    conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (str(graph_mb) + "MB",))
    started = time.perf_counter()
    conn.execute(
        sql.SQL(
            "CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = {}, ef_construction = {})"
        ).format(sql.Identifier(INDEX), sql.Identifier(TABLE), sql.Literal(m), sql.Literal(efc))
    )
    conn.commit()
    seconds = time.perf_counter() - started
    size = conn.execute("SELECT pg_relation_size(%s::regclass)", (INDEX,)).fetchone()
    conn.commit()
    return {"build_s": round(seconds, 1), "index_mb": round(size[0] / 2**20, 1) if size else None}


def _search(
    conn: psycopg.Connection[Any], queries: np.ndarray, ef: int
) -> tuple[list[list[int]], float]:
    stmt = sql.SQL("SELECT id FROM {} ORDER BY embedding <=> %s::vector LIMIT 10").format(
        sql.Identifier(TABLE)
    )
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
    found, times = [], []
    for q in queries:
        literal = vector_literal(q)
        started = time.perf_counter()
        rows = conn.execute(stmt, (literal,)).fetchall()
        times.append((time.perf_counter() - started) * 1000)
        found.append([r[0] for r in rows])
    conn.commit()
    return found, round(statistics.median(times), 2)


def _what_a_miss_is(
    found: list[list[int]], exact: list[list[int]], data: Any, ef: int
) -> dict[str, float]:
    """How far the returned top 10 is from the exact one, as a reader would see it.

    ``same_text``: the share of returned rows that are copies of a pool text among
    the exact top 10's (``run.py`` numbers each copy: ``"<pool text> #<row>"``).
    ``cosine_gap``: the exact top 10's mean cosine less the returned rows' mean.
    """

    def base(row: int) -> str:
        return str(data.texts[row]).rsplit(" #", 1)[0]

    same = total = 0
    gaps = []
    for f, e, qv in zip(found, exact, data.query_vectors, strict=True):
        wanted = {base(r) for r in e}
        same += sum(1 for r in f if base(r) in wanted)
        total += len(f)
        gaps.append(float(np.mean(data.vectors[e] @ qv)) - float(np.mean(data.vectors[f] @ qv)))
    return {
        f"same_text_ef{ef}": round(same / total, 4) if total else 0.0,
        f"cosine_gap_ef{ef}": round(statistics.fmean(gaps), 5),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure every ``--settings`` pair; print, write (``--out``) and return the report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--pool", type=int, default=1000, help="pool texts (rows / pool copies each)")
    p.add_argument("--settings", default="16:64,16:200,32:128", help="m:ef_construction,...")
    p.add_argument("--ef", default="100,400")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--inserts", type=int, default=2000)
    p.add_argument("--database-url", help="a database it may fill (libpq or SQLAlchemy URL)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = [tuple(int(x) for x in s.split(":")) for s in args.settings.split(",")]
    efs = [int(x) for x in args.ef.split(",")]

    texts, vectors = _pool(args.pool)
    data = build_dataset("density", args.rows, 1, texts, vectors, queries=args.queries)
    exact = exact_top_k(data, 10)
    extra = build_dataset(
        "density-extra", args.rows + args.inserts, 1, texts, vectors, queries=1, seed=12
    ).vectors[args.rows :]

    scratch, server = "", None
    url = args.database_url
    if url is None:
        from memory_pg.server import EmbeddedServer

        scratch = tempfile.mkdtemp(prefix="memory-pg-density-")
        server = EmbeddedServer(Path(scratch))
        url = server.start()
    url = url.replace("postgresql+psycopg://", "postgresql://", 1)  # SQLAlchemy's form too
    report: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "rows": args.rows,
        "pool": args.pool,
        "copies_per_pool_text": round(args.rows / args.pool, 1),
        "queries": args.queries,
        "inserts": args.inserts,
        "load_average_start": round(os.getloadavg()[0], 2),
        "settings": [],
    }
    try:
        with psycopg.connect(url) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(TABLE)))
            conn.execute(
                sql.SQL("CREATE TABLE {} (id int PRIMARY KEY, embedding vector(384))").format(
                    sql.Identifier(TABLE)
                )
            )
            conn.commit()
            _fill(conn, data.vectors)
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(TABLE)))
            conn.commit()
            bare = _insert_seconds(conn, extra, args.rows)
            _drop_extra(conn, args.rows)
            report["insert_ms_per_row_no_index"] = round(bare * 1000 / args.inserts, 3)
            for m, efc in settings:
                row: dict[str, Any] = {"m": m, "ef_construction": efc}
                row.update(_build(conn, m, efc, args.rows))
                for ef in efs:
                    found, p50 = _search(conn, data.query_vectors, ef)
                    row[f"recall@10_ef{ef}"] = _recall(found, exact, data)
                    row.update(_what_a_miss_is(found, exact, data, ef))
                    row[f"search_p50_ms_ef{ef}"] = p50
                secs = _insert_seconds(conn, extra, args.rows)
                _drop_extra(conn, args.rows)
                row["insert_ms_per_row"] = round(secs * 1000 / args.inserts, 3)
                row["index_ms_per_row"] = round((secs - bare) * 1000 / args.inserts, 3)
                report["settings"].append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        if server is None:  # a database of the caller's: leave no table behind
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(TABLE)))
        else:
            server.stop()
            shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()

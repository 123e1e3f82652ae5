"""Benchmark: the maintenance jobs beside search traffic (issue 18 item 5).

``--clients`` threads (default 8) search without pause through one shared
:class:`~memory_pg.store.MemoryStore` (its public ``search``: the one-exchange
pipelined statement, top 5, use recorded), each over its own users (client i
searches users i, i + N, ...) with its own order of 64 query texts. Every query
vector is embedded once before the run and then comes from the store's cache of
recent query vectors, so what a search costs here is the database's work and
the client's, not the model's.

For each job, search latency is measured idle for ``--idle-s`` seconds, then while
the job runs as cron runs it: ``python -m memory_pg forget|consolidate|reembed
--json`` in a process of its own. A search counts as *during* the job when it
started within the job's own ``duration_s`` before the process exited; searches
while the process was starting (imports, model load) are reported apart.

Data (``forget_bench.load``: random unit vectors made in the database, 384-d):

* ``forget`` and ``consolidate`` share one table of ``--rows`` memories over
  ``--users`` users, ``--rows / 10`` of them stale (100 days old, importance 0.1,
  never retrieved), plus ``--clusters`` clusters of ``--cluster-size``
  near-duplicate fragments (one user each; vectors a shared random direction plus
  noise 0.3, cosine ~0.92; texts that differ in one word, word overlap ~0.8):
  what ``consolidate`` merges. It examines every current memory of every user.
* ``reembed`` runs with the real bundled model (all-MiniLM-L6-v2, the store's
  default backend), which costs ~4-8 ms of CPU per text on 2 cores, so it gets a
  table of its own, ``--reembed-rows`` memories (default 5000), loaded after the
  other two jobs; its idle baseline is measured on that table.

Writes the JSON report to ``--out`` (and prints it). Example::

    python benchmarks/jobs_traffic.py --rows 100000 \\
        --out benchmarks/results/jobs_traffic-2026-12-03.json

Runs on the embedded server in a temporary folder, or on ``--database-url`` (a
database it may fill and empty).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from sqlalchemy import Engine, create_engine, text  # noqa: E402

from benchmarks.forget_bench import load, percentiles  # noqa: E402
from memory_pg import schema  # noqa: E402
from memory_pg.config import BUNDLED_EMBEDDING_MODEL, ConsolidatePolicy  # noqa: E402
from memory_pg.server import EmbeddedServer  # noqa: E402
from memory_pg.sql import setup  # noqa: E402
from memory_pg.sql.core import vector_literal  # noqa: E402

DIM = 384  # the bundled model's: reembed and the query vectors use it

TRUNCATE = text(
    "TRUNCATE memory_pg_memories, memory_pg_history, memory_pg_memory_entities, "
    "memory_pg_memory_links, memory_pg_entities"
)

INSERT_FRAGMENTS = text(
    """
    INSERT INTO memory_pg_memories (
        user_id, memory_type, text, embedding, embedding_model, search_tsv, content_hash,
        importance, created_at, updated_at, valid_from, event_time)
    SELECT x.u, 'dialogue', x.t, CAST(x.v AS vector), 'bench', to_tsvector('simple', x.t),
           md5(x.t), 0.5, now() - interval '1 day', now(), now(), now()
      FROM unnest(CAST(:users AS text[]), CAST(:texts AS text[]), CAST(:vecs AS text[]))
           AS x(u, t, v)
    """
)

COUNT_EXAMINED = text(
    "SELECT count(*) FROM memory_pg_memories "
    "WHERE superseded_at IS NULL AND memory_type = ANY(CAST(:types AS text[]))"
)

THINGS = (
    "blue notebook",
    "garden key",
    "red bicycle",
    "old camera",
    "piano score",
    "travel mug",
    "spare laptop",
    "winter coat",
)
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def fragments(
    clusters: int, size: int, users: int, seed: int
) -> tuple[list[str], list[str], list[str]]:
    """Users, texts and vectors (text form) of ``clusters`` groups of near-duplicates."""
    rng = np.random.default_rng(seed)
    out_users: list[str] = []
    texts: list[str] = []
    vecs: list[str] = []
    for c in range(clusters):
        base = rng.standard_normal(DIM)
        thing = THINGS[c % len(THINGS)]
        for k in range(size):
            out_users.append("user" + str(c % users))
            texts.append(
                f"Cluster {c} note: the user keeps the {thing} for project {c}. "
                f"Said {NUMBER_WORDS[k % len(NUMBER_WORDS)]} times."
            )
            vector = base + 0.3 * rng.standard_normal(DIM)
            vecs.append(vector_literal(vector / np.linalg.norm(vector)))  # unit, as a model's
    return out_users, texts, vecs


def insert_fragments(engine: Engine, clusters: int, size: int, users: int) -> None:
    """Add the near-duplicate clusters that ``consolidate`` merges."""
    all_users, texts, vecs = fragments(clusters, size, users, seed=7)
    step = 2000
    for lo in range(0, len(texts), step):
        with engine.begin() as conn:
            conn.execute(
                INSERT_FRAGMENTS,
                {
                    "users": all_users[lo : lo + step],
                    "texts": texts[lo : lo + step],
                    "vecs": vecs[lo : lo + step],
                },
            )
    with engine.begin() as conn:
        conn.execute(text("ANALYZE memory_pg_memories"))


def queries() -> list[str]:
    """The 64 query texts the clients draw from (their vectors are cached)."""
    return [
        f"synthetic memory number {k}" if k % 2 else f"where is the {THINGS[k % len(THINGS)]}"
        for k in range(64)
    ]


class Traffic:
    """``clients`` threads searching through ``store`` until :meth:`stop`."""

    def __init__(self, store: Any, clients: int, users: int) -> None:
        self.store = store
        self.samples: list[tuple[float, float]] = []  # (monotonic start, ms)
        self.errors: Counter[str] = Counter()
        self.messages: dict[str, str] = {}
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        texts = queries()
        self._threads = [
            threading.Thread(target=self._client, args=(i, clients, users, texts), daemon=True)
            for i in range(clients)
        ]
        self._threads.append(threading.Thread(target=self._sample_load, daemon=True))

    def start(self) -> Traffic:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _client(self, i: int, clients: int, users: int, texts: list[str]) -> None:
        rng = np.random.default_rng(1000 + i)
        mine = [f"user{u}" for u in range(i, users, clients)] or ["user0"]
        while not self._stop.is_set():
            user = mine[int(rng.integers(len(mine)))]
            query = texts[int(rng.integers(len(texts)))]
            started = time.monotonic()
            try:
                self.store.search(query, top_k=5, user_id=user)
            except Exception as exc:  # counted and reported, the traffic goes on
                with self._lock:
                    self.errors[type(exc).__name__] += 1
                    self.messages.setdefault(type(exc).__name__, str(exc)[:300])
                continue
            took = (time.monotonic() - started) * 1000
            with self._lock:
                self.samples.append((started, took))

    def _sample_load(self) -> None:
        while not self._stop.wait(1.0):
            self.loads.append(os.getloadavg()[0])

    def between(self, lo: float, hi: float) -> list[float]:
        """Latencies (ms) of the searches that started in [lo, hi)."""
        return [ms for t, ms in self.samples if lo <= t < hi]


def summary(values: list[float]) -> dict[str, float]:
    """p50 / p95 / p99 and the count; just the count when there is nothing."""
    return percentiles(values) if values else {"n": 0}


def load_stats(loads: list[float]) -> dict[str, float | None]:
    """The 1-minute load average sampled each second: mean and max."""
    if not loads:
        return {"mean": None, "max": None}
    return {"mean": round(sum(loads) / len(loads), 2), "max": round(max(loads), 2)}


def say(message: str) -> None:
    """A progress line on stderr."""
    print(time.strftime("%H:%M:%S"), "jobs_traffic:", message, file=sys.stderr, flush=True)


def run_job(
    store: Any, url: str, job: list[str], clients: int, users: int, idle_s: float
) -> dict[str, Any]:
    """Idle searches, then the same searches while ``memory-pg JOB --json`` runs."""
    say(f"{job[0]}: {clients} clients searching, idle for {idle_s:g} s")
    idle = Traffic(store, clients, users).start()
    time.sleep(idle_s)
    idle.stop()

    env = dict(os.environ, MEMORY_PG_DATABASE_URL=url, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "memory_pg", *job, "--json"]
    say(f"{job[0]}: running {' '.join(command[1:])}")
    busy = Traffic(store, clients, users).start()
    began = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    ended = time.monotonic()
    time.sleep(0.5)  # searches that started just before the exit have ended
    busy.stop()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(job)} failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    say(f"{job[0]}: done in {ended - began:.1f} s")
    job_s = float(report["duration_s"])
    idle_pct = summary([ms for _, ms in idle.samples])
    during = summary(busy.between(ended - job_s, ended))
    out: dict[str, Any] = {
        "command": "memory-pg " + " ".join(job) + " --json",
        "report": report,
        "duration_s": job_s,
        "process_wall_s": round(ended - began, 2),
        "search_idle": idle_pct,
        "search_during": during,
        "search_during_process_start": summary(busy.between(began, ended - job_s)),
        "searches_per_s_idle": round(idle_pct["n"] / idle_s, 1),
        "searches_per_s_during": round(during["n"] / max(job_s, 1e-9), 1),
        "errors_idle": dict(idle.errors),
        "errors_during": dict(busy.errors),
        "error_messages": {**idle.messages, **busy.messages},
        "load_average_idle": load_stats(idle.loads),
        "load_average_during": load_stats(busy.loads),
    }
    if during["n"] and idle_pct["n"]:
        out["p50_ratio"] = round(during["p50_ms"] / idle_pct["p50_ms"], 2)
        out["p95_ratio"] = round(during["p95_ms"] / idle_pct["p95_ms"], 2)
    return out


def fresh_table(engine: Engine) -> None:
    """Empty the tables and record the bundled model, as a database written by it does."""
    with engine.begin() as conn:
        conn.execute(TRUNCATE)
        conn.execute(
            setup.write_setting(
                setup.EMBEDDING_SETTING, {"model": BUNDLED_EMBEDDING_MODEL, "dimension": DIM}
            )
        )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; returns (and writes, and prints) its JSON report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--cluster-size", type=int, default=3)
    parser.add_argument("--reembed-rows", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--forget-batch-size", type=int, default=1000)
    parser.add_argument("--reembed-batch-size", type=int, default=256)
    parser.add_argument("--jobs", default="forget,consolidate,reembed")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--out", default=None, help="write the JSON report here too")
    args = parser.parse_args(argv)
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]

    server = None
    tmp = None
    url = args.database_url
    if url is None:
        tmp = tempfile.mkdtemp(prefix="memory-pg-jobs-")
        server = EmbeddedServer(Path(tmp))
        url = server.start()
    engine = create_engine(url, pool_size=2)
    store: Any = None
    started = time.monotonic()
    result: dict[str, Any] = {
        "argv": sys.argv[1:] if argv is None else argv,
        "rows": args.rows,
        "stale_rows": args.rows // 10,
        "users": args.users,
        "fragments": args.clusters * args.cluster_size,
        "clusters": args.clusters,
        "reembed_rows": args.reembed_rows,
        "dim": DIM,
        "clients": args.clients,
        "search_via": "MemoryStore.search (one shared store, top_k 5, query vectors cached)",
        "jobs_via": "python -m memory_pg JOB --json, a process of its own",
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "jobs": {},
    }
    try:
        schema.upgrade(engine, embedding_dim=DIM)
        from memory_pg.embedding import get_embedder
        from memory_pg.store import MemoryStore

        embedder = get_embedder(BUNDLED_EMBEDDING_MODEL)
        store = MemoryStore(url, embedder=embedder)
        for query in queries():  # each client's vectors come from the cache
            embedder.embed_query(query)

        if {"forget", "consolidate"} & set(jobs):
            fresh_table(engine)
            say(f"loading {args.rows} rows and {args.clusters} clusters")
            t0 = time.monotonic()
            load(engine, args.rows, args.rows // 10, args.users, DIM)
            insert_fragments(engine, args.clusters, args.cluster_size, args.users)
            result["load_and_index_s"] = round(time.monotonic() - t0, 1)
        if "forget" in jobs:
            entry = run_job(
                store,
                url,
                ["forget", "--batch-size", str(args.forget_batch_size)],
                args.clients,
                args.users,
                args.idle_s,
            )
            entry["rows"] = args.rows + args.clusters * args.cluster_size
            entry["rows_per_s"] = round(entry["report"]["deleted"] / max(entry["duration_s"], 1e-9))
            entry["rows_per_s_means"] = "memories deleted per second"
            result["jobs"]["forget"] = entry
        if "consolidate" in jobs:
            with engine.begin() as conn:
                types = list(ConsolidatePolicy().memory_types)
                examined = int(conn.execute(COUNT_EXAMINED, {"types": types}).scalar() or 0)
            entry = run_job(
                store, url, ["consolidate", "--offline"], args.clients, args.users, args.idle_s
            )
            entry["rows"] = examined
            entry["rows_per_s"] = round(examined / max(entry["duration_s"], 1e-9))
            entry["rows_per_s_means"] = "current memories examined per second"
            entry["fragments_merged_per_s"] = round(
                entry["report"]["merged"] / max(entry["duration_s"], 1e-9), 1
            )
            entry["report"]["summaries"] = len(entry["report"]["summaries"])  # ids: a count
            result["jobs"]["consolidate"] = entry
        if "reembed" in jobs:
            fresh_table(engine)
            say(f"loading {args.reembed_rows} rows for reembed")
            t0 = time.monotonic()
            load(engine, args.reembed_rows, 0, args.users, DIM)
            result["reembed_load_and_index_s"] = round(time.monotonic() - t0, 1)
            entry = run_job(
                store,
                url,
                [
                    "reembed",
                    "--model",
                    BUNDLED_EMBEDDING_MODEL,
                    "--batch-size",
                    str(args.reembed_batch_size),
                ],
                args.clients,
                args.users,
                args.idle_s,
            )
            entry["rows"] = args.reembed_rows
            entry["rows_per_s"] = round(
                entry["report"]["reembedded"] / max(entry["duration_s"], 1e-9), 1
            )
            entry["rows_per_s_means"] = "memories re-embedded per second, the HNSW rebuild included"
            result["jobs"]["reembed"] = entry
        result["total_s"] = round(time.monotonic() - started, 1)
    finally:
        if store is not None:
            store.close()
        engine.dispose()
        if server is not None:
            server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()

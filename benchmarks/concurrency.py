"""Many callers at once through one MemoryStore: throughput and latency from 1 to 32 threads.

At each level N, ``N * 6 // 16`` threads write (``add_memories`` of 2 memories)
and the rest search (``search``, top 10), for ``--duration`` seconds, over
``--users`` users seeded with ``--seed`` memories each; at 16 callers that is 6
writers and 10 searchers. Every query is a new text (three words drawn from a
list), so each search embeds its query: the cache of recent queries does not
help. Afterwards every acknowledged write is looked up: ``lost_writes`` must be 0.

    python benchmarks/concurrency.py                          # 1..32, 10 s a level
    python benchmarks/concurrency.py --levels 16 --backend torch --duration 20
    python benchmarks/concurrency.py --open 60:20,100:30 --workers 16   # open loop
    python benchmarks/concurrency.py --levels 16 --duration 30 --eraser --forget-at 15

``--queries N``: searches ask N fixed questions, embedded once before the run (the
query cache answers), so a search waits on PostgreSQL alone, as an application's
repeated questions do: the mix in which fast searches kept the pool from writers.
``--eraser``: one more thread beside the N callers writes 3 memories to a user of
its own and erases that user (``clear_user_memory``), again and again; its calls
are ``erases`` in the report (a write's acknowledgement is checked as usual, an
erased user's are not). ``--forget-at S``: the ``forget`` job (default policy)
runs once, S seconds into each level, on the store's engine. Together with
``--levels 16`` this is the mix of issue 38: 6 writers, 10 searchers, an eraser
and a forget job on one store with the default pool.

``--open S:W,...``: an open loop instead. Searches and writes arrive at S and W per
second (Poisson arrivals, each its own user and text as above), whether or not the
earlier ones have finished, and ``--workers`` threads serve them. A call's latency
runs from its arrival, so time spent waiting for a free worker counts (no
coordinated omission); how late the dispatcher handed calls over is reported apart
(``dispatch_lag_ms``). Levels share one store: later levels search users that hold
the earlier levels' writes. In the closed loop, callers never pause, so a search's p50
is about searchers / throughput whatever the machine; the open loop shows the
latency at a given load.

Not a test: a measurement; the machine's load average is in the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WORDS = (
    "database deploy tea payments search tests frontend billing coffee berlin paris "
    "meeting friday budget invoice sister dog garden holiday flight hotel doctor "
    "project deadline review release bug customer contract salary gym piano novel "
    "recipe pasta allergy birthday wedding school exam python postgres kafka redis "
    "cloud laptop phone camera bicycle train weekend morning evening plan idea"
).split()


def pct(values: list[float], q: float) -> float | None:
    """The q-quantile in milliseconds, one decimal (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


#: ``--queries N``: searches draw from N fixed texts (the query cache answers), not new ones.
QUERY_POOL: list[str] = []


def call_texts(rng: random.Random, writing: bool) -> list[str]:
    """A write's 2 new texts, or a search's new query (so the query cache never helps)."""
    if writing:
        return [
            " ".join(rng.choice(WORDS) for _ in range(8)) + f" #{rng.random():.6f}"
            for _ in range(2)
        ]
    if QUERY_POOL:
        return [rng.choice(QUERY_POOL)]
    return [" ".join(rng.choice(WORDS) for _ in range(3)) + f" {rng.randrange(10**6)}"]


class Tally:
    """Calls made by many threads: their latencies, errors and acknowledged writes."""

    def __init__(self) -> None:
        self.search_s: list[float] = []
        self.write_s: list[float] = []
        self.erase_s: list[float] = []
        self.errors: Counter[str] = Counter()
        self.messages: dict[str, str] = {}
        self.acked: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def call(self, store: Any, writing: bool, user: str, texts: list[str], since: float) -> None:
        """Make one call; its latency runs from ``since``. An error is counted, not raised."""
        try:
            if writing:
                ids = store.add_memories(texts, user_id=user)
            else:
                store.search(texts[0], user_id=user, top_k=10)
            took = time.perf_counter() - since
            with self._lock:
                (self.write_s if writing else self.search_s).append(took)
                if writing:
                    self.acked.extend((user, mid) for mid in ids)
        except Exception as exc:  # counted, not raised: the run goes on
            with self._lock:
                self.errors[type(exc).__name__] += 1
                self.messages.setdefault(type(exc).__name__, str(exc)[:300])

    def summary(self, store: Any, wall: float, cpu: float) -> dict[str, Any]:
        """Throughput, latency quantiles, client CPU per call, errors and lost writes."""
        calls = len(self.search_s) + len(self.write_s)
        quantiles = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
        return {
            "wall_s": round(wall, 1),
            "searches_per_s": round(len(self.search_s) / wall, 1),
            "writes_per_s": round(len(self.write_s) / wall, 1),
            "search_ms": {q: pct(self.search_s, v) for q, v in quantiles},
            "write_ms": {q: pct(self.write_s, v) for q, v in quantiles},
            **(
                {
                    "erases": len(self.erase_s),
                    "erase_ms": {q: pct(self.erase_s, v) for q, v in quantiles},
                }
                if self.erase_s
                else {}
            ),
            # This process's CPU (model, driver, Python; not PostgreSQL's): unlike
            # wall time, it does not grow with the machine's load.
            "client_cpu_ms_per_call": round(1000 * cpu / max(calls, 1), 1),
            "errors": dict(self.errors),
            "error_messages": self.messages,
            "acknowledged_writes": len(self.acked),
            "lost_writes": sum(1 for u, mid in self.acked if store.get(mid, user_id=u) is None),
            "load_average": os.getloadavg()[0],
        }

    def erase(self, store: Any, user: str, rng: random.Random) -> None:
        """Write 3 memories to ``user``, then erase the user; an error is counted."""
        since = time.perf_counter()
        try:
            store.add_memories(call_texts(rng, True) + call_texts(rng, True)[:1], user_id=user)
            store.clear_user_memory(user)
            with self._lock:
                self.erase_s.append(time.perf_counter() - since)
        except Exception as exc:  # counted, not raised: the run goes on
            with self._lock:
                self.errors["erase " + type(exc).__name__] += 1
                self.messages.setdefault("erase " + type(exc).__name__, str(exc)[:300])


def run_level(
    store: Any,
    users: list[str],
    n: int,
    seconds: float,
    seed: int,
    eraser: bool = False,
    forget_at: float | None = None,
) -> dict[str, Any]:
    """N callers for ``seconds`` (and the eraser, the forget job); latencies, throughput,
    errors, acknowledged ids."""
    writers = n * 6 // 16
    stop = time.perf_counter() + seconds
    tally = Tally()
    forget_report: dict[str, Any] = {}

    def erasing() -> None:
        rng = random.Random(seed * 1000 + 999)
        while time.perf_counter() < stop:
            tally.erase(store, f"erased-{seed}", rng)

    def forgetting() -> None:
        from memory_pg.jobs.forget import forget

        assert forget_at is not None
        time.sleep(forget_at)
        started = time.perf_counter()
        try:
            report = forget(store.engine)
            forget_report.update(deleted=report.deleted, skipped=report.skipped)
        except Exception as exc:  # reported, not raised
            forget_report.update(error=f"{type(exc).__name__}: {str(exc)[:300]}")
        forget_report["s"] = round(time.perf_counter() - started, 2)

    def caller(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        writing = i < writers
        while time.perf_counter() < stop:
            user = rng.choice(users)
            texts = call_texts(rng, writing)
            tally.call(store, writing, user, texts, time.perf_counter())

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(n)]
    if eraser:
        threads.append(threading.Thread(target=erasing))
    if forget_at is not None:
        threads.append(threading.Thread(target=forgetting))
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    return {
        "callers": n,
        "writers": writers,
        "searchers": n - writers,
        **tally.summary(store, wall, cpu),
        **({"forget": forget_report} if forget_at is not None else {}),
    }


def run_open(
    store: Any,
    users: list[str],
    searches: float,
    writes: float,
    workers: int,
    seconds: float,
    seed: int = 0,
) -> dict[str, Any]:
    """Poisson arrivals of searches and writes for ``seconds``, served by ``workers``."""
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(seed * 1_000_003 + int(searches * 1000 + writes))
    arrivals: list[tuple[float, bool]] = []
    for rate, writing in ((searches, False), (writes, True)):
        t = 0.0
        while rate > 0:
            t += rng.expovariate(rate)
            if t >= seconds:
                break
            arrivals.append((t, writing))
    arrivals.sort()
    tally = Tally()
    # How late the dispatcher handed each arrival over (it shares the cores): that
    # lateness is inside the latencies, and reported apart.
    lag: list[float] = []
    cpu0 = time.process_time()
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for at, writing in arrivals:
            due = start + at
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            lag.append(max(0.0, time.perf_counter() - due))
            texts = call_texts(rng, writing)
            # Latency from the arrival: waiting for a free worker counts.
            pool.submit(tally.call, store, writing, rng.choice(users), texts, due)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    return {
        "offered_searches_per_s": searches,
        "offered_writes_per_s": writes,
        "arrived_searches": sum(1 for _, writing in arrivals if not writing),
        "arrived_writes": sum(1 for _, writing in arrivals if writing),
        "served_searches": len(tally.search_s),
        "served_writes": len(tally.write_s),
        "dispatch_lag_ms": {"p50": pct(lag, 0.5), "p99": pct(lag, 0.99), "max": pct(lag, 1.0)},
        "workers": workers,
        **tally.summary(store, wall, cpu),
    }


def main(argv: list[str] | None = None) -> int:
    """Seed the users, run each level, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", default="1,2,4,8,16,32")
    p.add_argument("--duration", type=float, default=10.0, help="seconds per level")
    p.add_argument("--users", type=int, default=20)
    p.add_argument("--seed", type=int, default=20, help="memories per user before the run")
    p.add_argument("--backend", default="auto", help="embedding backend: auto, onnx, torch")
    p.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads per call")
    p.add_argument(
        "--open",
        default=None,
        help="open loop: comma list of SEARCHES:WRITES offered per second (replaces --levels)",
    )
    p.add_argument("--workers", type=int, default=16, help="threads serving the open loop")
    p.add_argument(
        "--queries",
        type=int,
        default=0,
        help="searches draw from this many fixed texts (embedded once: searches that wait "
        "on PostgreSQL only, as an application's repeated questions); 0: every query new",
    )
    p.add_argument("--eraser", action="store_true", help="one more thread writes and erases a user")
    p.add_argument(
        "--forget-at", type=float, default=None, help="run the forget job this many seconds in"
    )
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "concurrency.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from memory_pg.embedding import get_embedder
    from memory_pg.store import MemoryStore

    embedder: Any = get_embedder("all-MiniLM-L6-v2", backend=args.backend)
    if args.threads:
        from memory_pg.onnx_embedding import OnnxEmbedder

        embedder = OnnxEmbedder(threads=args.threads)
    embedder.embed_query("warm-up")
    qrng = random.Random(1)
    QUERY_POOL[:] = [" ".join(qrng.choice(WORDS) for _ in range(3)) for _ in range(args.queries)]
    for query in QUERY_POOL:
        embedder.embed_query(query)
    home = tempfile.mkdtemp(prefix="memory-pg-concurrency-")
    store = MemoryStore(home=home, embedder=embedder)
    rng = random.Random(0)
    users = [f"user-{i}" for i in range(args.users)]
    levels: list[dict[str, Any]] = []
    try:
        for user in users:
            store.add_memories(
                [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(args.seed)],
                user_id=user,
            )
        if args.open:
            for i, pair in enumerate(args.open.split(",")):
                searches, writes = (float(x) for x in pair.split(":"))
                level = run_open(
                    store, users, searches, writes, args.workers, args.duration, seed=i
                )
                levels.append(level)
                print(json.dumps(level), flush=True)
        for n in (int(x) for x in args.levels.split(",")) if not args.open else ():
            level = run_level(
                store, users, n, args.duration, seed=n, eraser=args.eraser, forget_at=args.forget_at
            )
            levels.append(level)
            print(json.dumps(level), flush=True)
    finally:
        store.close()
        shutil.rmtree(home, ignore_errors=True)  # the embedded server's files
    report = {
        "benchmark": "concurrent callers through one MemoryStore (threads)"
        + (", open loop" if args.open else ""),
        "command": "python benchmarks/concurrency.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "embedder": type(embedder).__name__,
        "query_precision": getattr(embedder, "query_precision", None),
        "onnx_threads": getattr(embedder, "threads", None),
        "levels": levels,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

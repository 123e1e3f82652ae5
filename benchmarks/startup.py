"""Start-up cost: commands that do not embed, and a fresh Hermes process's first recall.

Run: ``python benchmarks/startup.py [--runs 3] [--json out.json]``

Everything happens in new processes on an embedded PostgreSQL in a temporary
``MEMORY_PG_HOME`` (each command starts and stops the server, as a cron line
would), with the bundled model. One memory is stored first ("We decided to use
PostgreSQL as the database"); then:

- **commands**: wall time of ``python -m memory_pg COMMAND`` (median of ``--runs``),
  and whether the process imported torch or sentence-transformers (one extra run
  under ``python -X importtime``);
- **hermes**: a new Python process builds Hermes' own ``MemoryManager`` with the
  provider (``hermes-agent`` must be installed), calls ``initialize_all`` and then
  ``prefetch_all("Which database did we decide to use?")`` at once, with Hermes'
  real 8 s prefetch budget. It reports the time of ``initialize_all``, of that
  first prefetch and whether it held the memory, and the time from initialize to
  the first prefetch that held it (prefetching again every 0.5 s until one does).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

USER = "startup-bench"
MEMORY = "We decided to use PostgreSQL as the database"
QUERY = "Which database did we decide to use?"
HEAVY = ("torch", "sentence_transformers")

COMMANDS: dict[str, list[str]] = {
    "migrate": ["migrate"],
    "healthcheck": ["healthcheck"],
    "stats": ["stats"],
    "history": ["history", "--user", USER],
    "forget": ["forget", "--dry-run"],
    "erase": ["erase", "--user", "someone-else", "--yes"],
}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_PG_", "OPENAI_"))}
    env.pop("DATABASE_URL", None)
    env.update(MEMORY_PG_HOME=str(home), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def _run(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed, done


def imported_heavy(importtime_stderr: str) -> list[str]:
    """The heavy top-level packages named in ``-X importtime`` output."""
    found = set()
    for line in importtime_stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        name = line.rsplit("|", 1)[-1].strip()
        top = name.split(".", 1)[0]
        if top in HEAVY:
            found.add(top)
    return sorted(found)


def measure_commands(python: str, env: dict[str, str], runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, argv in COMMANDS.items():
        times = [_run([python, "-m", "memory_pg", *argv], env)[0] for _ in range(runs)]
        _, traced = _run([python, "-X", "importtime", "-m", "memory_pg", *argv], env)
        results[name] = {
            "median_s": round(statistics.median(times), 2),
            "runs_s": [round(t, 2) for t in times],
            "imports": imported_heavy(traced.stderr),
        }
    # The first command on a new embedded home creates and sizes the database.
    with tempfile.TemporaryDirectory(prefix="memory-pg-startup-new-") as tmp:
        times, heavy = [], set()
        for i in range(runs + 1):
            new_home = {**env, "MEMORY_PG_HOME": str(Path(tmp) / f"home{i}")}
            trace = ["-X", "importtime"] if i == runs else []
            elapsed, done = _run([python, *trace, "-m", "memory_pg", "healthcheck"], new_home)
            if trace:
                heavy.update(imported_heavy(done.stderr))
            else:
                times.append(elapsed)
        results["healthcheck (new home)"] = {
            "median_s": round(statistics.median(times), 2),
            "runs_s": [round(t, 2) for t in times],
            "imports": sorted(heavy),
        }
    return results


def hermes_child() -> None:
    """In a new process: initialize through Hermes' MemoryManager, then prefetch at once."""
    t0 = time.perf_counter()
    from agent.memory_manager import MemoryManager

    from memory_pg.integrations.hermes import MemoryPgProvider

    t_import = time.perf_counter()
    manager = MemoryManager()
    manager.add_provider(MemoryPgProvider())
    manager.initialize_all("bench-session", platform="cli", user_id=USER)
    t_init = time.perf_counter()
    first = manager.prefetch_all(QUERY)
    t_first = time.perf_counter()
    found_at = t_first if "PostgreSQL" in first else None
    while found_at is None and time.perf_counter() - t_init < 120:
        time.sleep(0.5)
        if "PostgreSQL" in manager.prefetch_all(QUERY):
            found_at = time.perf_counter()
    manager.shutdown_all()
    print(
        json.dumps(
            {
                "import_s": round(t_import - t0, 2),
                "initialize_s": round(t_init - t_import, 2),
                "first_prefetch_s": round(t_first - t_init, 2),
                "first_prefetch_has_memory": "PostgreSQL" in first,
                "initialize_to_recall_s": None
                if found_at is None
                else round(found_at - t_import, 2),
            }
        )
    )


def measure_hermes(python: str, env: dict[str, str], runs: int) -> dict[str, Any]:
    rows = []
    for _ in range(runs):
        _, done = _run([python, __file__, "--hermes-child"], env)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    keys = ("import_s", "initialize_s", "first_prefetch_s", "initialize_to_recall_s")
    summary: dict[str, Any] = {
        k: statistics.median([r[k] for r in rows if r[k] is not None] or [float("nan")])
        for k in keys
    }
    summary["first_prefetch_had_memory"] = f"{sum(r['first_prefetch_has_memory'] for r in rows)}"
    summary["first_prefetch_had_memory"] += f"/{len(rows)}"
    summary["runs"] = rows
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--skip-hermes", action="store_true")
    parser.add_argument("--hermes-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hermes_child:
        hermes_child()
        return
    with tempfile.TemporaryDirectory(prefix="memory-pg-startup-") as tmp:
        env = _env(Path(tmp) / "home")
        add = ["add", MEMORY, "--user", USER, "--type", "key_decision"]
        _run([args.python, "-m", "memory_pg", *add], env)
        results: dict[str, Any] = {
            "python": args.python,
            "load": os.getloadavg(),
            "commands": measure_commands(args.python, env, args.runs),
        }
        if not args.skip_hermes:
            results["hermes"] = measure_hermes(args.python, env, args.runs)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""docker-compose.yml, the Dockerfile and CI: what can be checked without Docker."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from memory_pg.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_runs_pgvector_a_one_shot_migration_and_the_jobs():
    services = compose()["services"]
    assert services["db"]["image"].startswith("pgvector/pgvector:pg")
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert services["migrate"]["command"] == ["migrate"]
    assert services["migrate"]["restart"] == "no"
    jobs = " ".join(services["jobs"]["command"])
    assert "memory-pg forget --json" in jobs and "memory-pg consolidate --json" in jobs
    assert services["jobs"]["depends_on"]["migrate"]["condition"] == (
        "service_completed_successfully"
    )
    url = services["migrate"]["environment"]["MEMORY_PG_DATABASE_URL"]
    env = services["db"]["environment"]
    assert url == (
        f"postgresql://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}@db:5432/{env['POSTGRES_DB']}"
    )


def test_compose_has_no_fixed_password_and_says_how_to_set_one():
    password = compose()["services"]["db"]["environment"]["POSTGRES_PASSWORD"]
    # Compose refuses to start without it (":?"), and its message says what to do.
    assert password.startswith("${MEMORY_PG_DB_PASSWORD:?set MEMORY_PG_DB_PASSWORD"), password
    assert "openssl rand" in password
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    assert ":memory@" not in text and "PASSWORD: memory" not in text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "export MEMORY_PG_DB_PASSWORD=" in readme


def test_compose_publishes_the_database_and_the_api_on_loopback_only():
    services = compose()["services"]
    published = [port for svc in services.values() for port in svc.get("ports", [])]
    assert published == ["127.0.0.1:5432:5432", "127.0.0.1:8080:8080"]


def _jobs_once(tmp_path: Path, now: int) -> list[str]:
    """One start of the jobs container, one day of its loop: what it ran, at ``now``."""
    script = compose()["services"]["jobs"]["command"][0].replace("$$", "$")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stubs = {
        "memory-pg": 'echo "$*" >> "$RAN"',
        "date": 'echo "$NOW"',
        "sleep": 'kill -TERM "$PPID"',  # the day is over: stop the container here
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body + "\n")
        (bin_dir / name).chmod(0o755)
    ran = tmp_path / "ran.log"
    ran.write_text("")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RAN": str(ran),
        "NOW": str(now),
        "JOBS_STATE": str(tmp_path),
    }
    subprocess.run(["sh", "-c", script], env=env, timeout=30, check=False)
    return ran.read_text().splitlines()


def test_the_jobs_loop_consolidates_once_a_week_however_often_it_restarts(tmp_path):
    start = 1_800_000_000
    day = 86_400
    assert _jobs_once(tmp_path, start) == ["forget --json", "consolidate --json"]
    # Restarted the same day, and every day of the week after: forget only.
    for days in (0, 1, 3, 6):
        assert _jobs_once(tmp_path, start + days * day + 60) == ["forget --json"]
    assert _jobs_once(tmp_path, start + 7 * day) == ["forget --json", "consolidate --json"]


def test_compose_commands_are_real_subcommands():
    parser = build_parser()
    known = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert "migrate" in known
    jobs = " ".join(compose()["services"]["jobs"]["command"])
    for used in re.findall(r"memory-pg (\w+)", jobs):
        assert used in known, used


def test_dockerfile_installs_the_cpu_torch_and_the_command():
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "download.pytorch.org/whl/cpu" in text
    assert "-c constraints.txt" in text
    assert 'ENTRYPOINT ["memory-pg"]' in text


def test_ci_runs_exactly_the_readmes_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash[^\n]*\n(.*?)\n```", readme, flags=re.S)
    test_command = next(b for b in blocks if "pytest" in b and "venv" in b)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text(encoding="utf-8")


def test_compose_runs_the_api_after_the_migration_on_a_real_subcommand():
    api = compose()["services"]["api"]
    assert api["command"][0] == "serve" and "0.0.0.0" in api["command"]
    assert api["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "/readyz" in " ".join(api["healthcheck"]["test"])
    assert "serve" in set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert '".[llm,service]"' in (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_benchmark_requirements_bring_what_mem0s_pgvector_store_imports():
    """mem0 needs psycopg's pool: without it the harness skipped mem0 on a fresh install."""
    lines = (ROOT / "benchmarks" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    wanted = [line.split("#")[0].strip() for line in lines]
    assert "mem0ai>=0.1.100" in wanted
    assert any(re.fullmatch(r"psycopg\[(\w+,)*pool(,\w+)*\][<>=!~].*", w) for w in wanted), wanted

"""docker-compose.yml, the Dockerfile and CI: what can be checked without Docker."""

from __future__ import annotations

import re
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

"""The migrations ship in the wheel and run from an install, not only from a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_carries_the_migrations_and_runs_them_from_site_packages(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    wheel = next((tmp_path / "dist").glob("memory_pg-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "memory_pg/_migrations/env.py" in names
    assert "memory_pg/_migrations/script.py.mako" in names
    assert "memory_pg/_migrations/versions/0001_vector_extension.py" in names
    assert "memory_pg/py.typed" in names

    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from memory_pg import schema;"
        "print(schema.migrations_dir());"
        "print(schema.offline_sql())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(site)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert out.splitlines()[0].startswith(str(site))
    assert "CREATE TABLE memory_pg_memories" in out

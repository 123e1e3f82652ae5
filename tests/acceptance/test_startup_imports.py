"""Commands that embed nothing start without torch or sentence-transformers.

The installed ``memory-pg`` command runs with ``PYTHONPROFILEIMPORTTIME=1``: Python
then names every module it imports, and none of them may be torch or
sentence-transformers (about 8 s of start-up on a small machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"torch", "sentence_transformers", "transformers"}
COMMANDS = [
    ["migrate"],
    ["healthcheck"],
    ["stats"],
    ["history", "--user", "alice"],
    ["forget", "--dry-run"],
    ["erase", "--user", "bob", "--yes"],
]


def heavy_imports(args: list[str], env_extra: dict[str, str]) -> set[str]:
    """The heavy packages one run of ``memory-pg ARGS`` imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    env.pop("DATABASE_URL", None)
    env.update(HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT), PYTHONPROFILEIMPORTTIME="1")
    env.update(env_extra)
    script = Path(sys.executable).parent / "memory-pg"
    done = subprocess.run(
        [str(script), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".", 1)[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "memory_pg" in imported  # the profile really was written
    return imported & HEAVY


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_commands_that_do_not_embed_skip_the_model(args: list[str], make_store, db_url: str):
    make_store().add_memory("We use PostgreSQL", "key_decision", user_id="alice")
    assert heavy_imports(args, {"MEMORY_PG_DATABASE_URL": db_url}) == set()


def test_a_new_embedded_database_is_created_without_the_model(tmp_path: Path):
    home = {"MEMORY_PG_HOME": str(tmp_path / "home")}
    assert heavy_imports(["healthcheck"], home) == set()
    assert heavy_imports(["stats"], home) == set()


def test_the_known_dimensions_are_the_loaded_models_own(embedder):
    from memory_pg.embedding import KNOWN_DIMENSIONS

    embedder.embed_query("load it")
    assert embedder.dimension == KNOWN_DIMENSIONS[embedder.model_name]

"""Importing the schema module loads the migrations, not the stores or the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import memory_pg

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
import memory_pg.schema as schema
schema.migrations_dir()
schema.head_revision()
print(json.dumps(sorted(sys.modules)))
"""


def modules_loaded_by(code: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout))


def test_the_schema_module_does_not_import_the_package():
    loaded = modules_loaded_by(PROBE)
    assert not loaded & {"torch", "sentence_transformers", "transformers"}
    # The stores, the model wrapper, numpy and jieba stay unloaded (before: all of them).
    assert not loaded & {"memory_pg.store", "memory_pg.embedding", "numpy", "jieba"}
    assert (Path(memory_pg.__file__).parents[1] / "migrations").is_dir()


def test_every_public_name_still_imports_from_the_package():
    for name in memory_pg.__all__:
        assert getattr(memory_pg, name) is not None
    assert set(memory_pg.__all__) <= set(dir(memory_pg))
    from memory_pg import MemoryStore
    from memory_pg.store import MemoryStore as Same

    assert MemoryStore is Same

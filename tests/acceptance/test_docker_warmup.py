"""The Dockerfile's warm-up step: the command it runs exports the bundled model to ONNX,
with the int8 copy that embeds queries, into the image user's cache, so a container
starts without importing torch or quantising."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from memory_pg.onnx_embedding import quantized_model_path

ROOT = Path(__file__).resolve().parents[2]


def test_the_dockerfile_warm_up_exports_the_model_for_the_runtime_user(tmp_path: Path) -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    # After USER: the cache belongs to the user the container runs as.
    assert text.index("USER memory") < text.index('RUN python -c "')
    code = re.search(r'RUN python -c "(.*)"', text)
    assert code is not None
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("MEMORY_PG_EMBEDDING_BACKEND", None)
    env.pop("MEMORY_PG_QUERY_PRECISION", None)
    subprocess.run([sys.executable, "-c", code.group(1)], env=env, check=True, timeout=600)
    folder = tmp_path / "memory-pg" / "onnx"
    (export,) = (p for p in folder.glob("*.onnx") if "-int8" not in p.stem)
    copy = quantized_model_path(export)
    assert sorted(folder.iterdir()) == sorted([export, copy])
    assert export.stat().st_size > 10_000_000
    assert 5_000_000 < copy.stat().st_size < export.stat().st_size / 2

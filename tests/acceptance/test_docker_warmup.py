"""The Dockerfile's warm-up step: the command it runs exports the bundled model to ONNX
into the image user's cache, so a container starts without importing torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_dockerfile_warm_up_exports_the_model_for_the_runtime_user(tmp_path: Path) -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    # After USER: the cache belongs to the user the container runs as.
    assert text.index("USER memory") < text.index('RUN python -c "')
    code = re.search(r'RUN python -c "(.*)"', text)
    assert code is not None
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("MEMORY_PG_EMBEDDING_BACKEND", None)
    subprocess.run([sys.executable, "-c", code.group(1)], env=env, check=True, timeout=600)
    exported = list((tmp_path / "memory-pg" / "onnx").glob("*.onnx"))
    assert len(exported) == 1 and exported[0].stat().st_size > 10_000_000

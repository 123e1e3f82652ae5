"""The Python blocks of docs/langgraph.md and README's LangGraph section run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)

# Each block in a fresh namespace of one process (the model loads once).
RUNNER = """
import sys
for n, code in enumerate(sys.argv[1:]):
    print(f"--- block {n}", flush=True)
    exec(compile(code, f"<block {n}>", "exec"), {"__name__": "__main__"})
"""


def blocks(path: Path, after: str = "") -> list[str]:
    text = path.read_text(encoding="utf-8")
    return BLOCK.findall(text[text.index(after) :] if after else text)


def test_the_docs_blocks_run(db_url, tmp_path):
    docs = blocks(ROOT / "docs" / "langgraph.md")
    readme = blocks(ROOT / "README.md", after="## LangGraph / LangMem")[:1]
    assert len(docs) == 4 and len(readme) == 1
    env = dict(os.environ, MEMORY_PG_DATABASE_URL=db_url, PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *docs, *readme],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    out = done.stdout
    assert "{'content': 'Alice switched her editor to Helix'}" in out
    assert "['added', 'added', 'superseded']" in out
    assert "I moved to Porto last spring" in out
    assert "shellfish" in out
    assert "Dave leads the payments team" in out
    assert "{'content': 'Erin writes Go at work'}" in out

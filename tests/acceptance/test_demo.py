"""`python -m memory_pg demo` on a fresh embedded server: recalled in a new process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_recalls_the_database_decision_in_a_new_process(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEMORY_PG_DATABASE_URL", "DATABASE_URL", "MEMORY_PG_EMBEDDING_MODEL")
    }
    env.update(MEMORY_PG_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    result = subprocess.run(
        [sys.executable, "-m", "memory_pg", "demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    first, _, second = out.partition("== 3/3")
    assert "[关键决策 key decision] 我们决定使用 PostgreSQL 作为数据库" in first
    pids = re.findall(r"pid (\d+)", out)
    assert len(pids) == 2 and pids[0] != pids[1]
    assert "用户 user: 数据库选型" in second
    assert "1. [关键决策 key decision] 我们决定使用 PostgreSQL 作为数据库" in second
    # Only what matches the question is listed: no unrelated memory with score 0.0000.
    assert "score 0.0000" not in second and "\n  2. " not in second, second
    assert "share nothing with the question: not shown" in second
    assert "recalled in a new process 新进程回忆成功: 我们决定使用 PostgreSQL 作为数据库" in second

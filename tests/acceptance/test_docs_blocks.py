"""Every fenced block of README.md and docs/*.md runs as written (the rules for the
blocks: ``tests/unit/test_docs.py``).

A user copies a block and runs it; so does this test. Per page, in document order,
against a fresh database (the test's, via ``MEMORY_PG_DATABASE_URL``):

- ``python`` blocks run in one namespace, as a reader pasting them into one session
  would; a block that raises fails the page. A ``file=NAME`` block is written to
  that file instead, for a later block to run.
- ``bash`` blocks run with ``bash -e -o pipefail`` in an empty folder, with the
  installed ``memory-pg`` and ``hermes`` first on ``PATH`` and ``HERMES_HOME`` in
  that folder; port 8080 becomes a free port.
- ``sql`` blocks run on the page's database.

Blocks marked ``no-run: <why>`` are skipped; JSON, YAML and crontab blocks are
checked by the unit test.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.unit.test_docs import PAGES, ROOT, Block, _rel, blocks

# -- running them ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keep_stores(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Hold every store the blocks open (``MemoryWrapper(agent, MemoryStore(...))``
    drops its own), so that the test closes them before its database is dropped."""
    from memory_pg.async_store import AsyncMemoryStore
    from memory_pg.store import MemoryStore

    opened: list[Any] = []
    for cls in (MemoryStore, AsyncMemoryStore):
        init = cls.__init__

        def keep(self: Any, *args: Any, __init: Any = init, **kwargs: Any) -> None:
            __init(self, *args, **kwargs)
            opened.append(self)

        monkeypatch.setattr(cls, "__init__", keep)
    return opened


def _close(opened: list[Any]) -> None:
    for store in opened:
        done = store.close()
        if inspect.isawaitable(done):
            asyncio.run(done)


def _run_python(block: Block, namespace: dict[str, Any]) -> None:
    # Warnings reach the reader as warnings, not as the errors pytest makes of them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(block.code, str(block), "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"{block} raised {type(exc).__name__}: {exc}\n{block.code}")


def _run_bash(block: Block, env: dict[str, str], cwd: Path) -> None:
    code = block.code.replace("8080", str(_free_port()))
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"{block} exited {done.returncode}\n{block.code}\n"
        f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if any(b.skip_reason is None for b in blocks(p))], ids=_rel
)
def test_the_blocks_of_a_page_run_in_order(
    page: Path, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith(("MEMORY_PG_", "OPENAI_")) and name != "MEMORY_PG_TEST_DATABASE_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", db_url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    # The installed commands (memory-pg, hermes) first, for bash blocks and for the
    # processes python blocks start.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    opened = _keep_stores(monkeypatch)
    try:
        for block in blocks(page):
            if block.skip_reason is not None:
                continue
            if block.file is not None:
                (tmp_path / block.file).write_text(block.code, encoding="utf-8")
            elif block.language == "python":
                _run_python(block, namespace)
            elif block.language == "bash":
                _run_bash(block, env, ROOT if block.in_checkout else tmp_path)
            elif block.language == "sql":
                with psycopg.connect(db_url, autocommit=True) as conn:
                    conn.execute(block.code.encode())
    finally:
        namespace.clear()
        _close(opened)

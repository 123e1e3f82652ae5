"""Every fenced block of README.md and docs/*.md runs as written.

A user copies a block and runs it; so does this test. Per page, in document order,
against a fresh database (the test's, via ``MEMORY_PG_DATABASE_URL``):

- ``python`` blocks run in one namespace, as a reader pasting them into one session
  would; a block that raises fails the page.
- ``bash`` blocks run with ``bash -e -o pipefail`` in an empty folder, with the
  installed ``memory-pg`` first on ``PATH``; port 8080 becomes a free port.
- ``json`` blocks must parse with :func:`json.loads`, ``yaml`` with
  ``yaml.safe_load``; ``crontab`` lines must name a real ``memory-pg`` command;
  ``sql`` blocks run on the page's database.
- ``text`` blocks are output shown to the reader, not code.

A block that cannot run here (Docker, ``pip install``, a Citus cluster) says so in
its info string: `````bash no-run: <why>`````. The reason is required.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from memory_pg.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python", "bash", "json", "yaml", "crontab", "sql", "text"}
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    skip_reason: str | None
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        language, _, rest = match.group(1).strip().partition(" ")
        rest = rest.strip()
        skip = None
        if rest.startswith("no-run"):
            skip = rest.removeprefix("no-run").lstrip(":").strip()
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(page.name, line, language, skip, match.group(2)))
    return found


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


# -- what every block must be, checked without running anything ------------------------


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_block_says_its_language_and_why_it_does_not_run(page: Path) -> None:
    for block in blocks(page):
        assert block.language in LANGUAGES, f"{block}: say the block's language"
        if block.skip_reason is not None:
            assert block.skip_reason, f"{block}: no-run needs a reason (no-run: <why>)"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_configuration_blocks_parse(page: Path) -> None:
    commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    for block in blocks(page):
        if block.skip_reason is not None:
            continue
        if block.language == "json":
            json.loads(block.code)
        elif block.language == "yaml":
            assert isinstance(yaml.safe_load(block.code), dict), block
        elif block.language == "crontab":
            for line in block.code.splitlines():
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                fields = line.split(None, 5)
                assert len(fields) == 6, f"{block}: {line!r} is not 5 times and a command"
                command = shlex.split(fields[5].split(">>")[0])
                assert command[0] == "memory-pg" and command[1] in commands, f"{block}: {line!r}"


def test_the_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 400
    # The first way to plug it in comes on the first screens, not after the internals.
    assert readme.index("## 1. ") < readme.index("## Documentation")
    assert len(readme[: readme.index("## 1. ")].splitlines()) < 60
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), f"README links {link}, which does not exist"


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
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    opened = _keep_stores(monkeypatch)
    try:
        for block in blocks(page):
            if block.skip_reason is not None:
                continue
            if block.language == "python":
                _run_python(block, namespace)
            elif block.language == "bash":
                _run_bash(block, env, tmp_path)
            elif block.language == "sql":
                with psycopg.connect(db_url, autocommit=True) as conn:
                    conn.execute(block.code.encode())
    finally:
        namespace.clear()
        _close(opened)

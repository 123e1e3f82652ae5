"""Every fenced block of README.md and docs/*.md says what it is; configuration parses.

``tests/acceptance/test_docs_blocks.py`` runs the blocks; this checks, without
running anything, what the reader sees. The rules for a block:

- it names its language: ``python``, ``bash``, ``sql`` (run, per page, in order,
  against a fresh database), ``json``, ``yaml`` (parsed here), ``crontab`` (each
  line names a real ``memory-pg`` command), ``text`` (output shown, not code);
- a block that cannot run here (Docker, ``pip install``, a Citus cluster) says why
  in its info string, ```` ```bash no-run: <why> ````;
- ```` ```python file=chat.py ```` is a file the reader saves, which a later block
  runs (``python chat.py``): it is written to the folder the blocks run in;
- ```` ```bash cwd=checkout ```` runs in the repository root (Alembic's files).

And the README stays a front door: short, the first way in on the first screen,
its links alive.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

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
    file: str | None = None  # ``file=chat.py``: the block is that file, run by a later block
    in_checkout: bool = False  # ``cwd=checkout``: runs in the repository root

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        language, _, rest = match.group(1).strip().partition(" ")
        rest = rest.strip()
        skip = file = None
        if rest.startswith("no-run"):
            skip = rest.removeprefix("no-run").lstrip(":").strip()
        elif rest.startswith("file="):
            file = rest.removeprefix("file=")
        line = text.count("\n", 0, match.start()) + 1
        found.append(
            Block(page.name, line, language, skip, match.group(2), file, rest == "cwd=checkout")
        )
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

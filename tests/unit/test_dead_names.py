"""No dead public names in the small bottom-layer modules: each is used or documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["cli", "_validate", "errors", "buffer", "schema"]


def public_names(path: Path) -> set[str]:
    """Top-level functions, classes and constants of a module that do not start with ``_``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") and n not in ("logger",)}


def other_text(exclude: Path) -> str:
    """Every source file of the package but ``exclude``, and the user documentation."""
    files = [p for p in (ROOT / "memory_pg").rglob("*.py") if p != exclude]
    files += [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "migrations").rglob("*.py"),
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_used_outside_its_module_or_inside_it(module):
    path = ROOT / "memory_pg" / f"{module}.py"
    source = path.read_text(encoding="utf-8")
    elsewhere = other_text(path)
    dead = []
    for name in sorted(public_names(path)):
        word = re.compile(rf"\b{re.escape(name)}\b")
        # Its definition and its __all__ entry are two mentions; a use is a third.
        own_uses = len(word.findall(source)) - 1 - (f'"{name}"' in source)
        if not word.search(elsewhere) and own_uses < 1:
            dead.append(name)
    assert dead == []

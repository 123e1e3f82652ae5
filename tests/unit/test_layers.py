"""The package's layers: imports point down only, and no module reaches into another's privates.

Layers (docs/architecture.md), lowest first:

0. settings, errors, validation, tables, text tools (segmenting, facts, the offline
   extractor, ``text``: attributes, references, changes), embedding, server, schema,
   admission (the line in front of a pool)
1. ``sql`` (statement builders and named SQL) and ``supersession`` (the pure decision)
2. ``plans`` (the seam: statements with no I/O), ``buffer`` and ``roles`` (their plans)
3. drivers and jobs: ``opening``, ``exchange``, ``operations``, ``methods``, ``store``,
   ``async_store``, ``jobs``
4. everything that uses a store: retrieval, compaction, wrapper, CLI, service, integrations
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "memory_pg"

BASE = {
    "errors",
    "config",
    "_validate",
    "_ids",
    "_segment",
    "_facts",
    "_extract",
    "scoring",
    "timespan",
    "tables",
    "pooling",
    "_regex",
    "admission",
    "embedding",
    "onnx_embedding",
    "coalesce",
    "embedders_zh",
    "entities",
    "server",
    "schema",
    "text",
}
LAYERS = {
    **dict.fromkeys(BASE, 0),
    "sql": 1,
    "supersession": 1,
    "plans": 2,
    "buffer": 2,
    "usage": 2,
    "roles": 2,
    "opening": 3,
    "exchange": 3,
    "methods": 3,
    "operations": 3,
    "relation_methods": 3,
    "transfer_methods": 3,
    "warming": 3,
    "replicas": 3,
    "store": 3,
    "async_store": 3,
    "jobs": 3,
}
UPPER = 4


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def _layer(module: str) -> int:
    """The layer of a module of the package (``""`` is the package itself)."""
    return LAYERS.get(module.split(".")[0], UPPER) if module else UPPER


def _modules() -> dict[str, ast.Module]:
    return {
        _module_name(p): ast.parse(p.read_text("utf-8"), str(p))
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def _imports(name: str, tree: ast.Module) -> list[tuple[str, int]]:
    """The package's modules that ``name`` imports (anywhere: lazily and for typing too)."""
    found: list[tuple[str, int]] = []
    package = name.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memory_pg."):
                    found.append((alias.name.removeprefix("memory_pg."), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package[: len(package) - node.level]
                module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (
                node.module == "memory_pg" or node.module.startswith("memory_pg.")
            ):
                module = node.module.removeprefix("memory_pg").lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}" if module else alias.name
                # ``from memory_pg import x`` imports the module x when there is one.
                found.append(
                    (
                        sub
                        if (PACKAGE / sub.replace(".", "/")).exists()
                        or (PACKAGE / (sub.replace(".", "/") + ".py")).exists()
                        else module,
                        node.lineno,
                    )
                )
    return found


MODULES = _modules()


def test_every_module_is_placed_in_a_layer() -> None:
    assert {m.split(".")[0] for m in MODULES} >= set(LAYERS)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_runs_back_up(name: str) -> None:
    mine = _layer(name)
    upward = [
        f"{name}:{line} imports {target} (layer {_layer(target)} above {mine})"
        for target, line in _imports(name, MODULES[name])
        if _layer(target) > mine
    ]
    assert upward == []


#: Underscored names that are public API of other libraries (SQLAlchemy's ``Row._mapping``,
#: namedtuple's ``_replace``, ``sys._getframe``).
THIRD_PARTY_PUBLIC = {"_mapping", "_asdict", "_fields", "_replace", "_getframe", "_exit"}


def _private_members(tree: ast.Module) -> set[str]:
    """Private names a module defines on its classes and objects (``def _x``, ``self._x =``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_"):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and node.attr.startswith("_")
        ):
            names.add(node.attr)
    return {n for n in names if not (n.startswith("__") and n.endswith("__"))}


def test_no_module_uses_another_modules_private_names() -> None:
    defined = {name: _private_members(tree) for name, tree in MODULES.items()}
    offences = []
    for name, tree in MODULES.items():
        others = set().union(*(v for k, v in defined.items() if k != name)) - defined[name]
        modules = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memory_pg")
            for alias in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memory_pg"):
                offences += [
                    f"{name}:{node.lineno} imports {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                    and not (PACKAGE / (a.name + ".py")).exists()
                    and not (PACKAGE / a.name).is_dir()
                ]
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
                continue
            if node.attr.startswith("__") or node.attr in THIRD_PARTY_PUBLIC:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            owner = ast.unparse(node.value)
            if (
                node.attr in others
                or (owner in modules and node.attr not in defined[name])
                # ``self.store._x``: a private of an object this module does not define.
                or (not isinstance(node.value, ast.Name) and node.attr not in defined[name])
            ):
                offences.append(f"{name}:{node.lineno} uses {owner}.{node.attr}")
    assert offences == []


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        name: len(
            (PACKAGE / (name.replace(".", "/") or "__init__"))
            .with_suffix(".py")
            .read_text("utf-8")
            .splitlines()
        )
        for name in MODULES
        if (PACKAGE / (name.replace(".", "/"))).with_suffix(".py").exists()
    }
    assert {n: s for n, s in sizes.items() if s > 600} == {}


def _reaches(start: str, goal: str) -> bool:
    """Whether ``start`` imports ``goal``, directly or through other modules of the package."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        for target, _ in _imports(name, MODULES[name]) if name in MODULES else ():
            if target == goal:
                return True
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return False


@pytest.mark.parametrize(("low", "high"), [("config", "_validate"), ("_cli_lifecycle", "cli")])
def test_these_modules_import_each_other_in_one_direction_only(low: str, high: str) -> None:
    # Issue 37: each pair was a circle; the shared piece moved down (type names into
    # config, the environment fallbacks of options into _cli_env).
    assert not (_reaches(low, high) and _reaches(high, low))


def _circles(within: str) -> list[list[str]]:
    """Import circles among the modules under ``within`` (lazy imports count too)."""
    graph = {
        name: {t for t, _ in _imports(name, tree) if t.startswith(within) and t != name}
        for name, tree in MODULES.items()
        if name.startswith(within)
    }
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                found.append(path)
            elif nxt not in path and nxt > path[0]:  # each circle once, from its least module
                walk([*path, nxt])

    for start in sorted(graph):
        walk([start])
    return found


def test_the_service_modules_import_in_one_direction() -> None:
    # http and http_relations imported each other (issue 38): the token dependencies
    # both need live in http_auth.
    assert _circles("service.") == []


def test_the_plans_import_in_one_direction() -> None:
    # Issue 36: read, relations, write and turns imported each other; what they share
    # (a memory id, a write's inputs, a row as the dict callers get) is plans.shapes.
    assert _circles("plans.") == []


#: The text analysis: segmenting, facts, the offline extractor, times, entities, ``text``.
ANALYSIS = ("_segment", "_facts", "_extract", "timespan", "entities", "text")


def _analysis(module: str) -> bool:
    return module.split(".")[0] in ANALYSIS


def test_the_text_analysis_is_one_layer_with_no_circle() -> None:
    # Issue 36: _facts and _extract imported each other; the lexicon of products and
    # roles both read is text.topics. The layer imports nothing but itself and base
    # modules with no analysis (settings, errors, regular expressions, data files).
    outside = {
        f"{name} imports {target}"
        for name, tree in MODULES.items()
        if _analysis(name)
        for target, _ in _imports(name, tree)
        if not _analysis(target) and target not in ("_regex", "config", "errors")
    }
    assert outside == set()
    graph_circles = [c for c in _circles("") if all(_analysis(m) for m in c)]
    assert graph_circles == []


def _runtime_imports(name: str, tree: ast.Module) -> list[tuple[str, int]]:
    """:func:`_imports`, less those made for type checking only."""
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    stripped = ast.Module(body=[n for n in tree.body if id(n) not in typing_only], type_ignores=[])
    return _imports(name, stripped)


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("sql")))
def test_the_statement_builders_analyse_no_text(name: str) -> None:
    # Issue 36: sql/ takes analysed values (a query's words, time, entities and asked
    # attribute; a memory's index words and attributes) as parameters.
    assert [t for t, _ in _runtime_imports(name, MODULES[name]) if _analysis(t)] == []

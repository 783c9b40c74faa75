"""The package graph has no cycles and flows one way (issue 25, item 5).

Every ``import`` and ``from ... import`` under ``src/evaldelta`` counts, lazy ones inside
functions and ``TYPE_CHECKING`` ones included: a package that imports another only lazily
still cannot be understood without it. Each package (a folder under ``src/evaldelta``, or a
top-level module) sits on one floor of ``FLOORS``, drawn in the README's Layout and in
docs/architecture.md; it may import its own floor's lower neighbours and any lower floor, and
no two packages may import each other. The package root (``evaldelta/__init__.py``, the
curated surface) sits above everything.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evaldelta"

# Lowest first. Within a floor, packages are independent of each other unless a later one
# on the same line imports an earlier one (checked below as "no two import each other").
FLOORS: tuple[tuple[str, ...], ...] = (
    ("_util", "data", "errors", "provider", "stats"),
    ("store",),
    ("sources",),
    ("evidence",),
    ("engine",),
    ("comparison",),
    ("checks", "regression", "planning"),
    ("gating",),
    ("run",),
    ("report",),
    ("integrations", "demo", "commands"),
    ("cli",),
)
ROOT = "__init__"


def _package(path: Path) -> str:
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def _targets(path: Path) -> set[str]:
    """The evaldelta packages one module imports (relative imports stay in the package)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "evaldelta":
                continue
            if len(parts) > 1:
                out.add(parts[1])
            else:  # from evaldelta import x: x is a package or a name of the root
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("evaldelta."))
    return out


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.py")):
        me = _package(path)
        edges[me].update(t for t in _targets(path) if t != me)
    return edges


def _floor() -> dict[str, int]:
    return {name: i for i, floor in enumerate(FLOORS) for name in floor}


def test_every_package_has_a_floor() -> None:
    floors = _floor()
    packages = {_package(p) for p in SRC.rglob("*.py")} - {ROOT}
    assert not sorted(packages - set(floors)), "a package the Layout does not place"


def test_no_two_packages_import_each_other() -> None:
    edges = graph()
    both = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, ())})
    assert not both


def test_imports_flow_down_the_floors() -> None:
    floors = _floor()
    edges = graph()
    upward = sorted(
        f"{a} -> {b}"
        for a in edges
        if a != ROOT
        for b in edges[a]
        if b in floors and a in floors and floors[b] > floors[a]
    )
    assert not upward

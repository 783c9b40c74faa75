"""Layers import downwards only (issue 12): the checks never import the runner.

``evaldelta.provider`` holds the provider protocol both use, so ``checks/`` (scoring and the
judge) and ``run/`` (which scores with the checks) do not import each other. Checked on the
source with ``ast``, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "evaldelta"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_checks_do_not_import_the_runner() -> None:
    offenders = {
        str(path.relative_to(SRC)): sorted(
            m for m in _imports(path) if m.startswith("evaldelta.run")
        )
        for path in sorted((SRC / "checks").rglob("*.py"))
    }
    assert not {k: v for k, v in offenders.items() if v}


def test_the_provider_protocol_depends_on_nothing_of_ours() -> None:
    assert not {m for m in _imports(SRC / "provider.py") if m.startswith("evaldelta")}

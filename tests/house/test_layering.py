"""Layers import downwards only (issue 12): the checks never import the runner.

``evaldelta.provider`` holds the provider protocol both use, so ``checks/`` (scoring and the
judge) and ``run/`` (which scores with the checks) do not import each other. Checked on the
source with ``ast``, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evaldelta"


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


# Only these run queries: the engine (every comparison query), the row seam (reading and
# canonicalising inputs) and the run store (issue 12, "done when").
QUERY_LAYERS = ("engine", "sources", "store")
SQL = re.compile(
    r"\b(SELECT|INSERT|CREATE|COPY|UPDATE|DELETE|DESCRIBE)\b[^\n]*\b(FROM|INTO|TABLE|VIEW|TO)\b|\bDESCRIBE\b"
)


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal, an f-string's literal parts joined (``{...}`` as a space)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else " " for v in node.values]
            out.append((node.lineno, "".join(str(p) for p in parts)))
    return out


def _outside_query_layers() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.relative_to(SRC).parts[0] not in QUERY_LAYERS]


def test_only_the_query_layers_import_ibis_or_duckdb() -> None:
    offenders = {
        str(path.relative_to(SRC)): sorted(
            m for m in _imports(path) if m.split(".")[0] in ("ibis", "duckdb", "sqlglot")
        )
        for path in _outside_query_layers()
    }
    assert not {k: v for k, v in offenders.items() if v}


def test_no_sql_is_built_outside_the_query_layers() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {text[:60]!r}"
        for path in _outside_query_layers()
        for line, text in _strings(path)
        if SQL.search(text)
    ]
    assert not found, found


def test_the_checks_would_catch_a_query_layer_module() -> None:
    """Not vacuous: the same two checks flag the engine's own sample queries."""
    sample = SRC / "engine" / "_sample.py"
    assert "duckdb" in _imports(sample)
    assert any(SQL.search(text) for _, text in _strings(sample))


def test_the_comparison_runs_no_query_method() -> None:
    """Phase two reads evidence only: no execution method is called in comparison/."""
    calls = []
    for path in sorted((SRC / "comparison").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in (
                "to_pyarrow",
                "execute",
                "to_pylist",
                "raw_sql",
                "sql",
            ):
                calls.append(f"{path.relative_to(SRC)}:{node.lineno}: .{node.attr}")
    assert not calls, calls


def _importers(package: str, prefix: str) -> dict[str, list[str]]:
    """The modules under ``package`` that import something under ``prefix``, and what."""
    found = {
        str(path.relative_to(SRC)): sorted(
            m for m in _imports(path) if m == prefix or m.startswith(prefix + ".")
        )
        for path in sorted((SRC / package).rglob("*.py"))
    }
    return {k: v for k, v in found.items() if v}


def test_the_gate_does_not_import_the_reports() -> None:
    # the gate decides (rules, confounded pins, upstream changes); the reports render its
    # decisions and may import gating's types, never the other way round (issue 25)
    assert not _importers("gating", "evaldelta.report")


def test_the_runner_does_not_import_the_gate() -> None:
    # run/config.py found its keys' lines with the policy's scanner; it is _toml's now. Only
    # run --until-decided (run/decided.py), which stops once the gate's answer is decided,
    # applies a policy (issue 26)
    assert set(_importers("run", "evaldelta.gating")) <= {"run/decided.py"}

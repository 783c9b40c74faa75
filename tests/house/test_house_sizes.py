"""Every module under 600 lines and every function under 80 (issue 12, STYLE.md).

A typer command declares one option per line in its signature, so for a command (decorated
with ``@<app>.command`` or registered as ``<app>.command(NAME)(function)``) only its body
is counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evaldelta"
MODULE_LINES, FUNCTION_LINES = 600, 80


def _registered(tree: ast.AST) -> set[str]:
    """Functions registered as ``<app>.command(...)(function)``."""
    out = set()
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Call)
            and isinstance(n.func.func, ast.Attribute)
            and n.func.func.attr == "command"
        ):
            out.update(a.id for a in n.args if isinstance(a, ast.Name))
    return out


def _is_command(node: ast.FunctionDef | ast.AsyncFunctionDef, registered: set[str]) -> bool:
    if node.name in registered:
        return True
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "command":
            return True
    return False


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef, registered: set[str]) -> int:
    end = node.end_lineno or node.lineno
    start = node.body[0].lineno if _is_command(node, registered) else node.lineno
    return end - start + 1


def test_modules_stay_under_600_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in sorted(SRC.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert not long


def test_functions_stay_under_80_lines() -> None:
    long = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        registered = _registered(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = _length(node, registered)
                if n > FUNCTION_LINES:
                    long[f"{path.relative_to(SRC)}:{node.name}"] = n
    assert not long


def test_the_command_rule_sees_the_commands() -> None:
    """Not vacuous: decorated and registered commands are both recognised, nothing else."""
    for module, name in (("commands/cases.py", "add_cmd"), ("commands/compare.py", "compare_cmd")):
        tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
        registered = _registered(tree)
        commands = [
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and _is_command(n, registered)
        ]
        assert name in commands
        assert all(c.endswith("_cmd") for c in commands), commands

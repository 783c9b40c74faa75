"""The reports compute no statistic (issue 25, item 1): ``report/`` selects, formats, escapes.

Every number a report prints is computed in ``comparison/`` (or ``gating/``, ``planning/``)
and held in the Comparison or the Verdict, so the JSON report carries what the text and HTML
print. Checked on the source with ``ast``: no module under ``report/`` imports or uses a
function of :mod:`evaldelta.stats` (an interval, a p-value, a power, a sample size, a sweep);
its result types and constants (``BreakEven``, ``MIN_INFORMATIVE``, ...) are allowed.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from pathlib import Path

import evaldelta.stats

SRC = Path(__file__).resolve().parents[2] / "src" / "evaldelta"
STATS = "evaldelta.stats"

# every function the statistics export: what computes; classes (result types, warnings) and
# constants are values to read
FORBIDDEN = frozenset(
    name
    for name in evaldelta.stats.__all__
    if callable(getattr(evaldelta.stats, name))
    and not inspect.isclass(getattr(evaldelta.stats, name))
)


def _computes(obj: object) -> bool:
    return callable(obj) and not inspect.isclass(obj) and not isinstance(obj, types.ModuleType)


def offences(source: str) -> list[str]:
    """Every use of a stats function in one module's source, as ``line: what``."""
    tree = ast.parse(source)
    modules: dict[str, types.ModuleType] = {}  # local names bound to a stats module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == STATS or alias.name.startswith(STATS + "."):
                    if alias.asname:
                        modules[alias.asname] = importlib.import_module(alias.name)
                    else:  # import evaldelta.stats: used as evaldelta.stats.X
                        modules[alias.name] = importlib.import_module(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "evaldelta":
                for alias in node.names:
                    if alias.name == "stats":
                        modules[alias.asname or "stats"] = evaldelta.stats
                continue
            if node.module != STATS and not node.module.startswith(STATS + "."):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if isinstance(obj, types.ModuleType):
                    modules[alias.asname or alias.name] = obj
                elif alias.name in FORBIDDEN or _computes(obj):
                    found.append(f"{node.lineno}: imports {node.module}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            module = modules.get(owner)
            if module is not None and _computes(getattr(module, node.attr, None)):
                found.append(f"{node.lineno}: uses {owner}.{node.attr}")
    return sorted(set(found))


def test_no_report_module_computes_a_statistic() -> None:
    found = {
        str(path.relative_to(SRC)): offences(path.read_text(encoding="utf-8"))
        for path in sorted((SRC / "report").rglob("*.py"))
    }
    assert not {k: v for k, v in found.items() if v}


def test_the_check_catches_an_offender() -> None:
    assert {"required_pairs", "share_sweep", "wilson_interval", "holm"} <= FORBIDDEN
    assert not {"BreakEven", "PowerResult", "MIN_INFORMATIVE"} & FORBIDDEN
    assert offences("from evaldelta import stats\nn = stats.required_pairs(0.1, 1.0)\n") == [
        "2: uses stats.required_pairs"
    ]
    assert offences("from evaldelta.stats import share_sweep as sweep\n") == [
        "1: imports evaldelta.stats.share_sweep"
    ]
    assert offences("from evaldelta.stats._power import _exact_n\n") == [
        "1: imports evaldelta.stats._power._exact_n"
    ]
    assert offences("import evaldelta.stats as st\nf = st.holm\n") == ["2: uses st.holm"]
    assert offences("from evaldelta.stats import _power\n_power.mde_mcnemar(9, 0.1)\n") == [
        "2: uses _power.mde_mcnemar"
    ]
    # reading a constant or a result type is fine
    assert not offences(
        "from evaldelta import stats\nfrom evaldelta.stats import BreakEven\n"
        "k = stats.MIN_INFORMATIVE\n"
    )

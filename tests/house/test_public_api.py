"""The curated top level: `evaldelta.compare/gate/plan/sample` and the result types.

Each name loads its module on first use; `import evaldelta` alone stays light (checked by
module presence in a fresh interpreter, as tests/house/test_lazy_imports.py does).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import evaldelta
from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.gating import Verdict, compare_with_policy
from evaldelta.planning import Plan, SampleResult, plan_from_pilot, sample


def test_all_is_the_curated_list_and_every_name_resolves() -> None:
    assert evaldelta.__all__ == sorted(set(evaldelta.__all__))
    assert {"compare", "gate", "plan", "sample", "Comparison", "Verdict", "Plan"} <= set(
        evaldelta.__all__
    )
    for name in evaldelta.__all__:
        assert getattr(evaldelta, name).__doc__, name
    assert [n for n in dir(evaldelta) if not n.startswith("_")] == evaldelta.__all__


def test_names_are_the_library_functions_and_types() -> None:
    assert evaldelta.compare is compare
    assert evaldelta.gate is compare_with_policy
    assert evaldelta.plan is plan_from_pilot
    assert evaldelta.sample is sample
    assert (evaldelta.Comparison, evaldelta.Verdict) == (Comparison, Verdict)
    assert (evaldelta.Plan, evaldelta.SampleResult) == (Plan, SampleResult)
    assert inspect.signature(evaldelta.compare).parameters["baseline"].kind == (
        inspect.Parameter.KEYWORD_ONLY
    )


def test_no_package_is_shadowed_by_a_function() -> None:
    """`import evaldelta.comparison` keeps the module reachable as an attribute."""
    import evaldelta.comparison
    import evaldelta.gating
    import evaldelta.planning

    for module in (evaldelta.comparison, evaldelta.gating, evaldelta.planning):
        assert inspect.ismodule(module)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        evaldelta.nope  # noqa: B018


def test_import_evaldelta_is_light() -> None:
    probe = "import evaldelta, json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    heavy = [m for m in loaded if m.split(".")[0] in {"scipy", "ibis", "duckdb", "numpy"}]
    assert not heavy, heavy[:5]

"""evaldelta: compare LLM releases honestly.

The library in four calls, each the same step as the command of the same name::

    import evaldelta

    result = evaldelta.compare(["runs.parquet"], baseline="v1")        # a Comparison
    result, verdict = evaldelta.gate(["runs.parquet"], "gate.toml")   # and its Verdict
    plan = evaldelta.plan(["pilot.csv"], effect=0.05)                 # pairs to settle it
    drawn = evaldelta.sample("traffic.csv", "sample.csv", by="slice", floor=300)

The packages behind them: :mod:`evaldelta.sources` (the row seam), :mod:`evaldelta.engine`
(every query, phase one), :mod:`evaldelta.comparison` (phase two, pure),
:mod:`evaldelta.gating`, :mod:`evaldelta.planning`, :mod:`evaldelta.report` and
:mod:`evaldelta.stats`. Each name here loads its module on first use, so ``import
evaldelta`` stays cheap.
"""

from typing import TYPE_CHECKING

from evaldelta._util._lazy import lazy_names

__version__ = "0.1.0"

if TYPE_CHECKING:  # the names, for type checkers; at run time each loads on first use
    from evaldelta.comparison import compare
    from evaldelta.comparison.model import Comparison
    from evaldelta.errors import EvaldeltaError
    from evaldelta.evidence import CriticalSelector
    from evaldelta.gating import Policy, Verdict, load_policy
    from evaldelta.gating import compare_with_policy as gate
    from evaldelta.planning import Plan, SampleResult, sample
    from evaldelta.planning import plan_from_pilot as plan
    from evaldelta.sources import ReadOptions, Source

_WHERE = {
    "compare": "evaldelta.comparison",
    "gate": "evaldelta.gating",
    "plan": "evaldelta.planning",
    "sample": "evaldelta.planning",
    "Comparison": "evaldelta.comparison.model",
    "Verdict": "evaldelta.gating",
    "Plan": "evaldelta.planning",
    "SampleResult": "evaldelta.planning",
    "Policy": "evaldelta.gating",
    "load_policy": "evaldelta.gating",
    "Source": "evaldelta.sources",
    "ReadOptions": "evaldelta.sources",
    "CriticalSelector": "evaldelta.evidence",
    "EvaldeltaError": "evaldelta.errors",
}
# A public name whose defining attribute differs from it.
_ALIASES = {"gate": "compare_with_policy", "plan": "plan_from_pilot"}

__all__ = [
    "Comparison",
    "CriticalSelector",
    "EvaldeltaError",
    "Plan",
    "Policy",
    "ReadOptions",
    "SampleResult",
    "Source",
    "Verdict",
    "compare",
    "gate",
    "load_policy",
    "plan",
    "sample",
]


__getattr__, __dir__ = lazy_names("evaldelta", _WHERE, globals(), _ALIASES)

"""The gate's rules, one module per kind, and :data:`RULES`, the one ordered list of them.

Each rule kind (:class:`~evaldelta.gating.rules._base.Rule`) owns its policy key and its
validation, its evaluation on one pair, its sentences and the layout of its figures in the
reports. ``gating/policy.py`` parses through :data:`RULES`, ``gating/verdict.py``
evaluates through it (in its order: per slice the slice rules, then the pair rules), and
``report/verdict.py`` lays out each result by :func:`rule_of`. Adding a rule is one file
here and one line in :data:`RULES` (or :func:`register`, for a rule defined elsewhere).
"""

from __future__ import annotations

from evaldelta.gating.rules._base import FigureStyle, MarginOn, PairGate, Rule, Shape
from evaldelta.gating.rules.aggregate import CONTRAST
from evaldelta.gating.rules.critical import Critical
from evaldelta.gating.rules.max_cost_ratio import MaxCostRatio
from evaldelta.gating.rules.max_regression import MaxRegression
from evaldelta.gating.rules.min_cases import MinCases
from evaldelta.gating.rules.min_score import MinScore
from evaldelta.gating.rules.standardized import StandardizedMargin

__all__ = ["RULES", "FigureStyle", "MarginOn", "PairGate", "Rule", "Shape", "register", "rule_of"]

RULES: list[Rule] = [
    MinCases(),
    MaxRegression(),
    MinScore(),
    StandardizedMargin(),
    MaxCostRatio(),
    Critical(),
]


def register(rule: Rule) -> None:
    """Add a rule kind at the end of :data:`RULES` (its results come after the others')."""
    RULES.append(rule)


def rule_of(kind: str) -> Rule | None:
    """The registered rule (or aggregate contrast) whose results carry ``kind``."""
    return next((r for r in (*RULES, *CONTRAST) if r.kind == kind), None)

"""Regression sets in the gate: their cases join the policy's critical cases.

``gate --regression-set FILE`` (or ``[critical] regression_set`` in the policy) makes every
case of the set critical, in union with the policy's own ids, column and tag; without a
policy, the set alone is the policy. A regression case the compared rows lack is reported
as not run and counted inconclusive, as a critical case without a scored attempt is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from evaldelta.gating.policy import Policy
from evaldelta.gating.rules.critical import CriticalRule
from evaldelta.regression._file import Provenance, load_set

__all__ = ["regression_only", "with_regression_sets"]


def _load(paths: Sequence[str | Path]) -> tuple[tuple[Provenance, ...], tuple[str, ...]]:
    cases: list[Provenance] = []
    for path in paths:
        cases.extend(c.provenance() for c in load_set(path).cases)
    return tuple(cases), tuple(str(p) for p in paths)


def with_regression_sets(policy: Policy, paths: Sequence[str | Path]) -> Policy:
    """``policy`` with every case of the sets at ``paths`` critical as well."""
    if not paths:
        return policy
    cases, names = _load(paths)
    rule = policy.critical or CriticalRule()
    merged = dataclasses.replace(
        rule,
        regression=(*rule.regression, *cases),
        regression_sets=(*rule.regression_sets, *names),
    )
    return dataclasses.replace(policy, settings={**policy.settings, "critical": merged})


def regression_only(paths: Sequence[str | Path]) -> Policy:
    """A policy whose only rule is the regression sets' cases (``gate`` without ``--policy``)."""
    label = ", ".join(str(p) for p in paths)
    return with_regression_sets(Policy(path=f"regression set {label}"), paths)

"""The gate: a policy file applied to a comparison gives a verdict CI can trust.

:mod:`evaldelta.gating.policy` parses the policy, :mod:`evaldelta.gating.verdict` applies it
(pure), :mod:`evaldelta.gating.rules` holds the rule kinds (one module each, one registry)
and :mod:`evaldelta.gating.results` what the gate decides. Here,
``compare_with_policy(sources, "gate.toml")`` (also ``evaldelta.gate``) reads the policy,
compares with its metric and critical cases, refuses
(:class:`~evaldelta.errors.GateRefusedError`) when the arms differ in a pin beyond the
declared arm difference and the policy does not allow it, refuses as well when paired
cases saw a different rendered prompt, payload or retrieval than the arms declare
(:mod:`evaldelta.comparison.upstream`; ``[upstream] allow``; both decided in
:mod:`evaldelta.gating.confounds`), and returns the comparison with
its :class:`~evaldelta.gating.verdict.Verdict`. A library user gets the same refusal as the
command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaldelta._util._progress import working
from evaldelta.gating.policy import Policy, load_policy, parse_policy
from evaldelta.gating.verdict import (
    EXIT_CODES,
    FAIL,
    INCONCLUSIVE,
    PASS,
    RuleResult,
    Verdict,
    aggregate_only,
    evaluate,
    judge,
)

if TYPE_CHECKING:
    from evaldelta.comparison.model import Comparison

__all__ = [
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "PASS",
    "Policy",
    "RuleResult",
    "Verdict",
    "aggregate_only",
    "compare_with_policy",
    "evaluate",
    "judge",
    "load_policy",
    "parse_policy",
]


def compare_with_policy(
    sources: Sequence[Any],
    policy_path: str | Path | None,
    *,
    metrics: Sequence[str] | None = None,
    regression_sets: Sequence[str | Path] = (),
    **options: Any,
) -> tuple[Comparison, Verdict]:
    """Load the policy, compare with its metric and critical selector, and evaluate.

    ``metrics`` defaults to the policy's metric (else the sources' default: ``score`` for
    tidy files); the policy's metric is added when missing. ``regression_sets`` (paths of
    regression set files) make their cases critical too; with them, ``policy_path`` may be
    None (the sets alone are the policy). Returns the comparison and the
    :class:`~evaldelta.gating.verdict.Verdict`.
    """
    from evaldelta.comparison import compare
    from evaldelta.errors import MissingColumnError, PolicyError, UsageError
    from evaldelta.gating._regression import regression_only, with_regression_sets
    from evaldelta.gating.policy import critical_selector

    if policy_path is None:
        if not regression_sets:
            raise UsageError("the gate needs a policy file or a regression set")
        policy = regression_only(regression_sets)
    else:
        policy = with_regression_sets(load_policy(policy_path), regression_sets)
    wanted: list[str] | None = list(metrics) if metrics else None
    if policy.metric is not None:
        wanted = wanted or []
        if policy.metric not in wanted:
            wanted.append(policy.metric)
    try:
        with working("evaldelta: comparing the arms for the gate..."):
            allowed = (*options.pop("allowed_pin_differences", ()), *policy.allow_pin_differences)
            upstream = (
                *options.pop("allowed_upstream_changes", ()),
                *policy.allow_upstream_changes,
            )
            result = compare(
                sources,
                metrics=tuple(wanted) if wanted else None,
                critical=critical_selector(policy),
                allowed_pin_differences=allowed,
                allowed_upstream_changes=upstream,
                **options,
            )
    except MissingColumnError as exc:
        if policy.metric is None or exc.location is None or exc.location.field != policy.metric:
            raise
        raise PolicyError(
            f"metric {policy.metric!r} is not a column of {exc.location.path}",
            policy.where("metric", value=policy.metric),
        ) from None
    from evaldelta.gating.confounds import refuse_pins, refuse_upstream

    refuse_pins(policy, result)
    refuse_upstream(policy, result)
    return result, evaluate(policy, result)

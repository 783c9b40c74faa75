"""The gate: a policy file applied to a comparison gives a verdict CI can trust.

:mod:`evaldelta.gating.policy` parses the policy, :mod:`evaldelta.gating.verdict` applies it
(pure) and :mod:`evaldelta.gating._rules` holds the rules of one pair. Here,
``compare_with_policy(sources, "gate.toml")`` (also ``evaldelta.gate``) reads the policy,
compares with its metric and critical cases, refuses
(:class:`~evaldelta.errors.GateRefusedError`) when the arms differ in a pin beyond the
declared arm difference and the policy does not allow it, refuses as well when paired
cases saw a different rendered prompt, payload or retrieval than the arms declare
(:mod:`evaldelta.comparison.upstream`; ``[upstream] allow``), and returns the comparison with
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
    from evaldelta.model import Comparison

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
    if result.pin_differences:
        from evaldelta.errors import GateRefusedError
        from evaldelta.report._pins import fmt_pin

        first = result.pin_differences[0]
        values = ", ".join(f"{a} {fmt_pin(v)}" for a, v in first.values.items())
        keys = ", ".join(repr(d.key) for d in result.pin_differences)
        raise GateRefusedError(
            f"{policy.path}: the gate refuses to decide: the arms differ in {keys} "
            f"(e.g. {first.key}: {values}) beyond the declared arm difference; hold it fixed "
            f"and rerun, or allow it in the policy: [pins] allow = [{keys}]"
        )
    _refuse_upstream(policy, result)
    return result, evaluate(policy, result)


def _refuse_upstream(policy: Policy, result: Comparison) -> None:
    """Refuse a comparison whose prompt, payload or retrieval moved without a declaration."""
    from evaldelta.report._upstream import confounds, upstream_sentence

    found = confounds(result)
    if not found:
        return
    from evaldelta.errors import GateRefusedError

    first = found[0]
    example = f" (e.g. {first.examples[0].case_id})" if first.examples else ""
    kinds = ", ".join(f'"{k}"' for k in dict.fromkeys(c.kind for c in found))
    raise GateRefusedError(
        f"{policy.path}: the gate refuses to decide: {upstream_sentence(first)}{example}; "
        f"find the upstream change and rerun, or allow it in the policy: "
        f"[upstream] allow = [{kinds}]"
    )

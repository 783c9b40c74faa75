"""The gate's decisions on confounds: arms that differ in a pin, or in an upstream input.

A verdict is about the declared arm difference only: when the arms also differ in a pin the
policy does not allow (``[pins] allow``), or paired cases saw a different rendered prompt,
payload or retrieval than the arms declare (``[upstream] allow``), the gate refuses to
decide (:class:`~evaldelta.errors.GateRefusedError`). Those decisions, and the words they are
stated in, live here; the reports render the same sentences (``report/_upstream.py``,
``report/_pins.py``) and never decide.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from evaldelta.errors import GateRefusedError

if TYPE_CHECKING:
    from evaldelta.comparison.model import Comparison, PinValue, UpstreamCheck
    from evaldelta.gating.policy import Policy

__all__ = [
    "KIND_WORDS",
    "WHO",
    "confounds",
    "declare_phrase",
    "fmt_pin",
    "refuse_pins",
    "refuse_upstream",
    "upstream_sentence",
]

KIND_WORDS = {
    "prompt": "rendered prompt",
    "payload": "request payload",
    "retrieval": "set of retrieved documents",
}
WHO = {
    "pins": "their pins differ",
    "expect_change": "--expect-change",
    "policy": "the policy's [upstream] allow",
}


def fmt_pin(value: PinValue) -> str:
    """A pin as text: null as ``null``, booleans lower-case, floats as written (repr)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "n/a"
    return str(value)


def declare_phrase(check: UpstreamCheck) -> str:
    """What the pair declares: ``which declare only a model change``, ``... no change``."""
    kinds = list(check.declared)
    if not kinds:
        return "which declare no upstream change"
    if kinds == ["model"]:
        return "which declare only a model change"
    return f"which declare a {' and '.join(kinds)} change"


def upstream_sentence(check: UpstreamCheck) -> str:
    """``12 of 40 paired cases saw a different rendered prompt between a and b, ...``."""
    what = KIND_WORDS[check.kind]
    pair = f"between {check.baseline} and {check.candidate}"
    if not check.compared:
        return (
            f"the {what} is not recorded for both arms on any of {check.paired:,} paired "
            f"cases {pair}, so it cannot be compared"
        )
    unrecorded = check.paired - check.compared
    tail = f" ({unrecorded:,} more paired cases lack the hash in one arm)" if unrecorded else ""
    head = f"{check.differing:,} of {check.compared:,} paired cases saw a different {what} {pair}"
    if not check.differing:
        return head + tail
    if check.expected_by:
        why = WHO.get(check.expected_by, check.expected_by)
        return f"{head}, as expected: the arms declare a {check.kind} change ({why}){tail}"
    return f"{head}, {declare_phrase(check)}{tail}"


def confounds(comparison: Comparison) -> list[UpstreamCheck]:
    """The (pair, kind) checks that saw undeclared upstream differences."""
    return [c for c in comparison.upstream if c.confounded]


def refuse_pins(policy: Policy, result: Comparison) -> None:
    """Refuse a comparison whose arms differ in a pin beyond the declared arm difference."""
    if not result.pin_differences:
        return
    first = result.pin_differences[0]
    values = ", ".join(f"{a} {fmt_pin(v)}" for a, v in first.values.items())
    keys = ", ".join(repr(d.key) for d in result.pin_differences)
    raise GateRefusedError(
        f"{policy.path}: the gate refuses to decide: the arms differ in {keys} "
        f"(e.g. {first.key}: {values}) beyond the declared arm difference; hold it fixed "
        f"and rerun, or allow it in the policy: [pins] allow = [{keys}]"
    )


def refuse_upstream(policy: Policy, result: Comparison) -> None:
    """Refuse a comparison whose prompt, payload or retrieval moved without a declaration."""
    found = confounds(result)
    if not found:
        return
    first = found[0]
    example = f" (e.g. {first.examples[0].case_id})" if first.examples else ""
    kinds = ", ".join(f'"{k}"' for k in dict.fromkeys(c.kind for c in found))
    raise GateRefusedError(
        f"{policy.path}: the gate refuses to decide: {upstream_sentence(first)}{example}; "
        f"find the upstream change and rerun, or allow it in the policy: "
        f"[upstream] allow = [{kinds}]"
    )

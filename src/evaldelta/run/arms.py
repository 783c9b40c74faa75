"""What one attempt of an arm does: a model arm makes one call; a cascade makes one or two.

A cascade calls its cheap step, runs the verifier on the output, and when the verifier fails
calls its strong step instead; the attempt records which model answered (``model_used``),
whether it escalated, every call with its tokens, cost and latency, and the verifier's
result (``verifier_json``). The calls themselves go through a :data:`Caller` (the
scheduler's: cache, lanes, prices, store) and a judge verifier through a :data:`Verify`,
so this module makes no I/O of its own. A verifier that fails (its callable raises, its
regex times out on the output: see :mod:`evaldelta.checks._inline`) makes the attempt an
error whose message names the verifier; it neither keeps nor escalates the cheap output.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from evaldelta.errors import EvaldeltaError
from evaldelta.run.checking import CheckRunner, Verifier, VerifierResult
from evaldelta.run.config import Arm, CascadeArm, ModelArm, RunConfig
from evaldelta.run.coupling import coupled_arm

__all__ = ["Call", "Caller", "Outcome", "Verify", "run_attempt"]


@dataclass(frozen=True)
class Call:
    """One model call as recorded: which step, model and endpoint, and what it cost."""

    step: str
    model: str
    cache_key: str
    cached: bool = False
    text: str | None = None
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    error: str | None = None
    seed: int | None = None  # the seed sent (an arm's own, or --couple's for the case)


Caller = Callable[[ModelArm, Mapping[str, Any], str, int], Awaitable[Call]]
Verify = Callable[[Verifier, str, Mapping[str, Any]], Awaitable[VerifierResult]]


def _total(values: Sequence[float | int | None]) -> Any:
    """Sum of known values; None when any is unknown (an unknown cost is not zero)."""
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


@dataclass(frozen=True)
class Outcome:
    """One finished attempt (before scoring)."""

    output: str | None
    error: str | None
    model_used: str | None
    model_version: str | None
    escalated: bool | None
    calls: tuple[Call, ...]
    verifier: Mapping[str, Any] | None = None  # a cascade's verifier result

    def values(self) -> dict[str, Any]:
        """The attempt's columns for the store (score is added by the scheduler)."""
        return {
            "output": self.output,
            "error": self.error,
            "model_used": self.model_used,
            "model_version": self.model_version,
            "escalated": self.escalated,
            "input_tokens": _total([c.input_tokens for c in self.calls]),
            "output_tokens": _total([c.output_tokens for c in self.calls]),
            "cost_usd": _total([c.cost_usd for c in self.calls]),
            "latency_ms": _total([c.latency_ms for c in self.calls]),
            "calls_json": json.dumps([asdict(c) for c in self.calls], default=str),
            "verifier_json": (
                json.dumps(self.verifier, default=str) if self.verifier is not None else None
            ),
        }


async def _step(
    caller: Caller,
    arm: ModelArm,
    config: RunConfig,
    case: Mapping[str, Any],
    case_id: str,
    repeat: int,
) -> Call:
    """One model call, coupled under ``--couple`` (the seed sent is recorded with the call)."""
    arm = coupled_arm(arm, config, case_id, repeat)
    call = await caller(arm, case, case_id, repeat)
    return replace(call, seed=arm.params.seed)


async def run_attempt(
    arm: Arm,
    config: RunConfig,
    case: Mapping[str, Any],
    case_id: str,
    repeat: int,
    caller: Caller,
    verify: Verify | None = None,
) -> Outcome:
    """Run one attempt of ``arm`` on one case in one repeat.

    ``verify`` runs a cascade's verifier (default: in-process, no judge provider).
    """
    if isinstance(arm, ModelArm):
        call = await _step(caller, arm, config, case, case_id, repeat)
        return Outcome(call.text, call.error, arm.model, call.model_version, None, (call,))
    verify = verify or CheckRunner({}, (), config.seed).verify
    return await _cascade(arm, config, case, case_id, repeat, caller, verify)


async def _cascade(
    arm: CascadeArm,
    config: RunConfig,
    case: Mapping[str, Any],
    case_id: str,
    repeat: int,
    caller: Caller,
    verify: Verify,
) -> Outcome:
    cheap, strong = config.model_arm(arm.cheap), config.model_arm(arm.strong)
    first = await _step(caller, cheap, config, case, case_id, repeat)
    if first.error is not None:
        return Outcome(None, f"cheap step: {first.error}", cheap.model, None, False, (first,))
    try:
        verdict = await verify(arm.verifier, first.text or "", case)
    except EvaldeltaError as exc:  # e.g. a verifier regex that timed out on this output
        message = f"verifier: {exc}"
        return Outcome(first.text, message, cheap.model, first.model_version, False, (first,))
    except Exception as exc:  # a user's verifier callable or the judge's call failed
        message = f"verifier raised {type(exc).__name__}: {exc}"
        return Outcome(first.text, message, cheap.model, first.model_version, False, (first,))
    why = dict(verdict.detail)
    if verdict.passed:
        return Outcome(first.text, None, cheap.model, first.model_version, False, (first,), why)
    second = await _step(caller, strong, config, case, case_id, repeat)
    error = f"strong step: {second.error}" if second.error is not None else None
    return Outcome(
        second.text, error, strong.model, second.model_version, True, (first, second), why
    )

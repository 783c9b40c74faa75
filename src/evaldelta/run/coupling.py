"""Arms that share their randomness (``run --couple``): one seed per (case, repeat), every arm.

Without coupling each arm's sampling draws its own random numbers, so on a case where both
arms could go either way the paired delta carries both arms' sampling noise. With coupling,
every arm's call on one (case, repeat) sends the same seed, derived from the run's seed, the
case id and the repeat (:func:`couple_seed`); a provider whose sampler takes that seed then
draws the same random numbers for every arm, and the arms' outcomes move together where
their distributions agree. The paired delta's variance falls by what the arms' per-case
outcomes covary (the comparison reports the realised correlation beside the paired SE and
the SE independent draws would give). Corvelo Benz et al., "Evaluation of large language
models via coupled token generation" (AISTATS 2026, arXiv 2502.01754) measure up to 75%
fewer samples for the same conclusions.

The seed is sent where the provider kind takes one (:data:`SEEDED_KINDS`): an
OpenAI-compatible server's ``seed`` field, and the local llama.cpp provider's sampler seed
(there the draw behind each token is shared, inverse-CDF over each model's own candidates:
true coupled generation for the same model under two prompts or temperatures, or two local
models). Anthropic's Messages API takes no seed, and a litellm route may not: such an arm is
not coupled, one :class:`CouplingWarning` says so, and its pins record ``couple = false``.
A seed makes one model's sampling repeatable; two different hosted models share no random
source inside their samplers, so the same seed aligns nothing between them.

Coupling replaces an arm's fixed ``seed`` for its calls; the seed sent is part of the
response cache's key (the parameters) and of each recorded call (``calls_json``).
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import replace
from typing import Any

from evaldelta.run.config import Arm, CascadeArm, ModelArm, RunConfig, provider_for

__all__ = [
    "SEEDED_KINDS",
    "CouplingWarning",
    "couple_seed",
    "coupled_arm",
    "coupling_pins",
    "uncoupled_arms",
    "warn_uncoupled",
]

# provider kinds whose calls take a sampling seed: an OpenAI-compatible ``seed`` field, and
# the in-process llama.cpp sampler's seed (anthropic has none; litellm's route may drop it)
SEEDED_KINDS = frozenset({"openai", "local"})
_SEED_BITS = 31  # below llama.cpp's "random seed" sentinel (2**32 - 1) and any int32 field


class CouplingWarning(UserWarning):
    """``--couple`` was asked for, and an arm's provider takes no seed: it is not coupled."""


def couple_seed(run_seed: int, case_id: str, repeat: int) -> int:
    """The seed every arm sends on one (case, repeat): SHA-256 of the three, 31 bits."""
    text = f"evaldelta-couple\x00{run_seed}\x00{case_id}\x00{repeat}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> (64 - _SEED_BITS)


def _seeded(arm: ModelArm, config: RunConfig) -> bool:
    return provider_for(config, arm.provider).kind in SEEDED_KINDS


def coupled_arm(arm: ModelArm, config: RunConfig, case_id: str, repeat: int) -> ModelArm:
    """``arm`` with the (case, repeat)'s coupling seed, when the run couples and it takes one."""
    if not config.couple or not _seeded(arm, config):
        return arm
    seed = couple_seed(config.seed, case_id, repeat)
    return replace(arm, params=replace(arm.params, seed=seed))


def _steps(arm: Arm, config: RunConfig) -> tuple[ModelArm, ...]:
    if isinstance(arm, CascadeArm):
        return (config.model_arm(arm.cheap), config.model_arm(arm.strong))
    return (arm,)


def coupling_pins(arm: Arm, config: RunConfig) -> dict[str, Any]:
    """What an arm pins about coupling: nothing without ``--couple``.

    ``couple`` is true when every model step of the arm takes the seed; ``couple_run_seed``
    is the run seed the per-(case, repeat) seeds derive from; ``couple_note`` says why an
    arm is not coupled.
    """
    if not config.couple:
        return {}
    lacking = [s for s in _steps(arm, config) if not _seeded(s, config)]
    pins: dict[str, Any] = {"couple": not lacking, "couple_run_seed": config.seed}
    if lacking:
        kinds = sorted({provider_for(config, s.provider).kind for s in lacking})
        pins["couple_note"] = (
            f"provider kind {', '.join(repr(k) for k in kinds)} takes no seed: this arm's "
            "draws are not coupled to the other arms'"
        )
    return pins


def uncoupled_arms(config: RunConfig) -> list[str]:
    """The run's arms that ``--couple`` cannot couple (their provider takes no seed)."""
    if not config.couple:
        return []
    return [a.name for a in config.run_arms if not coupling_pins(a, config)["couple"]]


def warn_uncoupled(config: RunConfig) -> str | None:
    """One :class:`CouplingWarning` naming every arm that cannot be coupled; its message."""
    names = uncoupled_arms(config)
    if not names:
        return None
    kinds = sorted(
        {
            provider_for(config, s.provider).kind
            for a in config.run_arms
            if a.name in names
            for s in _steps(a, config)
            if not _seeded(s, config)
        }
    )
    message = (
        f"--couple: arm{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)} "
        f"call{'' if len(names) > 1 else 's'} a provider that takes no seed "
        f"({', '.join(kinds)}), so {'their' if len(names) > 1 else 'its'} draws are not "
        "coupled to the other arms' (recorded in the pins as couple = false); the seed "
        "is sent to openai and local providers only"
    )
    warnings.warn(message, CouplingWarning, stacklevel=2)
    return message

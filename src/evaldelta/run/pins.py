"""What a run pins and records, and the run id derived from it.

The run id is a hash of everything that determines the attempts (the case file's bytes,
repeats, every arm's pins, the scorer, the free-form pins), so restarting the same command
finds the same run and continues it, while a changed template or temperature starts a new
run (whose unchanged calls are still answered from the response cache).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from evaldelta import __version__
from evaldelta.run.cases import CaseSet
from evaldelta.run.checking import checks_pins
from evaldelta.run.config import Arm, ModelArm, RunConfig, provider_for
from evaldelta.run.coupling import coupling_pins
from evaldelta.run.prices import PriceTable

__all__ = ["arm_pins", "run_id", "run_pins", "scorer_pins"]


def scorer_pins(config: RunConfig) -> dict[str, Any] | None:
    """The run's scorer: a regex/python check, or a checks file with its sha256 and judges."""
    if config.checks is not None:
        return checks_pins(config.checks)
    return config.score.describe() if config.score is not None else None


def _model_pins(arm: ModelArm, config: RunConfig, prices: PriceTable) -> dict[str, Any]:
    provider = provider_for(config, arm.provider)
    price = prices.prices.get(arm.model)
    return {
        "kind": "model",
        "provider": arm.provider,
        "provider_kind": provider.kind,
        "base_url": provider.base_url,
        "api_key_env": provider.api_key_env,  # the variable's name, never its value
        "model": arm.model,
        "params": asdict(arm.params),
        "template_sha256": arm.template.sha256,
        "template": {"system": arm.template.system, "user": arm.template.user},
        "price_per_mtok": asdict(price) if price is not None else None,
        "pins": dict(arm.pins),
        **coupling_pins(arm, config),
    }


def arm_pins(arm: Arm, config: RunConfig, prices: PriceTable) -> dict[str, Any]:
    """The pins of one arm (a cascade nests its steps' pins); ``couple*`` under ``--couple``."""
    if isinstance(arm, ModelArm):
        return _model_pins(arm, config, prices)
    return {
        "kind": "cascade",
        "cheap": {"arm": arm.cheap, **_model_pins(config.model_arm(arm.cheap), config, prices)},
        "strong": {"arm": arm.strong, **_model_pins(config.model_arm(arm.strong), config, prices)},
        "verifier": arm.verifier.describe(),
        "pins": dict(arm.pins),
        **coupling_pins(arm, config),
    }


def run_pins(
    config: RunConfig, prices: PriceTable, order: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Run-level pins: the free-form pins, the scorer, the judge, prices, seed, version.

    ``order``: how a run that stops once decided orders its cases (``until_decided``).
    """
    return {
        **dict(config.pins),
        "scorer": scorer_pins(config),
        "judge": (scorer_pins(config) or {}).get("judges") or None,
        "prices": prices.source,
        "seed": config.seed,
        "evaldelta_version": __version__,
        **({"until_decided": order} if order is not None else {}),
    }


def run_id(
    config: RunConfig, cases: CaseSet, prices: PriceTable, order: dict[str, Any] | None = None
) -> str:
    """A short id that is the same for the same run and differs when anything pinned differs.

    A run that stops once decided adds its ``order`` (seed, batch size, slicing column and
    policy hash): the same cases sent in another order, or judged by another policy, are
    another run (whose calls the response cache still answers).
    """
    pins = {a.name: arm_pins(a, config, prices) for a in config.run_arms}
    for value in pins.values():  # the price table and the endpoint's limits do not change draws
        for part in (value, value.get("cheap", {}), value.get("strong", {})):
            part.pop("price_per_mtok", None)
    identity = {
        "cases_sha256": cases.sha256,
        "repeats": config.repeats,
        "arms": pins,
        "scorer": scorer_pins(config),
        "pins": dict(config.pins),
        **({"until_decided": order} if order is not None else {}),
    }
    text = json.dumps(identity, sort_keys=True, default=str)
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

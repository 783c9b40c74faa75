"""What a run checks and opens before its first call: prices, templates, providers, keys.

Split from :mod:`evaldelta.run.execute` (the scheduler), which it serves with
:func:`prepare`, :func:`open_providers` and :func:`redactor`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping

from evaldelta.checks import missing_field
from evaldelta.errors import Location, MissingColumnError, UsageError
from evaldelta.provider import Provider
from evaldelta.run.cases import CaseSet
from evaldelta.run.checking import ChecksVerifier
from evaldelta.run.config import CascadeArm, ModelArm, RunConfig, provider_for
from evaldelta.run.prices import PriceTable
from evaldelta.run.providers._common import Redactor
from evaldelta.run.providers.registry import create_provider, key_variable

__all__ = ["open_providers", "prepare", "redactor"]


def prepare(config: RunConfig, cases: CaseSet, budget: str | None = None) -> PriceTable:
    """The price table, once every check that needs no call has passed (prices, templates).

    ``budget`` names a spending bound beside ``--max-cost`` (``--max-usd``): either needs a
    price for every model.
    """
    prices = PriceTable.load(config.prices)
    _check_prices(config, prices, "--max-cost" if config.max_cost is not None else budget)
    _prerender(config, cases)
    return prices


@contextlib.asynccontextmanager
async def open_providers(
    config: RunConfig, providers: Mapping[str, Provider] | None
) -> AsyncIterator[dict[str, Provider]]:
    """Every provider the run calls: the given ones, and those it creates (closed after)."""
    owned: list[Provider] = []
    given = dict(providers or {})
    try:
        for name in [*_needed_providers(config), *_judge_providers(config)]:
            if name not in given:
                pc = provider_for(config, name)
                given[name] = create_provider(pc.kind, pc.factory_options())
                owned.append(given[name])
        yield given
    finally:
        for provider in owned:
            await provider.aclose()


def _judge_providers(config: RunConfig) -> list[str]:
    """The providers judge checks call: the scoring checks' and judge verifiers'."""
    names: list[str] = []
    if config.checks is not None:
        names += [j.provider for j in config.checks.judges if j.mode == "single"][:1]
    for arm in config.run_arms:
        verifier = arm.verifier if isinstance(arm, CascadeArm) else None
        if isinstance(verifier, ChecksVerifier) and verifier.judge is not None:
            names.append(verifier.judge_check.provider)
    return list(dict.fromkeys(names))


def _needed_providers(config: RunConfig) -> list[str]:
    names: list[str] = []
    for arm in config.run_arms:
        steps = [arm] if isinstance(arm, ModelArm) else [
            config.model_arm(arm.cheap), config.model_arm(arm.strong)
        ]  # fmt: skip
        for step in steps:
            if step.provider not in names:
                names.append(step.provider)
    return names


def _check_prices(config: RunConfig, prices: PriceTable, budget: str | None) -> None:
    if budget is None:
        return
    models: set[str] = set()
    for arm in config.run_arms:
        if isinstance(arm, CascadeArm):
            models |= {config.model_arm(arm.cheap).model, config.model_arm(arm.strong).model}
        else:
            models.add(arm.model)
    missing = sorted(m for m in models if not prices.has(m))
    if missing:
        raise UsageError(
            f"{budget} needs a price for every model, and {', '.join(missing)} has none; "
            'add it to a prices file (prices = "prices.toml" in the run config)'
        )


def _prerender(config: RunConfig, cases: CaseSet) -> None:
    """Render every template on every case now: a missing field fails before any call."""
    for arm in config.arms:
        if isinstance(arm, ModelArm):
            for case_id, case in cases.rows:
                arm.template.render(case, case_id)
    needs: list[tuple[str, str | None]] = []
    if config.checks is not None:
        needs.append(("--checks", missing_field(config.checks, cases.columns)))
    for arm in config.run_arms:
        if isinstance(arm, CascadeArm) and isinstance(arm.verifier, ChecksVerifier):
            lacking = [f for f in arm.verifier.fields if f not in cases.columns]
            if lacking:
                needs.append((f"the verifier of cascade {arm.name!r}",
                              f"it reads case field {lacking[0]!r}"))  # fmt: skip
    for who, problem in needs:
        if problem is not None:
            raise MissingColumnError(
                f"{who}: {problem}, which the cases file lacks (columns: "
                f"{', '.join(cases.columns)})",
                Location(str(cases.path)),
            )


def redactor(config: RunConfig) -> Redactor:
    """A redactor over the keys of every provider the run may call."""
    names = [*_needed_providers(config), *_judge_providers(config)]
    variables = []
    for name in names:
        pc = provider_for(config, name)
        variable = key_variable(pc.kind, pc.api_key_env)
        if variable is not None:
            variables.append(variable)
    return Redactor.from_env(variables)

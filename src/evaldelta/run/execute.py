"""The scheduler: plan the attempts, interleave them, call, record, resume, stop at a budget.

Order: repeat by repeat, case by case, and within a case every arm, with the arm order
rotated from case to case; so a provider's drift over the run (load, a silent model update)
lands on every arm alike instead of on whichever arm ran last. Workers take attempts in
that order; each :class:`~evaldelta.run.limits.Lane` bounds its provider's concurrency and
rate. An attempt counts only after it is committed to the store; on restart, committed
attempts are skipped and every successful call is answered from the response cache, so a
run killed at any moment continues without losing a finished attempt or paying twice for a
finished call. ``max_cost`` stops launching new attempts once the spend reaches it; calls in
flight finish and are recorded (so the spend can pass the bound by those calls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaldelta import __version__
from evaldelta.checks._score import metric_names, missing_field
from evaldelta.errors import Location, MissingColumnError, UsageError
from evaldelta.run.arms import Call, Outcome, run_attempt
from evaldelta.run.cache import cache_key
from evaldelta.run.cases import CaseSet
from evaldelta.run.checking import CheckRunner, ChecksVerifier
from evaldelta.run.config import Arm, CascadeArm, ModelArm, RunConfig, provider_for
from evaldelta.run.limits import Clock, Lane, RetryPolicy
from evaldelta.run.pins import arm_pins, run_id, run_pins, scorer_pins
from evaldelta.run.prices import PriceTable
from evaldelta.run.providers.base import (
    ChatMessage,
    Completion,
    GenerationParams,
    Provider,
    ProviderError,
)
from evaldelta.run.providers.registry import create_provider
from evaldelta.run.writer import GroupWriter
from evaldelta.store import Store

__all__ = ["Progress", "RunSummary", "WorkItem", "execute", "interleave"]


@dataclass(frozen=True)
class WorkItem:
    """One attempt to make."""

    repeat: int
    case_index: int
    arm: str


def interleave(n_cases: int, arms: Sequence[str], repeats: int) -> Iterator[WorkItem]:
    """Repeat-major, then case; arms rotated by (case + repeat) so none is always first."""
    k = len(arms)
    for repeat in range(repeats):
        for case in range(n_cases):
            shift = (case + repeat) % k
            for arm in (*arms[shift:], *arms[:shift]):
                yield WorkItem(repeat, case, arm)


@dataclass
class Progress:
    """Live counts, updated as attempts are committed."""

    total: int = 0
    skipped: int = 0  # already in the store when the run started
    done: int = 0  # committed in this session
    errors: int = 0
    spent_usd: float = 0.0  # paid calls in this session with a known price
    paid_calls: int = 0
    cached_calls: int = 0
    retries: int = 0


@dataclass(frozen=True)
class RunSummary:
    """What a run (or this session of it) did."""

    run_id: str
    store: str
    status: str  # complete | stopped: max cost | incomplete: errors
    progress: Progress
    new_run: bool
    arms: tuple[str, ...] = field(default_factory=tuple)


class _Session:
    """One session of one run: lanes, the store, prices, and the call path."""

    def __init__(
        self,
        config: RunConfig,
        cases: CaseSet,
        store: Store,
        prices: PriceTable,
        providers: Mapping[str, Provider],
        clock: Clock,
        checker: CheckRunner,
    ) -> None:
        self.config = config
        self.checker = checker
        self.cases = cases
        self.store = store
        self.writer = GroupWriter(store)
        self.prices = prices
        self.clock = clock
        self.progress = Progress()
        self.stop_reason: str | None = None
        self.inflight: dict[str, asyncio.Future[Completion | ProviderError]] = {}
        self.lanes: dict[str, Lane] = {}
        for name, provider in providers.items():
            pc = provider_for(config, name)
            self.lanes[name] = Lane(
                provider,
                clock=clock,
                retry=RetryPolicy(max_retries=pc.max_retries),
                max_concurrency=pc.max_concurrency,
                timeout=pc.timeout,
                requests_per_minute=pc.requests_per_minute,
                tokens_per_minute=pc.tokens_per_minute,
            )
        for lane in self.lanes.values():
            lane.retry.rng.seed(config.seed)

    async def call(self, arm: ModelArm, case: Mapping[str, Any], case_id: str, repeat: int) -> Call:
        """One call of a model step: from the cache, or paid and committed to the cache."""
        messages = arm.template.render(case, case_id)
        identity = provider_for(self.config, arm.provider).identity()
        key = cache_key(identity, arm.model, arm.params, messages, repeat)
        hit = self.store.cached(key)
        if hit is not None:
            self.progress.cached_calls += 1
            return self._call(arm, key, True, Completion(
                text=hit["text"], model_version=hit["model_version"],
                input_tokens=hit["input_tokens"], output_tokens=hit["output_tokens"],
                finish_reason=hit["finish_reason"], latency_ms=hit["latency_ms"],
            ))  # fmt: skip
        shared = self.inflight.get(key)
        if shared is not None:  # the same draw is being paid for right now: wait for it
            result = await asyncio.shield(shared)
            if isinstance(result, ProviderError):
                return Call(step=arm.name, model=arm.model, cache_key=key, error=str(result))
            self.progress.cached_calls += 1
            return self._call(arm, key, True, result)
        task = asyncio.ensure_future(self._pay(arm, key, messages))
        self.inflight[key] = task
        try:
            result = await asyncio.shield(task)
        finally:
            self.inflight.pop(key, None)
        if isinstance(result, ProviderError):
            return Call(step=arm.name, model=arm.model, cache_key=key, error=str(result))
        call = self._call(arm, key, False, result)
        self.progress.paid_calls += 1
        self.progress.spent_usd += call.cost_usd or 0.0
        return call

    async def _pay(
        self, arm: ModelArm, key: str, messages: Sequence[ChatMessage]
    ) -> Completion | ProviderError:
        """Make the call and commit its response to the cache before anyone counts it."""
        lane = self.lanes[arm.provider]
        before = lane.retries
        try:
            completion = await lane.call(arm.model, messages, arm.params)
        except ProviderError as exc:
            return exc
        finally:
            self.progress.retries += lane.retries - before
        response = {
            "provider": arm.provider, "model": arm.model, "text": completion.text,
            "model_version": completion.model_version, "input_tokens": completion.input_tokens,
            "output_tokens": completion.output_tokens, "finish_reason": completion.finish_reason,
            "latency_ms": completion.latency_ms,
        }  # fmt: skip
        await self.writer.put_response(key, response)
        return completion

    def _call(self, arm: ModelArm, key: str, cached: bool, c: Completion) -> Call:
        return Call(
            step=arm.name,
            model=arm.model,
            cache_key=key,
            cached=cached,
            text=c.text,
            model_version=c.model_version,
            input_tokens=c.input_tokens,
            output_tokens=c.output_tokens,
            cost_usd=self.prices.cost(arm.model, c.input_tokens, c.output_tokens),
            latency_ms=c.latency_ms,
        )

    async def score(
        self,
        rid: str,
        arm: str,
        case_id: str,
        repeat: int,
        outcome: Outcome,
        case: Mapping[str, Any],
    ) -> tuple[float | None, str | None]:
        """The scorer's value (None when there is no scorer or the attempt failed).

        With checks, the per-check metrics are committed to the store's scores table first.
        """  # fmt: skip
        checks = self.config.checks
        if checks is not None:
            output = outcome.output if outcome.error is None else None
            extra = {"case_id": case_id, "arm": arm, "model_used": outcome.model_used,
                     "model_version": outcome.model_version, "repeat": repeat}  # fmt: skip
            result = await self.checker.score(checks, output, case, extra)
            self.store.put_scores(rid, [(arm, case_id, repeat, result.metrics)], follow_pass=False)
            return result.passed, outcome.error or result.error
        check = self.config.score
        if check is None or outcome.error is not None or outcome.output is None:
            return None, outcome.error
        try:
            return check.value(outcome.output, case), None
        except Exception as exc:  # a user's scoring callable failed
            return None, f"scorer raised {type(exc).__name__}: {exc}"


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


def _check_prices(config: RunConfig, prices: PriceTable) -> None:
    if config.max_cost is None:
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
            f"--max-cost needs a price for every model, and {', '.join(missing)} has none; "
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


class _LaneProvider:
    """A provider that calls through a session's lane and books the cost of each call."""

    def __init__(self, lane: Lane, session: _Session) -> None:
        self.lane = lane
        self.session = session
        self.name = lane.provider.name

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        before = self.lane.retries
        try:
            completion = await self.lane.call(model, messages, params)
        finally:
            self.session.progress.retries += self.lane.retries - before
        cost = self.session.prices.cost(model, completion.input_tokens, completion.output_tokens)
        self.session.progress.paid_calls += 1
        self.session.progress.spent_usd += cost or 0.0
        return completion

    async def aclose(self) -> None:
        """The lane's provider is closed by the session's owner, not here."""


async def execute(
    config: RunConfig,
    cases: CaseSet,
    *,
    providers: Mapping[str, Provider] | None = None,
    clock: Clock | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` over ``cases``; see the module docstring for the order."""
    prices = PriceTable.load(config.prices)
    _check_prices(config, prices)
    _prerender(config, cases)
    rid = run_id(config, cases, prices)
    arms: dict[str, Arm] = {a.name: a for a in config.run_arms}
    owned: list[Provider] = []
    given = dict(providers or {})
    for name in [*_needed_providers(config), *_judge_providers(config)]:
        if name not in given:
            pc = provider_for(config, name)
            given[name] = create_provider(pc.kind, pc.factory_options())
            owned.append(given[name])
    store = Store(config.store)
    try:
        new = store.begin_run(
            rid,
            cases_path=str(cases.path),
            cases_sha256=cases.sha256,
            cases=cases.rows,
            case_columns=cases.columns,
            repeats=config.repeats,
            arms={name: arm_pins(a, config, prices) for name, a in arms.items()},
            pins=run_pins(config, prices),
            evaldelta_version=__version__,
        )
        if config.checks is not None:
            store.begin_scoring(
                rid, source="run --checks", checks_path=config.checks.path,
                checks_sha256=config.checks.sha256,
                metrics=metric_names(config.checks, pairwise=False),
                meta=scorer_pins(config) or {}, score_is_pass=True, replace=False,
            )  # fmt: skip
        names = {n for a in config.arms for n in (a.name, getattr(a, "model", None)) if n}
        checker = CheckRunner(given, sorted(names), config.seed)
        session = _Session(config, cases, store, prices, given, clock or Clock(), checker)
        # judge calls go through the same lanes as the arms: the provider's concurrency bound,
        # rate limits, retries and timeout apply, and their cost counts toward --max-cost
        checker.providers = {
            name: _LaneProvider(lane, session) for name, lane in session.lanes.items()
        }
        try:
            status = await _work(session, rid, list(arms), arms, on_progress)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # every finished attempt is already committed; say so, and let it resume
            store.set_status(rid, "interrupted")
            raise
        finally:
            await session.writer.aclose()
        store.finish_run(rid, status)
    finally:
        for provider in owned:
            await provider.aclose()
        store.close()
    return RunSummary(rid, str(config.store), status, session.progress, new, tuple(arms))


async def _work(
    session: _Session,
    rid: str,
    names: list[str],
    arms: Mapping[str, Arm],
    on_progress: Callable[[Progress], None] | None,
) -> str:
    config, cases, progress = session.config, session.cases, session.progress
    finished = session.store.finished(rid)
    items = list(interleave(len(cases.rows), names, config.repeats))
    progress.total = len(items)
    pending = [
        it for it in items if (it.arm, cases.rows[it.case_index][0], it.repeat) not in finished
    ]
    progress.skipped = len(items) - len(pending)
    todo = iter(pending)
    if on_progress is not None:
        on_progress(progress)

    async def worker() -> None:
        while session.stop_reason is None:
            if config.max_cost is not None and progress.spent_usd >= config.max_cost:
                session.stop_reason = "stopped: max cost"
                return
            item = next(todo, None)
            if item is None:
                return
            case_id, case = cases.rows[item.case_index]
            outcome = await run_attempt(arms[item.arm], config, case, case_id, item.repeat,
                                        session.call, session.checker.verify)  # fmt: skip
            score, error = await session.score(rid, item.arm, case_id, item.repeat, outcome, case)
            values = {**outcome.values(), "score": score, "error": error}
            await session.writer.put_attempt(rid, item.arm, case_id, item.repeat, values)
            progress.done += 1
            progress.errors += error is not None
            if on_progress is not None:
                on_progress(progress)

    n_workers = max(1, sum(lane.max_concurrency for lane in session.lanes.values()))
    await asyncio.gather(*(worker() for _ in range(n_workers)))
    if session.stop_reason is not None:
        return session.stop_reason
    return "incomplete: errors" if progress.errors else "complete"

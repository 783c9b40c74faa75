"""The scheduler: plan the attempts, interleave them, call, record, resume, stop at a budget.

Order: repeat by repeat, case by case, and within a case every arm, with the arm order
rotated from case to case; so a provider's drift over the run (load, a silent model update)
lands on every arm alike instead of on whichever arm ran last. Workers take attempts in
that order; each :class:`~evaldelta.run.limits.Lane` bounds its provider's concurrency and
rate. An attempt counts only after it is committed to the store; on restart, committed
attempts are skipped and every successful call is answered from the response cache, so a
run killed at any moment continues without losing a finished attempt or paying twice for a
finished call. ``max_cost`` stops launching new attempts once the spend reaches it, and
``max_wall_seconds`` once the run has taken that long; calls in flight finish and are recorded
(so the spend can pass the bound by those calls).

A failure that no retry or later call can fix (HTTP 401/403, a 404 model, an unknown host)
stops the run early once ``stop_after_identical_errors`` calls to one provider failed alike:
the rest are left unattempted, the status says ``stopped: repeated error`` and the summary
why. Every text stored (outputs, errors, calls, the response cache, check reasons) passes
through a :class:`~evaldelta.run.providers._common.Redactor` over the run's API keys. A store
that cannot be written (a full disk) ends the run with a :class:`StoreError`, its status set
to ``interrupted`` where the store still takes that write.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaldelta import __version__
from evaldelta.checks import metric_names
from evaldelta.errors import StoreError
from evaldelta.provider import (
    FATAL_KINDS,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerationParams,
    Provider,
    ProviderError,
)
from evaldelta.run._setup import open_providers, prepare, redactor
from evaldelta.run.arms import Call, Outcome, run_attempt
from evaldelta.run.cache import cache_key
from evaldelta.run.cases import CaseSet
from evaldelta.run.checking import CheckRunner
from evaldelta.run.config import Arm, ModelArm, RunConfig, provider_for
from evaldelta.run.coupling import warn_uncoupled
from evaldelta.run.limits import Clock, Lane, RetryPolicy
from evaldelta.run.pins import arm_pins, run_id, run_pins, scorer_pins
from evaldelta.run.prices import PriceTable
from evaldelta.run.progress import Progress, RunSummary
from evaldelta.run.providers._common import Redactor
from evaldelta.run.upstream import upstream_values
from evaldelta.run.writer import GroupWriter
from evaldelta.store import Store

if TYPE_CHECKING:
    from evaldelta.run.decided import OnLook, UntilDecided

__all__ = ["Progress", "RunSummary", "WorkItem", "execute", "interleave"]

STOPPED_REPEATED = "stopped: repeated error"
STOPPED_WALL = "stopped: max wall time"
STOPPED_COST = "stopped: max cost"


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
        redactor: Redactor,
    ) -> None:
        self.config = config
        self.checker = checker
        self.cases = cases
        self.store = store
        self.redactor = redactor
        self.writer = GroupWriter(store, redactor.values)
        self.prices = prices
        self.clock = clock
        self.progress = Progress()
        self.sequence: dict[int, int] = {}  # case index -> its place in an ordered run's order
        self.stop_reason: str | None = None
        self.stop_detail: str | None = None
        self.inflight: dict[str, asyncio.Future[Completion | ProviderError]] = {}
        self.paying: set[asyncio.Future[Completion | ProviderError]] = set()  # calls in flight
        self.failures: dict[str, ProviderError] = {}  # cache key -> how that call failed
        self.alike: Counter[tuple[str, ErrorKind, int | None]] = Counter()
        self.deadline = (
            clock.now() + config.max_wall_seconds if config.max_wall_seconds is not None else None
        )
        self.lanes: dict[str, Lane] = {}
        for name, provider in providers.items():
            pc = provider_for(config, name)
            self.lanes[name] = Lane(
                provider,
                clock=clock,
                retry=RetryPolicy(max_retries=pc.max_retries, max_retry_after=pc.max_retry_after),
                max_concurrency=pc.max_concurrency,
                timeout=pc.timeout,
                requests_per_minute=pc.requests_per_minute,
                tokens_per_minute=pc.tokens_per_minute,
                retry_budget=pc.retry_budget_seconds,
                deadline=self.deadline,
                on_retry=self._retried,
            )
        for lane in self.lanes.values():
            lane.retry.rng.seed(config.seed)

    def attach(self, store: Store) -> None:
        """Write to ``store`` from now on (a run that stops once decided reopens it per look)."""
        self.store = store
        self.writer = GroupWriter(store, self.redactor.values)

    def _retried(self) -> None:
        self.progress.retries += 1

    def failed(self, provider: str, error: ProviderError) -> None:
        """Note a failed call; the same unfixable failure seen too often stops the run."""
        limit = self.config.stop_after_identical_errors
        if error.kind not in FATAL_KINDS or limit <= 0:
            return
        alike = (provider, error.kind, error.status)
        self.alike[alike] += 1
        if self.alike[alike] >= limit and self.stop_reason is None:
            status = f", HTTP {error.status}" if error.status is not None else ""
            self.stop_reason = STOPPED_REPEATED
            self.stop_detail = (
                f"{self.alike[alike]} calls to provider {provider!r} failed alike "
                f"({error.kind}{status}: {self.redactor.text(str(error))}); no retry can fix "
                "that, so no more calls were launched"
            )

    def next_item(self, todo: Iterator[WorkItem]) -> WorkItem | None:
        """The next attempt to make, or None when the run is done or must stop."""
        if self.stop_reason is not None:
            return None
        if self.config.max_cost is not None and self.progress.spent_usd >= self.config.max_cost:
            self.stop_reason = STOPPED_COST
            return None
        if self.deadline is not None and self.clock.now() >= self.deadline:
            self.stop_reason = STOPPED_WALL
            return None
        return next(todo, None)

    async def call(self, arm: ModelArm, case: Mapping[str, Any], case_id: str, repeat: int) -> Call:
        """One call of a model step: from the cache, or paid and committed to the cache."""
        messages = arm.template.render(case, case_id)
        identity = provider_for(self.config, arm.provider).identity()
        key = cache_key(identity, arm.model, arm.params, messages, repeat)
        hit = self.store.cached(key)
        if hit is not None:
            self.progress.cached_calls += 1
            return self._call(arm, key, True, Completion(
                text=self.redactor.value(hit["text"]), model_version=hit["model_version"],
                input_tokens=hit["input_tokens"], output_tokens=hit["output_tokens"],
                finish_reason=hit["finish_reason"], latency_ms=hit["latency_ms"],
            ))  # fmt: skip
        shared = self.inflight.get(key)
        if shared is not None:  # the same draw is being paid for right now: wait for it
            result = await asyncio.shield(shared)
            if isinstance(result, ProviderError):
                return self._error(arm, key, result)
            self.progress.cached_calls += 1
            return self._call(arm, key, True, result)
        task = asyncio.ensure_future(self._pay(arm, key, messages))
        self.inflight[key] = task
        self.paying.add(task)
        task.add_done_callback(self.paying.discard)
        try:
            result = await asyncio.shield(task)
        finally:
            self.inflight.pop(key, None)
        if isinstance(result, ProviderError):
            self.failures[key] = result
            self.failed(arm.provider, result)
            return self._error(arm, key, result)
        call = self._call(arm, key, False, result)
        self.progress.paid_calls += 1
        self.progress.spent_usd += call.cost_usd or 0.0
        return call

    def _error(self, arm: ModelArm, key: str, error: ProviderError) -> Call:
        message = self.redactor.text(str(error))
        return Call(step=arm.name, model=arm.model, cache_key=key, error=message)

    async def _pay(
        self, arm: ModelArm, key: str, messages: Sequence[ChatMessage]
    ) -> Completion | ProviderError:
        """Make the call and commit its response to the cache before anyone counts it."""
        lane = self.lanes[arm.provider]
        try:
            completion = await lane.call(arm.model, messages, arm.params)
        except ProviderError as exc:
            return exc
        completion = dataclasses.replace(completion, text=self.redactor.text(completion.text))
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
            metrics = {m: (v, self.redactor.value(why)) for m, (v, why) in result.metrics.items()}
            self.store.put_scores(rid, [(arm, case_id, repeat, metrics)], follow_pass=False)
            return result.passed, outcome.error or result.error
        check = self.config.score
        if check is None or outcome.error is not None or outcome.output is None:
            return None, outcome.error
        try:
            return check.value(outcome.output, case), None
        except Exception as exc:  # a user's scoring callable failed
            return None, f"scorer raised {type(exc).__name__}: {exc}"

    async def attempt(self, rid: str, item: WorkItem, arms: Mapping[str, Arm]) -> None:
        """Make, score and commit one attempt; count it (and its error's kind)."""
        case_id, case = self.cases.rows[item.case_index]
        outcome = await run_attempt(arms[item.arm], self.config, case, case_id, item.repeat,
                                    self.call, self.checker.verify)  # fmt: skip
        score, error = await self.score(rid, item.arm, case_id, item.repeat, outcome, case)
        upstream = upstream_values(arms[item.arm], self.config, case, case_id, self.redactor.text)
        values = {**outcome.values(), **upstream, "score": score, "error": error,
                  "sequence": self.sequence.get(item.case_index)}  # fmt: skip
        await self.writer.put_attempt(rid, item.arm, case_id, item.repeat, values)
        self.progress.done += 1
        if error is not None:
            self.progress.add_error(self._kind(outcome), self.redactor.text(error))

    def _kind(self, outcome: Outcome) -> ErrorKind:
        """An errored attempt's kind: its failed call's, else a scoring failure."""
        for call in reversed(outcome.calls):
            if call.error is not None and call.cache_key in self.failures:
                return self.failures[call.cache_key].kind
        return "scoring"


class _LaneProvider:
    """A provider that calls through a session's lane and books the cost of each call."""

    def __init__(self, name: str, lane: Lane, session: _Session) -> None:
        self.lane = lane
        self.session = session
        self.name = lane.provider.name
        self.config_name = name  # the [providers.*] name, for the early stop's count

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        try:
            completion = await self.lane.call(model, messages, params)
        except ProviderError as exc:
            self.session.failed(self.config_name, exc)
            raise
        completion = dataclasses.replace(
            completion, text=self.session.redactor.text(completion.text)
        )
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
    until_decided: UntilDecided | None = None,
    on_look: OnLook | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` over ``cases``; see the module docstring for the order.

    ``until_decided``: send the cases in looks and stop once a gate policy's answer is
    decided (:mod:`evaldelta.run.decided`); ``on_look`` is then told of every look judged.
    """
    warn_uncoupled(config)  # --couple with an arm whose provider takes no seed
    if until_decided is not None:
        from evaldelta.run.decided import run_until_decided

        return await run_until_decided(
            config, cases, until_decided, providers=providers, clock=clock,
            on_progress=on_progress, on_look=on_look,
        )  # fmt: skip
    prices = prepare(config, cases)
    rid = run_id(config, cases, prices)
    arms: dict[str, Arm] = {a.name: a for a in config.run_arms}
    async with open_providers(config, providers) as given:
        with Store(config.store) as store:
            new = begin(store, rid, config, cases, arms, prices)
            session = new_session(config, cases, store, prices, given, clock)
            status = await guarded(session, rid, list(arms), arms, on_progress)
    return RunSummary(
        rid, str(config.store), status, session.progress, new, tuple(arms), session.stop_detail
    )


def new_session(
    config: RunConfig,
    cases: CaseSet,
    store: Store,
    prices: PriceTable,
    given: Mapping[str, Provider],
    clock: Clock | None,
) -> _Session:
    """A session over ``store``, its judge calls going through the arms' lanes."""
    names = {n for a in config.arms for n in (a.name, getattr(a, "model", None)) if n}
    checker = CheckRunner(given, sorted(names), config.seed)
    session = _Session(config, cases, store, prices, given, clock or Clock(), checker,
                       redactor(config))  # fmt: skip
    # judge calls go through the same lanes as the arms: the provider's concurrency
    # bound, rate limits, retries and timeout apply, and their cost counts toward --max-cost
    checker.providers = {
        name: _LaneProvider(name, lane, session) for name, lane in session.lanes.items()
    }
    return session


def begin(
    store: Store,
    rid: str,
    config: RunConfig,
    cases: CaseSet,
    arms: Mapping[str, Arm],
    prices: PriceTable,
    order: dict[str, Any] | None = None,
) -> bool:
    """Record the run (and its scoring); True when it is new, False when it resumes."""
    new = store.begin_run(
        rid,
        cases_path=str(cases.path),
        cases_sha256=cases.sha256,
        cases=cases.rows,
        case_columns=cases.columns,
        repeats=config.repeats,
        arms={name: arm_pins(a, config, prices) for name, a in arms.items()},
        pins=run_pins(config, prices, order),
        evaldelta_version=__version__,
    )
    if config.checks is not None:
        store.begin_scoring(
            rid, source="run --checks", checks_path=config.checks.path,
            checks_sha256=config.checks.sha256,
            metrics=metric_names(config.checks, pairwise=False),
            meta=scorer_pins(config) or {}, score_is_pass=True, replace=False,
        )  # fmt: skip
    return new


async def guarded(
    session: _Session,
    rid: str,
    names: list[str],
    arms: Mapping[str, Arm],
    on_progress: Callable[[Progress], None] | None,
    only: Sequence[int] | None = None,
) -> str:
    """:func:`_work`, with the run marked ``interrupted`` when it ends in any other way.

    ``only``: the case indices to run (one look of a run that stops once decided, in its
    order), leaving the run ``running`` when they are done; otherwise every case, and the
    run's status recorded.
    """
    store = session.store
    try:
        status = await _work(session, rid, names, arms, on_progress, only)
        if only is None or status not in ("complete", "incomplete: errors"):
            store.finish_run(rid, status)
        return status
    except (KeyboardInterrupt, asyncio.CancelledError):
        # every finished attempt is already committed; say so, and let it resume
        with contextlib.suppress(StoreError):
            store.set_status(rid, "interrupted")
        raise
    except StoreError as exc:  # the store stopped taking writes (a full disk, a lost file)
        try:
            store.set_status(rid, "interrupted")
            marked = f"run {rid} is marked interrupted"
        except StoreError:
            marked = f"run {rid} could not be marked interrupted either"
        raise StoreError(
            f"{exc}; {marked}: every attempt committed so far is kept, so free the space (or "
            "fix the file) and rerun the same command to resume"
        ) from None
    finally:
        await session.writer.aclose()


async def _work(
    session: _Session,
    rid: str,
    names: list[str],
    arms: Mapping[str, Arm],
    on_progress: Callable[[Progress], None] | None,
    only: Sequence[int] | None = None,
) -> str:
    config, cases, progress = session.config, session.cases, session.progress
    finished = session.store.finished(rid)
    indices = list(range(len(cases.rows))) if only is None else list(only)

    def plan() -> Iterator[tuple[WorkItem, bool]]:  # (attempt, already stored), lazily
        for it in interleave(len(indices), names, config.repeats):
            item = WorkItem(it.repeat, indices[it.case_index], it.arm)
            yield item, (it.arm, cases.rows[item.case_index][0], it.repeat) in finished

    total = len(indices) * len(names) * config.repeats  # a look adds its own to the counts
    progress.total += total
    progress.skipped += sum(1 for _, stored in plan() if stored)
    todo = (it for it, stored in plan() if not stored)
    if on_progress is not None:
        on_progress(progress)

    async def worker() -> None:
        while (item := session.next_item(todo)) is not None:
            await session.attempt(rid, item, arms)
            if on_progress is not None:
                on_progress(progress)

    slots = sum(lane.max_concurrency for lane in session.lanes.values())
    tasks = [
        asyncio.ensure_future(worker()) for _ in range(max(1, min(slots, progress.not_attempted)))
    ]
    try:
        await asyncio.gather(*tasks)
    except BaseException as exc:  # one worker failed (the store, Ctrl-C): stop the rest first
        rest: list[asyncio.Future[Any]] = [*tasks, *session.paying]
        for task in rest:
            task.cancel()
        if not isinstance(exc, KeyboardInterrupt | SystemExit):  # those leave the loop at once
            await asyncio.gather(*rest, return_exceptions=True)
        raise
    if session.stop_reason is not None:
        return session.stop_reason
    return "incomplete: errors" if progress.errors else "complete"

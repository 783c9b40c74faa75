"""Stop paying for calls once the gate's answer is decided (``evaldelta run --until-decided``).

The cases go out in looks, in a seeded random order stratified by slice
(:mod:`evaldelta.run.order`): each look sends ``batch`` cases per still-open slice, shared
among the open slices in proportion to their sizes, the same cases on every arm (x
repeats). After each look the stored attempts are compared with every interval a
confidence sequence (:mod:`evaldelta.comparison.sequential`: valid at any stopping time, so
looking after every batch and stopping on what is seen keeps the gate's error rates) and
the policy is applied (:func:`evaldelta.gating.evaluate`: Holm across slices, rules and
candidates on the sequences' anytime-valid p-values, as the fixed gate).

A slice stops receiving cases once every rule of it is decided (passed or failed). The run
stops when the verdict is decided (``stop = "verdict"``: a slice rule failed, or every slice
rule passed), or every slice rule is decided (``stop = "all"``), or its budget is spent
(``max_calls`` attempts, ``max_usd``, or the cases): what is then undecided is
inconclusive, and each inconclusive ``max_regression`` result carries the pairs a fixed
design would need (its slice's plan). ``max_cost_ratio`` is judged on the cases run, at
every look, but never stops the run (a ratio of sums has no sequence here).

Refused, one line each: ``basis = "point"`` and ``[standardized]`` (no anytime-valid form),
``[critical]`` (critical cases are judged one by one on their attempts, which a look may not
have sent yet), a policy with no ``max_regression`` or ``min_score``, ``--max-cost`` (bound
the run with ``max_usd``, which is checked between looks).

Every look is recorded in the store's looks table twice: when it is sent (cases per slice)
and when it is judged. Every attempt carries its case's ``sequence``. A killed run rerun
with the same command replays the judged looks, finishes a look that was sent but not
judged (the cases it sent, stored attempts skipped), and goes on: the same order, the same
looks, the same decision. The seed, batch size, slicing column, scale and the policy's hash
are part of the run's identity (pins ``until_decided``); the stopping rule and the budget
are not, so a run may be resumed with a larger budget or ``stop = "all"``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evaldelta.errors import Location, PolicyError, StoreError, UsageError
from evaldelta.gating import FAIL, PASS, Policy, Verdict, evaluate, load_policy
from evaldelta.run._setup import open_providers, prepare
from evaldelta.run.cases import CaseSet
from evaldelta.run.config import Arm, RunConfig
from evaldelta.run.execute import begin, guarded, new_session
from evaldelta.run.limits import Clock
from evaldelta.run.order import Order, allocate, make_order, slice_name
from evaldelta.run.pins import run_id
from evaldelta.run.progress import Progress, RunSummary
from evaldelta.store import Store

if TYPE_CHECKING:
    from evaldelta.comparison.model import Comparison, Look
    from evaldelta.provider import Provider
    from evaldelta.run.execute import _Session

__all__ = [
    "SLICE_RULES",
    "Decision",
    "OnLook",
    "UntilDecided",
    "check_policy",
    "run_until_decided",
]

SLICE_RULES = ("min_cases", "max_regression", "min_score")  # what decides a slice
Stop = Literal["verdict", "all"]
STOPS: tuple[Stop, ...] = ("verdict", "all")
OnLook = Callable[["Look", Verdict], None]  # told of every look judged


@dataclass(frozen=True)
class UntilDecided:
    """How a run that stops once decided sends its cases and when it stops (module doc)."""

    policy: Path
    by: str = "slice"  # the slicing column the policy's slices name
    batch: int = 10  # cases per open slice per look
    stop: Stop = "verdict"
    max_calls: int | None = None  # attempts (case x arm x repeat), over every look
    max_usd: float | None = None
    seed: int = 0
    scale: tuple[float, float] | None = None  # a graded score's scale, fixed before the data

    def check(self) -> None:
        """One-line errors for values out of range."""
        if isinstance(self.batch, bool) or not isinstance(self.batch, int) or self.batch < 1:
            raise UsageError(f"--batch takes a whole number of cases >= 1, not {self.batch}")
        if self.stop not in STOPS:
            raise UsageError(f"--stop takes verdict or all, not {self.stop!r}")
        if self.max_calls is not None and self.max_calls < 1:
            raise UsageError(f"--max-calls takes a whole number >= 1, not {self.max_calls}")
        if self.max_usd is not None and not (math.isfinite(self.max_usd) and self.max_usd > 0):
            raise UsageError(f"--max-usd takes a finite number of USD > 0, not {self.max_usd}")

    def pins(self) -> dict[str, Any]:
        """What orders and judges the looks: part of the run's identity."""
        policy = hashlib.sha256(self.policy.read_bytes()).hexdigest()
        scale = list(self.scale) if self.scale is not None else None
        return {"seed": self.seed, "batch": self.batch, "by": self.by, "scale": scale,
                "policy_sha256": policy}  # fmt: skip

    def rule(self, batch_slices: int) -> str:
        """The stopping rule, in words."""
        when = (
            "the verdict is decided (a slice rule fails, or every slice rule passes)"
            if self.stop == "verdict"
            else "every slice rule is decided"
        )
        budget = [f"{self.max_calls} calls"] if self.max_calls is not None else []
        budget += [f"${self.max_usd:g}"] if self.max_usd is not None else []
        spent = f" or {' / '.join(budget)} are spent" if budget else ""
        return (
            f"until decided (--stop {self.stop}): looks of {self.batch} cases per open slice "
            f"({batch_slices} slices), in a random order stratified by {self.by!r} (seed "
            f"{self.seed}); a slice stops once its every rule is decided, the run once {when}"
            f"{spent}, or the cases run out"
        )


@dataclass(frozen=True)
class Decision:
    """The run's final sequential comparison (its ``sequential`` holds the looks) and verdict."""

    comparison: Comparison
    verdict: Verdict


def check_policy(path: Path) -> Policy:
    """The policy, refused in one line when the sequential gate cannot judge it (module doc)."""
    policy = load_policy(path)
    if policy.basis == "point":
        raise PolicyError(
            "run --until-decided judges rules on confidence sequences; basis = 'point' has no "
            "anytime-valid form (a point estimate peeked at after every look fails identical "
            "releases far more often than alpha/2): use basis = 'interval'",
            policy.where("basis", value="point"),
        )
    if policy.standardized is not None:
        raise PolicyError(
            "run --until-decided cannot judge [standardized]: the fixed-mix delta has no "
            "anytime-valid form; gate it with evaldelta gate on a fixed run",
            policy.where("standardized"),
        )
    if policy.critical is not None:
        raise PolicyError(
            "run --until-decided cannot judge [critical]: critical cases are judged one by "
            "one on their attempts, which a look may not have sent; run them with a plain "
            "evaldelta run and gate them there",
            policy.where("critical"),
        )
    tables = (policy.defaults, *policy.slices.values())
    if not any(t.max_regression is not None or t.min_score is not None for t in tables):
        raise PolicyError(
            "the policy has no rule the sequential gate can judge: run --until-decided "
            "stops on max_regression or min_score (in [defaults] or a [slices.NAME])",
            Location(policy.path),
        )
    return policy


@dataclass
class _State:
    """Where the looks stand: cases sent per slice, each case's sequence, the looks judged."""

    sent: dict[str, int] = field(default_factory=dict)
    sequence: dict[int, int] = field(default_factory=dict)  # case index -> 1, 2, ...
    looks: list[Look] = field(default_factory=list)
    pending: tuple[dict[str, int], list[int]] | None = None  # sent, not judged: per slice, cases
    calls: int = 0  # attempts stored after the last look judged
    usd: float | None = 0.0

    def send(self, order: Order, sent: Mapping[str, int]) -> list[int]:
        """Count a look's cases as sent; their indices in order (their sequences assigned)."""
        indices = order.take(self.sent, sent)
        for index in indices:
            self.sequence[index] = len(self.sequence) + 1
        for name, n in sent.items():
            self.sent[name] = self.sent.get(name, 0) + n
        return indices


def _replay(rows: list[dict[str, Any]], order: Order) -> _State:
    """The state after the recorded looks (a look sent but not judged is pending)."""
    from evaldelta.comparison.model import Look

    state = _State()
    for row in rows:
        if state.pending is not None:
            raise StoreError(f"look {row['look']} follows a look that was never judged")
        sent = {str(k): int(v) for k, v in row["sent"].items()}
        if any(k not in order.queues for k in sent):
            raise StoreError(
                f"look {row['look']} sent cases of slices the case file does not have "
                f"({', '.join(sorted(set(sent) - set(order.queues)))})"
            )
        indices = state.send(order, sent)
        if row["outcome"] is None:
            state.pending = (sent, indices)
            continue
        state.calls, state.usd = int(row["calls"]), row["usd"]
        state.looks.append(
            Look(index=row["look"], cases=row["cases"], calls=row["calls"],
                 outcome=row["outcome"], decided=tuple(row["decided"] or ()), usd=row["usd"])
        )  # fmt: skip
    return state


async def run_until_decided(
    config: RunConfig,
    cases: CaseSet,
    plan: UntilDecided,
    *,
    providers: Mapping[str, Provider] | None = None,
    clock: Clock | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_look: OnLook | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` over ``cases`` in looks until decided (module doc)."""
    plan.check()
    policy = check_policy(plan.policy)
    if config.max_cost is not None:
        raise UsageError(
            "run --until-decided spends look by look: bound it with --max-usd or --max-calls "
            "(checked between looks), not --max-cost"
        )
    arms: dict[str, Arm] = {a.name: a for a in config.run_arms}
    if len(arms) < 2:
        raise UsageError("run --until-decided compares arms: give at least two")
    per_case = len(arms) * config.repeats
    if plan.max_calls is not None and plan.max_calls < per_case:
        raise UsageError(
            f"--max-calls {plan.max_calls} does not pay for one case on every arm "
            f"({len(arms)} arms x {config.repeats} repeats = {per_case} calls)"
        )
    prices = prepare(config, cases, "--max-usd" if plan.max_usd is not None else None)
    slices = [slice_name(row, plan.by, cases.columns) for _, row in cases.rows]
    order = make_order(slices, plan.seed)
    for name in policy.slices:
        if name not in order.queues:
            raise PolicyError(
                f"slice {name!r} is not in the cases (slices of {plan.by!r}: "
                f"{', '.join(order.slices)})",
                policy.where("slices", name, value=name),
            )
    pins = plan.pins()
    rid = run_id(config, cases, prices, pins)
    async with open_providers(config, providers) as given:
        with Store(config.store) as store:
            new = begin(store, rid, config, cases, arms, prices, pins)
            session = new_session(config, cases, store, prices, given, clock)
            state = _replay(store.looks(rid), order)
        runner = _Runner(config, cases, plan, policy, order, rid, arms, session)
        status, why = await runner.loop(state, on_progress, on_look)
    decision = runner.finish(state, status, why) if why is not None else None
    return RunSummary(
        rid, str(config.store), status, session.progress, new, tuple(arms),
        session.stop_detail, decision,
    )  # fmt: skip


class _Runner:
    """One run's looks: send, judge, record, decide whether to go on."""

    def __init__(
        self,
        config: RunConfig,
        cases: CaseSet,
        plan: UntilDecided,
        policy: Policy,
        order: Order,
        rid: str,
        arms: Mapping[str, Arm],
        session: _Session,
    ) -> None:
        self.config, self.cases, self.plan, self.policy = config, cases, plan, policy
        self.order, self.rid, self.arms, self.session = order, rid, arms, session
        self.metric = policy.metric or "score"
        # the slices some rule judges: the others receive no case
        self.ruled = [
            s
            for s in order.slices
            if any(policy.rules_for(s).get(key) is not None for key in SLICE_RULES)
        ]

    async def loop(
        self,
        state: _State,
        on_progress: Callable[[Progress], None] | None,
        on_look: OnLook | None,
    ) -> tuple[str, str | None]:
        """Looks until a stop: (the run's status, why it stopped; None when a call stopped it)."""
        self.session.sequence = state.sequence
        progress = self.session.progress  # the judged looks' attempts count as stored
        progress.total += state.calls
        progress.skipped += state.calls
        verdict = self.judge()[1] if state.looks and state.pending is None else None
        while True:
            if state.pending is not None:
                status = await self.send(len(state.looks) + 1, *state.pending, on_progress)
                if status not in ("complete", "incomplete: errors"):
                    return status, None  # a repeated error or the wall time: resumable
                verdict = self.judge()[1]
                look = self.record(state, verdict)
                state.pending = None
                if on_look is not None:
                    on_look(look, verdict)
            why = self.decided(verdict) if verdict is not None else None
            if why is not None:
                return "complete", why
            cap, status, why = self.budget(state)
            if why is not None:
                return status, why
            sent = allocate(self.order, state.sent, self.open(verdict), self.plan.batch, cap)
            if not sent:
                return "complete", "the cases ran out"
            state.pending = (sent, state.send(self.order, sent))
            with Store(self.config.store) as store:
                store.begin_look(self.rid, len(state.looks) + 1, sent)

    async def send(
        self,
        look: int,
        sent: Mapping[str, int],
        indices: list[int],
        on_progress: Callable[[Progress], None] | None,
    ) -> str:
        """Make a look's attempts (those not stored yet); the session's status after."""
        with Store(self.config.store) as store:
            self.session.attach(store)
            return await guarded(
                self.session, self.rid, list(self.arms), self.arms, on_progress, indices
            )

    def judge(self) -> tuple[Comparison, Verdict]:
        """The sequential comparison of every attempt stored, and the policy's verdict on it."""
        from evaldelta.gating.confounds import refuse_pins, refuse_upstream

        comparison = sequential_comparison(
            self.config.store, self.rid, self.policy, self.metric, self.plan
        )
        refuse_pins(self.policy, comparison)
        refuse_upstream(self.policy, comparison)
        return comparison, evaluate(self.policy, comparison)

    def record(self, state: _State, verdict: Verdict) -> Look:
        """Record the look just judged (totals, outcome, slices decided) and count it."""
        from evaldelta.comparison.model import Look

        index = len(state.looks) + 1
        decided = tuple(s for s in self.ruled if _slice_decided(verdict, s))
        with Store(self.config.store) as store:
            totals = store.arm_totals(self.rid)
            calls = sum(int(t["attempts"]) for t in totals)
            costs = [t["cost_usd"] for t in totals]
            usd = None if any(c is None for c in costs) else float(sum(costs))
            store.judge_look(self.rid, index, cases=len(state.sequence), calls=calls, usd=usd,
                             outcome=verdict.outcome, decided=decided)  # fmt: skip
        look = Look(index=index, cases=len(state.sequence), calls=calls,
                    outcome=verdict.outcome, decided=decided, usd=usd)  # fmt: skip
        state.looks.append(look)
        state.calls, state.usd = calls, usd
        return look

    def open(self, verdict: Verdict | None) -> list[str]:
        """The slices still receiving cases: judged by a rule, not yet decided."""
        if verdict is None:
            return list(self.ruled)
        return [s for s in self.ruled if not _slice_decided(verdict, s)]

    def decided(self, verdict: Verdict) -> str | None:
        """Why the run stops on this verdict (its stopping rule), or None to go on."""
        rules = [r for r in verdict.rules if r.rule in SLICE_RULES]
        seen = {r.slice for r in rules}
        complete = bool(rules) and set(self.ruled) <= seen
        if self.plan.stop == "verdict":
            failed = list(dict.fromkeys(str(r.slice) for r in rules if r.outcome == FAIL))
            if failed:
                return f"the verdict is decided: fail on {', '.join(failed)}"
            if complete and all(r.outcome == PASS for r in rules):
                return "the verdict is decided: every slice rule passed"
            return None
        if complete and all(r.outcome in (PASS, FAIL) for r in rules):
            return "every slice rule is decided"
        return None

    def budget(self, state: _State) -> tuple[int | None, str, str | None]:
        """Cases the budget still pays for (None: no bound); once none, the status and why."""
        per_case = len(self.arms) * self.config.repeats
        cap: int | None = None
        if self.plan.max_calls is not None:
            cap = (self.plan.max_calls - state.calls) // per_case
            if cap <= 0:
                why = f"the budget is spent: --max-calls {self.plan.max_calls}"
                return 0, "stopped: max calls", why
        if self.plan.max_usd is not None:
            spent = state.usd or 0.0
            per = spent / len(state.sequence) if state.sequence else 0.0
            fits = math.floor((self.plan.max_usd - spent) / per) if per > 0 else None
            if spent >= self.plan.max_usd or fits == 0:
                why = f"the budget is spent: --max-usd {self.plan.max_usd:g} (${spent:.4f} spent)"
                return 0, "stopped: max usd", why
            if fits is not None:
                cap = fits if cap is None else min(cap, fits)
        return cap, "running", None

    def finish(self, state: _State, status: str, why: str) -> Decision:
        """Record the run's status; the final comparison (with its looks) and verdict."""
        with Store(self.config.store) as store:
            store.finish_run(self.rid, status)
        comparison, verdict = self.judge()
        assert comparison.sequential is not None
        fixed = len(self.cases.rows) * len(self.arms) * self.config.repeats
        sequential = dataclasses.replace(
            comparison.sequential,
            looks=tuple(state.looks),
            stopping=self.plan.rule(len(self.ruled)),
            calls=state.calls,
            fixed_calls=fixed,
            stopped_because=why,
        )
        return Decision(dataclasses.replace(comparison, sequential=sequential), verdict)


def _slice_decided(verdict: Verdict, name: str) -> bool:
    """Every slice rule of ``name`` (of every candidate) passed or failed."""
    rules = [r for r in verdict.rules if r.rule in SLICE_RULES and r.slice == name]
    return bool(rules) and all(r.outcome in (PASS, FAIL) for r in rules)


def sequential_comparison(
    store: Path, rid: str, policy: Policy, metric: str, plan: UntilDecided
) -> Comparison:
    """The run's comparison, every interval a confidence sequence in ``sequence`` order.

    What ``evaldelta compare --store STORE --run RID --by BY --sequential --order sequence``
    computes, so the command reproduces every look's decision.
    """
    from evaldelta.comparison import compare
    from evaldelta.sources import Source

    return compare(
        [Source(store, run=rid)],
        by=(plan.by,),
        metrics=(metric,),
        scale=plan.scale,
        allowed_pin_differences=policy.allow_pin_differences,
        allowed_upstream_changes=policy.allow_upstream_changes,
        order="sequence",
    )

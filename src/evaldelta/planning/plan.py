"""Plan an eval: power, sample sizes and the allocation of a budget of cases over slices.

Three entry points, all returning frozen dataclasses (rendered by ``report/plan.py``):

- :func:`plan_from_comparison` / :func:`plan_from_pilot`: per slice of a pilot comparison,
  the observed paired sd (graded) or discordance (binary), the minimum detectable effect at
  the pilot's n, and the n needed to detect ``effect``: paired t (exact noncentral t) or
  McNemar (Connor 1987), with the unpaired n per arm beside it for contrast.
- :func:`plan_from_summary`: the same without a pilot, from a paired sd or from the two
  discordance rates.
- :func:`allocate` (from :mod:`evaldelta.planning.allocation`): a budget of cases over slices, a
  floor per slice first, then the rest by Neyman allocation (Neyman 1934; Cochran 1977, 5.5).

The statistics come from :mod:`evaldelta.stats`; this module only chooses the inputs and
turns undefined results into NaN with a note (never 0).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from evaldelta import stats
from evaldelta.comparison._notes import in_reader_words
from evaldelta.comparison.model import Comparison, SliceDelta
from evaldelta.errors import UsageError
from evaldelta.planning._checks import check_design, check_effect_scale
from evaldelta.planning.allocation import Allocation, SliceAllocation, allocate
from evaldelta.sources import ReadOptions, Source

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "Allocation",
    "PairPlan",
    "Plan",
    "SliceAllocation",
    "SlicePlan",
    "allocate",
    "check_design",
    "check_effect_scale",
    "plan_from_comparison",
    "plan_from_pilot",
    "plan_from_summary",
]

PLAN_SCHEMA_VERSION = "1.0"
PAIRED_T = "paired t (noncentral t)"
CONNOR = "exact mcnemar (connor 1987 beside)"
UNPAIRED_T = "two-sample t, equal arms (contrast)"
NAN = math.nan
T = TypeVar("T")


@dataclass(frozen=True)
class SlicePlan:
    """Power arithmetic for one slice (or for all cases together).

    ``sd`` is the sd of the per-case delta (candidate minus baseline); for binary data it is
    ``sqrt(psi - delta^2)`` with discordance ``psi = (b + c) / n``. ``mde`` is the minimum
    detectable effect at ``n_now`` (score units; proportions for binary data). ``n_required``
    is the ceiling of the paired n that detects ``effect`` (NaN when undefined, None when no
    effect was asked for); ``unpaired_n_per_arm`` is the two-sample n per arm with
    ``unpaired_sd``, shown only as a contrast. For binary data ``n_required`` is the n at
    which the exact McNemar test reaches the power, and ``n_normal`` Connor's (1987) normal
    approximation, which promises more power than the exact test delivers.
    """

    slice: str
    kind: Literal["graded", "binary"]
    method: str
    n_now: int | None
    observed_delta: float | None
    sd: float
    p_only_candidate: float | None
    p_only_baseline: float | None
    mde: float | None
    effect: float | None
    n_required: float | None
    n_required_exact: float | None
    unpaired_sd: float | None
    unpaired_n_per_arm: float | None
    notes: tuple[str, ...] = ()
    n_normal: float | None = None  # binary: Connor (1987)'s normal-approximation n, beside

    @property
    def discordance(self) -> float | None:
        """``p_only_candidate + p_only_baseline`` for binary data, else None."""
        if self.p_only_candidate is None or self.p_only_baseline is None:
            return None
        return self.p_only_candidate + self.p_only_baseline


@dataclass(frozen=True)
class PairPlan:
    """The plan for one candidate against the baseline (arms are None without a pilot)."""

    baseline: str | None
    candidate: str | None
    overall: SlicePlan
    slices: tuple[SlicePlan, ...]


@dataclass(frozen=True)
class Plan:
    """The result artifact of ``evaldelta plan``."""

    schema_version: str
    source: Literal["pilot", "sd", "discordance"]
    inputs: tuple[str, ...]
    metric: str | None
    by: str | None
    kind: Literal["graded", "binary", "mixed"]
    effect: float | None
    power: float
    alpha: float
    alternative: str
    pairs: tuple[PairPlan, ...]
    allocation: Allocation | None = None
    notes: tuple[str, ...] = field(default=())


def _capture(fn: Callable[[], T], notes: list[str], context: str) -> T | None:
    """Call fn; DegenerateDataWarnings and ValueErrors become notes (and None)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out: T | None = fn()
        except ValueError as exc:
            notes.append(f"{context}: {exc}")
            out = None
    for w in caught:
        if issubclass(w.category, stats.DegenerateDataWarning):
            notes.append(f"{context}: {in_reader_words(str(w.message))}")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


# -- the power arithmetic for one slice ----------------------------------------------------


def _unpaired_n(
    effect: float,
    sd: float,
    power: float,
    alpha: float,
    alternative: str,
    notes: list[str],
    name: str,
) -> float:
    """Cases per arm for an unpaired two-sample t design (a contrast); NaN when undefined."""
    res = _capture(
        lambda: stats.required_pairs(effect, sd, power, alpha, alternative),
        notes,
        f"{name} (unpaired contrast)",
    )
    if res is None or res.unpaired_n_per_arm is None:
        return NAN
    return float(res.unpaired_n_per_arm)


def _graded_slice(
    name: str,
    n_now: int | None,
    observed: float | None,
    sd: float,
    unpaired_sd: float | None,
    effect: float | None,
    power: float,
    alpha: float,
    alternative: str,
) -> SlicePlan:
    notes: list[str] = []
    mde: float | None = None
    if n_now is not None:
        mde = NAN
        if not sd > 0:
            notes.append(
                f"{name}: every per-case delta is equal (sd 0), so the minimum detectable "
                "effect and the required n are undefined"
            )
        elif n_now < 2:
            notes.append(f"{name}: a paired t test needs at least 2 pairs; the pilot has {n_now}")
        else:
            got = _capture(
                lambda: stats.mde_paired_t(n_now, sd, power, alpha, alternative), notes, name
            )
            mde = NAN if got is None else got
    n_req = n_exact = unpaired_n = None
    if effect is not None:
        n_req = n_exact = NAN
        unpaired_n = None if unpaired_sd is None else NAN
        if sd > 0:
            res = _capture(
                lambda: stats.required_pairs(effect, sd, power, alpha, alternative), notes, name
            )
            if res is not None:
                n_req, n_exact = float(res.n), res.n_exact
        if unpaired_sd is not None and unpaired_sd > 0:
            unpaired_n = _unpaired_n(effect, unpaired_sd, power, alpha, alternative, notes, name)
    return SlicePlan(
        slice=name,
        kind="graded",
        method=PAIRED_T,
        n_now=n_now,
        observed_delta=observed,
        sd=sd,
        p_only_candidate=None,
        p_only_baseline=None,
        mde=mde,
        effect=effect,
        n_required=n_req,
        n_required_exact=n_exact,
        unpaired_sd=unpaired_sd,
        unpaired_n_per_arm=unpaired_n,
        notes=tuple(notes),
    )


def _mde_connor(n: int, psi: float, power: float, alpha: float, alternative: str) -> float:
    """The exact McNemar MDE; a one-sided test is the two-sided one at twice the alpha."""
    if alternative == "two-sided":
        return stats.mde_mcnemar(n, psi, power, alpha)
    one_sided = stats.mde_mcnemar(n, psi, power, 2.0 * alpha)
    return -one_sided if alternative == "smaller" else one_sided


def _binary_slice(
    name: str,
    n_now: int | None,
    p01: float,
    p10: float,
    unpaired_sd: float | None,
    effect: float | None,
    power: float,
    alpha: float,
    alternative: str,
) -> SlicePlan:
    """Binary paired slice; the required n holds the discordance ``psi = p01 + p10`` fixed.

    With ``psi`` fixed, an effect ``E`` means ``p01 = (psi + E) / 2`` and
    ``p10 = (psi - E) / 2`` (Connor 1987), the same assumption as the MDE
    (:func:`evaldelta.stats.mde_mcnemar`), so the two answers are inverses of each other.
    """
    notes: list[str] = []
    psi = p01 + p10
    observed = p01 - p10
    mde: float | None = None
    if n_now is not None:
        mde = NAN
        if psi <= 0:
            notes.append(
                f"{name}: no discordant pairs (b = c = 0), so the discordance is 0 and the "
                "minimum detectable effect and the required n are undefined; a larger pilot "
                "or --p-only-candidate/--p-only-baseline can supply it"
            )
        else:
            got = _capture(lambda: _mde_connor(n_now, psi, power, alpha, alternative), notes, name)
            mde = NAN if got is None else got
    n_req = n_exact = unpaired_n = n_normal = None
    if effect is not None:
        n_req = n_exact = n_normal = NAN
        unpaired_n = None if unpaired_sd is None else NAN
        if psi > 0 and abs(effect) > psi:
            notes.append(
                f"{name}: an effect of {effect:g} cannot arise from a discordance of {psi:g} "
                "(at most every discordant pair moves one way); the required n is undefined"
            )
        elif psi > 0:
            q01, q10 = (psi + effect) / 2.0, (psi - effect) / 2.0
            res = _capture(
                lambda: stats.required_pairs_mcnemar(q01, q10, power, alpha, alternative),
                notes,
                name,
            )
            if res is not None:
                n_req, n_exact, n_normal = float(res.n), res.n_exact, res.n_normal
        if unpaired_sd is not None and unpaired_sd > 0:
            unpaired_n = _unpaired_n(effect, unpaired_sd, power, alpha, alternative, notes, name)
    return SlicePlan(
        slice=name,
        kind="binary",
        method=CONNOR,
        n_now=n_now,
        observed_delta=observed if n_now is not None else None,
        sd=math.sqrt(max(0.0, psi - observed * observed)),
        p_only_candidate=p01,
        p_only_baseline=p10,
        mde=mde,
        effect=effect,
        n_required=n_req,
        n_required_exact=n_exact,
        unpaired_sd=unpaired_sd,
        unpaired_n_per_arm=unpaired_n,
        notes=tuple(notes),
        n_normal=n_normal,
    )


def _from_delta(
    d: SliceDelta, effect: float | None, power: float, alpha: float, alternative: str
) -> SlicePlan:
    n = d.n_pairs
    if d.paired is None or n == 0:
        return SlicePlan(
            d.slice, "graded", PAIRED_T, 0, None, NAN, None, None, NAN, effect,
            None if effect is None else NAN, None if effect is None else NAN, None,
            None if effect is None else NAN,
            (f"{d.slice}: the arms share no cases, so there is no paired pilot estimate",),
        )  # fmt: skip
    # The arms' pooled sd on the shared cases, from the Welch SE: se^2 = (s_b^2 + s_c^2) / n.
    unpaired_sd = None
    if d.unpaired is not None and math.isfinite(d.unpaired.se):
        unpaired_sd = d.unpaired.se * math.sqrt(n / 2.0)
    if d.table is not None:
        t = d.table
        return _binary_slice(
            d.slice, n, t.only_candidate / n, t.only_baseline / n, unpaired_sd,
            effect, power, alpha, alternative,
        )  # fmt: skip
    sd = d.paired.se * math.sqrt(n) if math.isfinite(d.paired.se) else NAN
    return _graded_slice(
        d.slice, n, d.paired.estimate, sd, unpaired_sd, effect, power, alpha, alternative
    )


# -- public entry points ------------------------------------------------------------------


def plan_from_comparison(
    comparison: Comparison,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    *,
    metric: str | None = None,
    traffic: Mapping[str, float] | None = None,
    budget: int | None = None,
    floor: int = 300,
) -> Plan:
    """Plan from a pilot :class:`~evaldelta.comparison.model.Comparison` (its first slicing column).

    Per slice and candidate: graded data use the sd of per-case deltas,
    ``paired.se * sqrt(n)``, with the exact noncentral-t power of the paired t test
    (:func:`evaldelta.stats.required_pairs`, :func:`evaldelta.stats.mde_paired_t`); binary
    single-attempt data use the discordance rates ``c / n`` and ``b / n`` of the 2x2 table
    with McNemar's test, Connor (1987), Biometrics 43:207-211
    (:func:`evaldelta.stats.required_pairs_mcnemar`, :func:`evaldelta.stats.mde_mcnemar`),
    holding the observed discordance fixed. Binary effects are proportions (0.05 = 5 points).
    The unpaired contrast is the two-sample t n per arm at the arms' pooled sd on the shared
    cases. With ``traffic`` and ``budget``, :func:`allocate` spreads the budget over slices
    using the first candidate's per-slice sds. Without ``effect`` only the MDE is reported.
    """
    check_design(effect, power, alpha, alternative)
    chosen = comparison.metrics[0]
    if metric is not None:
        found = [m for m in comparison.metrics if m.metric == metric]
        if not found:
            raise UsageError(f"metric {metric!r} is not in the comparison")
        chosen = found[0]
    check_effect_scale(effect, chosen)
    slicing = chosen.slicings[0]
    pairs = []
    for pair in slicing.pairs:
        pairs.append(
            PairPlan(
                baseline=pair.baseline,
                candidate=pair.candidate,
                overall=_from_delta(pair.overall, effect, power, alpha, alternative),
                slices=tuple(
                    _from_delta(d, effect, power, alpha, alternative)
                    for d in sorted(pair.slices, key=lambda d: d.slice)
                ),
            )
        )
    notes: list[str] = list(comparison.notes)
    allocation = None
    if budget is not None:
        if traffic is None:
            raise UsageError("an allocation (--budget) needs the traffic mix (--traffic)")
        first = pairs[0]
        if len(pairs) > 1:
            notes.append(f"the allocation uses the sds of {first.candidate} vs {first.baseline}")
        sds, n_now = _allocation_inputs(first, traffic, notes)
        allocation = allocate(
            traffic, sds, budget, floor, n_now=n_now, confidence=_confidence(alpha)
        )
    kinds = {p.overall.kind for p in pairs}
    return Plan(
        schema_version=PLAN_SCHEMA_VERSION,
        source="pilot",
        inputs=comparison.inputs,
        metric=chosen.metric,
        by=slicing.by,
        kind=kinds.pop() if len(kinds) == 1 else "mixed",
        effect=effect,
        power=power,
        alpha=alpha,
        alternative=alternative,
        pairs=tuple(pairs),
        allocation=allocation,
        notes=tuple(notes),
    )


def _allocation_inputs(
    pair: PairPlan, traffic: Mapping[str, float], notes: list[str]
) -> tuple[dict[str, float], dict[str, int]]:
    by_name = {s.slice: s for s in pair.slices}
    fallback = pair.overall.sd
    sds: dict[str, float] = {}
    n_now: dict[str, int] = {}
    for name in traffic:
        s = by_name.get(name)
        if s is None or not math.isfinite(s.sd):
            notes.append(
                f"slice {name!r} has no paired pilot data; its sd is taken from all cases "
                f"({fallback:.4g})"
            )
            sds[name] = fallback
        else:
            sds[name] = s.sd
        n_now[name] = s.n_now if s is not None and s.n_now is not None else 0
    missing = sorted(set(by_name) - set(traffic))
    if missing:
        notes.append(f"pilot slices not in the traffic mix get no allocation: {', '.join(missing)}")
    return sds, n_now


def plan_from_pilot(
    files: Sequence[Source | str | Path],
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    *,
    baseline: str | None = None,
    candidates: Sequence[str] | None = None,
    by: str | None = None,
    metric: str | None = None,
    traffic: Mapping[str, float] | None = None,
    budget: int | None = None,
    floor: int = 300,
    read_options: ReadOptions | None = None,
    backend: Any = None,
    table: str | None = None,
) -> Plan:
    """Run :func:`evaldelta.comparison.compare` on pilot files, then :func:`plan_from_comparison`.

    ``metric`` defaults to the sources' first default metric (``score`` for tidy files);
    ``backend`` and ``table`` are compare's (where the queries run; rows already there).
    """
    from evaldelta.comparison import compare

    check_design(effect, power, alpha, alternative)
    comparison = compare(
        files,
        baseline=baseline,
        candidates=candidates,
        by=(by,) if by else None,
        metrics=(metric,) if metric else None,
        read_options=read_options,
        backend=backend,
        table=table,
    )
    metric = comparison.metrics[0].metric
    return plan_from_comparison(
        comparison, effect, power, alpha, alternative,
        metric=metric, traffic=traffic, budget=budget, floor=floor,
    )  # fmt: skip


def plan_from_summary(
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    *,
    sd: float | None = None,
    p_only_candidate: float | None = None,
    p_only_baseline: float | None = None,
    traffic: Mapping[str, float] | None = None,
    budget: int | None = None,
    floor: int = 300,
) -> Plan:
    """Plan without a pilot: from the paired sd, or from the two discordance rates.

    ``sd`` (with ``effect``): paired t by exact noncentral t
    (:func:`evaldelta.stats.required_pairs`, as statsmodels' ``TTestPower``), and the
    two-sample n per arm at the same sd (``TTestIndPower``) as a contrast.
    ``p_only_candidate`` and ``p_only_baseline``: McNemar, Connor (1987), for the effect
    ``p_only_candidate - p_only_baseline`` (``effect``, if given, must equal it).
    With ``traffic`` and ``budget``, every slice gets the same sd in :func:`allocate`.
    """
    check_design(effect, power, alpha, alternative)
    if (p_only_candidate is None) != (p_only_baseline is None):
        raise UsageError("give both --p-only-candidate and --p-only-baseline, or neither")
    if sd is not None and p_only_candidate is not None:
        raise UsageError("give either --sd or the two --p-only-* rates, not both")
    if p_only_candidate is not None and p_only_baseline is not None:
        for label, p in (("candidate", p_only_candidate), ("baseline", p_only_baseline)):
            if not 0 <= p <= 1:
                raise UsageError(f"--p-only-{label} must be a proportion in [0, 1], not {p}")
        if p_only_candidate + p_only_baseline > 1:
            raise UsageError("--p-only-candidate + --p-only-baseline must not exceed 1")
        implied = p_only_candidate - p_only_baseline
        if implied == 0:
            raise UsageError("--p-only-candidate and --p-only-baseline must differ")
        if effect is not None and not math.isclose(effect, implied, abs_tol=1e-12):
            raise UsageError(
                f"the effect is --p-only-candidate - --p-only-baseline = {implied:g}; "
                f"do not also give --effect {effect:g}"
            )
        check_design(implied, power, alpha, alternative)
        one = _binary_slice(
            "(given rates)", None, p_only_candidate, p_only_baseline, None,
            implied, power, alpha, alternative,
        )  # fmt: skip
        eff = implied
    elif sd is not None:
        if not (math.isfinite(sd) and sd > 0):
            raise UsageError(f"--sd must be a positive number, not {sd}")
        if effect is None:
            raise UsageError("--sd needs --effect (the delta to detect, in score units)")
        one = _graded_slice("(given sd)", None, None, sd, sd, effect, power, alpha, alternative)
        eff = effect
    else:
        raise UsageError(
            "give a pilot (--from FILE or --arm NAME=FILE), or --sd with --effect, or "
            "--p-only-candidate with --p-only-baseline"
        )
    allocation = None
    if budget is not None:
        if traffic is None:
            raise UsageError("an allocation (--budget) needs the traffic mix (--traffic)")
        allocation = allocate(
            traffic, dict.fromkeys(traffic, one.sd), budget, floor, confidence=_confidence(alpha)
        )
    return Plan(
        schema_version=PLAN_SCHEMA_VERSION,
        source="discordance" if one.kind == "binary" else "sd",
        inputs=(),
        metric=None,
        by=None,
        kind=one.kind,
        effect=eff,
        power=power,
        alpha=alpha,
        alternative=alternative,
        pairs=(PairPlan(None, None, one, ()),),
        allocation=allocation,
    )


def _confidence(alpha: float) -> float:
    return 1.0 - alpha

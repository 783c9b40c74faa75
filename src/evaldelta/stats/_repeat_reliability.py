"""Reliable or lucky: pass@k, pass^k and the spread of an arm's repeats, over cases.

Each case's repeated attempts give its own estimates (the reducers of
:mod:`evaldelta.stats._reducers`, computed from the case's counts by the same functions):
pass@k, the unbiased chance that at least one of ``k`` attempts passes (Chen et al. 2021,
"Evaluating Large Language Models Trained on Code", eq. 1: ``1 - C(n - c, k) / C(n, k)``),
and pass^k, the unbiased chance that all ``k`` pass (Yao et al. 2024, "tau-bench",
``C(c, k) / C(n, k)``), for a case with ``c`` passes in ``n`` scored attempts. A slice's
figure is the mean over its cases, with a Student t interval over the case values (the
case is the unit; ``n - 1`` degrees of freedom) whose ends are clipped to [0, 1]. Cases
with fewer than ``k`` scored attempts have no estimate and are left out (counted as
``short``).

Beside them, the share of cases that always pass (``c = n``), always fail (``c = 0``) or
are mixed, and for graded scores the spread of a case's repeats (the within-case standard
deviation). Repeats are taken as independent draws; byte-identical repeats (a cache,
temperature 0) make every case "always" and pass^k equal to the pass rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaldelta.stats._means import mean_t
from evaldelta.stats._multiple import holm
from evaldelta.stats._paired import paired_means
from evaldelta.stats._reducers import pass_at_count, pass_hat_count
from evaldelta.stats._results import ConfidenceInterval, Estimate, FrozenDict, PairedResult
from evaldelta.stats._validate import check_confidence, check_count

__all__ = [
    "PassHatSlices",
    "RepeatCounts",
    "RepeatReliability",
    "RepeatSpread",
    "pass_hat_k_paired",
    "pass_hat_k_slices",
    "repeat_reliability",
    "repeat_spread",
]

NAN = float("nan")
CLIPPED_T = "t over cases (clipped to [0, 1])"


@dataclass(frozen=True)
class RepeatCounts:
    """One arm's cases in one slice: scored attempts and passing attempts per case."""

    attempts: tuple[int, ...]
    passes: tuple[int, ...]


@dataclass(frozen=True)
class RepeatReliability:
    """One arm in one slice: pass@k and pass^k over cases, and how steady its cases are.

    ``pass_at_k`` and ``pass_hat_k``: means over the ``cases`` with at least ``k`` scored
    attempts of the per-case estimates, with a t interval over cases clipped to [0, 1]
    (``method`` says so; ``ci_at`` recomputes it unclipped). ``always_pass``,
    ``always_fail`` and ``mixed`` count those same cases (they sum to ``cases``); ``short``
    counts the cases left out for having fewer than ``k`` scored attempts.
    """

    k: int
    pass_at_k: Estimate
    pass_hat_k: Estimate
    always_pass: int
    always_fail: int
    mixed: int
    cases: int
    short: int
    confidence: float


@dataclass(frozen=True)
class PassHatSlices:
    """The paired pass^k delta of two arms per slice, with Holm's adjustment across slices.

    ``deltas``: candidate minus baseline per slice (:func:`pass_hat_k_paired`); ``holm``: the
    Holm-adjusted p-value of each (nan where the p-value is); ``short``: the shared cases
    per slice left out for having fewer than ``k`` scored attempts in an arm.
    """

    k: int
    deltas: Mapping[str, PairedResult]
    holm: Mapping[str, float]
    short: Mapping[str, int]
    confidence: float


@dataclass(frozen=True)
class RepeatSpread:
    """How far a graded score moves between repeats of the same case.

    ``mean_sd``: the mean over cases of the within-case standard deviation (ddof = 1), with
    a t interval over cases whose low end is clipped at 0; ``pooled_sd``: the square root of
    the pooled within-case variance ``sum (n_i - 1) s_i^2 / sum (n_i - 1)`` (one-way
    ANOVA's within-group mean square). Over the ``cases`` with at least 2 scored attempts;
    ``short`` counts the others.
    """

    mean_sd: Estimate
    pooled_sd: float
    cases: int
    short: int
    confidence: float


def _counts(
    name: str, attempts: Sequence[int], passes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    n = [check_count(f"{name}attempts[{i}]", a) for i, a in enumerate(attempts)]
    c = [check_count(f"{name}passes[{i}]", p) for i, p in enumerate(passes)]
    if len(n) != len(c):
        raise ValueError(
            f"{name}attempts and {name}passes need one entry per case; got {len(n)} and {len(c)}."
        )
    for i, (a, p) in enumerate(zip(n, c, strict=True)):
        if p > a:
            raise ValueError(f"{name}passes[{i}] = {p} exceeds {name}attempts[{i}] = {a}.")
    return np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)


def _check_k(k: object) -> int:
    out = check_count("k", k)
    if out < 1:
        raise ValueError(f"k must be at least 1; got {k!r}.")
    return out


def _per_case(n: np.ndarray, c: np.ndarray, k: int, hat: bool) -> np.ndarray:
    """The per-case estimate (pass^k if ``hat`` else pass@k); every case has ``n >= k``."""
    one = pass_hat_count if hat else pass_at_count
    return np.array([one(int(a), int(p), k) for a, p in zip(n, c, strict=True)], dtype=float)


def _clipped_t(
    values: np.ndarray, conf: float, low: float = 0.0, high: float = 1.0, method: str = CLIPPED_T
) -> Estimate:
    n = int(values.size)
    est = mean_t(
        n,
        float(values.mean()) if n else NAN,
        float(values.std(ddof=1)) if n >= 2 else NAN,
        conf,
    )
    ci = est.ci
    if not math.isnan(ci.low):
        ci = ConfidenceInterval(max(low, ci.low), min(high, ci.high))
    return Estimate(est.estimate, est.se, ci, n, method, df=est.df)


def repeat_reliability(
    attempts: Sequence[int], passes: Sequence[int], k: int, confidence: float = 0.95
) -> RepeatReliability:
    """pass@k and pass^k of one arm in one slice, over cases, and its steady cases.

    ``attempts[i]`` and ``passes[i]``: case i's scored attempts and those that passed (an
    attempt passes at the reducer's threshold, 1.0 by default, as in
    :func:`evaldelta.stats.reduce_values`). The per-case estimates are
    ``reduce_values(values, Reducer("pass_at", k))`` and ``Reducer("pass_hat", k)`` of that
    case (the same functions). Each figure is their mean over the cases with ``attempts
    >= k``, with Student t's interval over those case values (``scipy.stats.ttest_1samp``),
    clipped to [0, 1]. A figure every case shares (sd 0) has a nan interval, and fewer than
    2 cases a nan standard error, each with a DegenerateDataWarning (:func:`mean_t`).
    """
    kk = _check_k(k)
    conf = check_confidence(confidence)
    n, c = _counts("", attempts, passes)
    used = n >= kk
    n, c = n[used], c[used]
    always_pass = int(np.sum(c == n))
    always_fail = int(np.sum(c == 0))
    return RepeatReliability(
        kk,
        _clipped_t(_per_case(n, c, kk, hat=False), conf),
        _clipped_t(_per_case(n, c, kk, hat=True), conf),
        always_pass,
        always_fail,
        int(n.size) - always_pass - always_fail,
        int(n.size),
        int(used.size - n.size),
        conf,
    )


def _paired_cases(
    baseline: RepeatCounts, candidate: RepeatCounts, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    nb, cb = _counts("baseline.", baseline.attempts, baseline.passes)
    nc, cc = _counts("candidate.", candidate.attempts, candidate.passes)
    if nb.size != nc.size:
        raise ValueError(
            "baseline and candidate need one entry per shared case, in the same order; got "
            f"{nb.size} and {nc.size}."
        )
    used = (nb >= k) & (nc >= k)
    base = _per_case(nb[used], cb[used], k, hat=True)
    cand = _per_case(nc[used], cc[used], k, hat=True)
    return base, cand, int(used.size - np.count_nonzero(used))


def pass_hat_k_paired(
    baseline: RepeatCounts, candidate: RepeatCounts, k: int, confidence: float = 0.95
) -> PairedResult:
    """Candidate minus baseline pass^k on shared cases: the paired t over cases.

    ``baseline`` and ``candidate`` hold the same cases in the same order. Each case's
    pass^k delta is the unit; a case with fewer than ``k`` scored attempts in either arm is
    left out. Student's paired t on the per-case deltas (:func:`paired_means`), matching
    ``scipy.stats.ttest_rel(candidate_pass_hat, baseline_pass_hat)``; ``informative``
    counts the cases whose pass^k moved.
    """
    kk = _check_k(k)
    conf = check_confidence(confidence)
    base, cand, _ = _paired_cases(baseline, candidate, kk)
    return paired_means(base.tolist(), cand.tolist(), conf)


def pass_hat_k_slices(
    slices: Mapping[str, tuple[RepeatCounts, RepeatCounts]],
    k: int,
    confidence: float = 0.95,
) -> PassHatSlices:
    """:func:`pass_hat_k_paired` per slice, with Holm's adjusted p-values across slices.

    ``slices`` maps each slice to its ``(baseline, candidate)`` counts on shared cases. The
    family is the slices with a defined p-value (:func:`holm`, Holm 1979, as
    ``statsmodels.stats.multitest.multipletests(p, method="holm")``).
    """
    kk = _check_k(k)
    conf = check_confidence(confidence)
    deltas: dict[str, PairedResult] = {}
    short: dict[str, int] = {}
    for name, pair in slices.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ValueError(f"slice {name!r} needs a (baseline, candidate) pair; got {pair!r}.")
        base, cand, left_out = _paired_cases(pair[0], pair[1], kk)
        deltas[name] = paired_means(base.tolist(), cand.tolist(), conf)
        short[name] = left_out
    adjusted = holm([d.pvalue for d in deltas.values()])
    return PassHatSlices(
        kk,
        FrozenDict(deltas),
        FrozenDict(zip(deltas, adjusted, strict=True)),
        FrozenDict(short),
        conf,
    )


def repeat_spread(values: Sequence[Sequence[float]], confidence: float = 0.95) -> RepeatSpread:
    """The spread of a graded score across a case's repeats, over cases.

    ``values[i]``: case i's attempt scores; NaN (unscored) is left out, as the reducers do.
    Per case the sample standard deviation (ddof = 1, ``numpy.std(x, ddof=1)``) of its
    scored attempts; cases with fewer than 2 are left out. ``mean_sd`` is the t interval
    over cases of those (:func:`mean_t`), clipped at 0 below; ``pooled_sd`` the root of the
    pooled within-case variance.
    """
    conf = check_confidence(confidence)
    sds, dfs = [], []
    short = 0
    for i, case in enumerate(values):
        try:
            arr = np.asarray(case, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"values[{i}] must be a sequence of numbers; got {case!r}.") from exc
        if arr.ndim != 1 or np.isinf(arr).any():
            raise ValueError(f"values[{i}] must be a flat sequence of finite numbers or nan.")
        scored = arr[~np.isnan(arr)]
        if scored.size < 2:
            short += 1
            continue
        sds.append(float(scored.std(ddof=1)))
        dfs.append(scored.size - 1)
    sd = np.asarray(sds, dtype=float)
    df = np.asarray(dfs, dtype=float)
    pooled = math.sqrt(float(df @ (sd * sd)) / float(df.sum())) if sd.size else NAN
    mean_sd = _clipped_t(sd, conf, 0.0, math.inf, "t over cases (clipped at 0)")
    return RepeatSpread(mean_sd, pooled, int(sd.size), short, conf)

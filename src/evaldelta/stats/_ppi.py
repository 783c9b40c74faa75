"""Correcting a judge with a few human labels: prediction-powered means and paired deltas.

Method: PPI++ with power tuning (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453, section 2 and Example 2.1), which tunes the
prediction-powered inference of Angelopoulos et al. (2023, Science 382:669-674). Every case
has a judge score ``f``; a random subset of ``n`` cases also has a human label ``y``, the
truth; the other ``N`` cases are unlabelled. The estimate of the human-truth mean is

    theta = lam * mean(f over the N unlabelled cases) + mean(y - lam * f over the n labelled)

with ``lam`` the power-tuning parameter; its variance is estimated as
``lam^2 var(f_unlabelled) / N + var(y - lam f) / n`` and the interval is the normal (CLT)
one ``theta +/- z * se``. ``lam = 1`` is plain PPI and ``lam = 0`` the labelled-only
(classical) mean; the tuned ``lam = cov(y, f) / ((1 + n / N) var(f))``, clipped to [0, 1]
as the paper recommends for a mean, makes the interval asymptotically never wider than the
labelled-only one.

Conventions, exactly those of ``ppi_py`` 0.2.3 (the authors' package: ``ppi_mean_ci``,
``ppi_mean_pointestimate``, ``classical_mean_ci``; ``tests/stats/ppi_reference.py``):

- the unlabelled mean is over the ``N`` cases *without* a label, never over all ``n + N``
  (ppi_py's ``Yhat_unlabeled`` is a separate sample); the labelled cases' judge scores enter
  only the rectifier ``mean(y - lam f)``;
- ``cov(y, f)`` is the labelled sample's covariance with divisor ``n`` and ``var(f)`` the
  variance of all ``n + N`` judge scores with divisor ``n + N - 1`` (``np.cov``);
- every standard deviation in a standard error has divisor ``n`` (numpy's ``std``, ddof 0)
  and every interval is normal, the labelled-only and judge-only ones included, so the three
  are comparable: with ``lam = 0`` the PPI++ interval *is* the labelled-only one.

Labels mark themselves: ``human`` has one entry per case, NaN where the case is unlabelled.
The labelled subset must be a random sample of the cases (labels chosen by difficulty, or
noisy labels, are outside what the interval covers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from evaldelta.stats._distributions import norm_sf
from evaldelta.stats._means import mean_t
from evaldelta.stats._paired import paired_means
from evaldelta.stats._proportions import z_critical
from evaldelta.stats._results import ConfidenceInterval, Estimate, PairedResult
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_probability,
    check_real,
    warn_degenerate,
)

__all__ = [
    "JudgeBias",
    "JudgeConfusion",
    "PPIMean",
    "PPIMoments",
    "PPIPaired",
    "judge_bias",
    "judge_confusion",
    "ppi_mean",
    "ppi_mean_from_moments",
    "ppi_moments",
    "ppi_paired",
    "ppi_paired_from_moments",
]

NAN = float("nan")
_NAN_CI = ConfidenceInterval(NAN, NAN)


@dataclass(frozen=True)
class PPIMoments:
    """The sufficient statistics of a prediction-powered mean: sums over the two samples.

    Labelled cases: their count, and the sums of ``y``, ``y^2``, ``f``, ``f^2`` and
    ``y * f``; unlabelled cases: their count and the sums of ``f`` and ``f^2``. The engine
    can compute these in one aggregate; :func:`ppi_moments` computes them from per-case
    values.
    """

    n_labelled: int
    sum_human: float
    sumsq_human: float
    sum_judge: float
    sumsq_judge: float
    sum_product: float
    n_unlabelled: int
    sum_judge_unlabelled: float
    sumsq_judge_unlabelled: float


@dataclass(frozen=True)
class PPIMean:
    """A human-truth mean three ways: judge only, labelled only, and PPI++.

    ``judge_only``: the mean judge score over all ``n_labelled + n_unlabelled`` cases with
    its naive interval (the judge taken as the truth). ``labelled_only``: the mean human
    label over the labelled cases (the classical estimate). ``ppi``: the prediction-powered
    estimate at ``lam`` (``tuned``: chosen by power tuning rather than given). Every
    interval is normal (``Estimate.df`` is None), so ``ci_at`` and ``fail_pvalue`` apply.
    """

    ppi: Estimate
    judge_only: Estimate
    labelled_only: Estimate
    lam: float
    tuned: bool
    n_labelled: int
    n_unlabelled: int
    confidence: float


@dataclass(frozen=True)
class PPIPaired:
    """Candidate minus baseline of a human-truth mean on shared cases, three ways.

    The PPI++ mean of the per-case deltas (the case is the unit), as :class:`PPIMean`, with
    each estimate a :class:`PairedResult` (normal interval, two-sided z p-value against 0):
    ``judge_only`` on the judge deltas of every case, ``labelled_only`` on the human deltas
    of the labelled cases, ``ppi`` the prediction-powered delta. ``bias`` is the judge's bias
    per arm on the labelled cases (None when built from moments).
    """

    ppi: PairedResult
    judge_only: PairedResult
    labelled_only: PairedResult
    lam: float
    tuned: bool
    n_labelled: int
    n_unlabelled: int
    confidence: float
    bias: JudgeBias | None = None


@dataclass(frozen=True)
class JudgeBias:
    """The judge's bias ``mean(f - y)`` per arm on the labelled cases, and its difference.

    ``baseline`` and ``candidate``: one-sample t estimates of ``f - y``; ``difference``: the
    paired t of candidate minus baseline bias on the same cases, which is the judge-only
    paired delta's bias, the part PPI removes.
    """

    baseline: Estimate
    candidate: Estimate
    difference: PairedResult
    n: int
    confidence: float


@dataclass(frozen=True)
class JudgeConfusion:
    """Pass/fail agreement of judge and human on the labelled cases of one arm.

    ``judge_pass_human_fail`` is the judge's leniency, ``judge_fail_human_pass`` its
    strictness; ``agreement`` the share of labelled cases where the two agree.
    """

    both_pass: int
    judge_pass_human_fail: int
    judge_fail_human_pass: int
    both_fail: int
    agreement: float
    threshold: float


def _values(name: str, values: Sequence[float], *, missing: bool) -> np.ndarray:
    """A one-dimensional float array; NaN allowed (an unlabelled case) only if ``missing``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a sequence of numbers; got {values!r}.") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}.")
    bad = np.isinf(arr) if missing else ~np.isfinite(arr)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        what = "finite or nan (unlabelled)" if missing else "finite"
        raise ValueError(f"{name} must be {what}; got {float(arr[index])!r} at position {index}.")
    return arr


def _same_length(names: tuple[str, ...], arrays: tuple[np.ndarray, ...]) -> None:
    sizes = {a.size for a in arrays}
    if len(sizes) > 1:
        got = ", ".join(f"{n} has {a.size}" for n, a in zip(names, arrays, strict=True))
        raise ValueError(f"one value per case is needed in each array; {got}.")


def ppi_moments(judge: Sequence[float], human: Sequence[float]) -> PPIMoments:
    """The sums :func:`ppi_mean_from_moments` needs, from per-case values.

    ``judge``: every case's judge score (finite); ``human``: the same cases' human labels,
    NaN where a case is unlabelled. Raises ValueError naming a bad array or value.
    """
    f = _values("judge", judge, missing=False)
    y = _values("human", human, missing=True)
    _same_length(("judge", "human"), (f, y))
    lab = ~np.isnan(y)
    fl, yl, fu = f[lab], y[lab], f[~lab]
    return PPIMoments(
        int(yl.size),
        float(yl.sum()),
        float(yl @ yl),
        float(fl.sum()),
        float(fl @ fl),
        float(yl @ fl),
        int(fu.size),
        float(fu.sum()),
        float(fu @ fu),
    )


def _check_moments(m: PPIMoments) -> None:
    if not isinstance(m, PPIMoments):
        raise ValueError(f"moments must be a PPIMoments; got {m!r}.")
    check_count("moments.n_labelled", m.n_labelled)
    check_count("moments.n_unlabelled", m.n_unlabelled)
    for name in (
        "sum_human", "sumsq_human", "sum_judge", "sumsq_judge", "sum_product",
        "sum_judge_unlabelled", "sumsq_judge_unlabelled",
    ):  # fmt: skip
        check_real(f"moments.{name}", getattr(m, name))
    for name in ("sumsq_human", "sumsq_judge", "sumsq_judge_unlabelled"):
        if getattr(m, name) < 0:
            raise ValueError(f"moments.{name} must be non-negative; got {getattr(m, name)!r}.")


@dataclass(frozen=True)
class _Parts:
    """Means and divisor-n (co)variances of the two samples, read off the sums."""

    n: int
    big_n: int
    mean_y: float
    mean_f: float
    mean_u: float
    var_y: float
    var_f: float
    cov: float
    var_u: float
    mean_all: float
    var_all: float  # all n + N judge scores, divisor n + N


def _parts(m: PPIMoments) -> _Parts:
    n, big_n = m.n_labelled, m.n_unlabelled
    total = n + big_n

    def mean(s: float, k: int) -> float:
        return s / k if k else NAN

    def var(ss: float, s: float, k: int) -> float:
        return max(ss / k - (s / k) ** 2, 0.0) if k else NAN

    all_sum, all_ss = m.sum_judge + m.sum_judge_unlabelled, m.sumsq_judge + m.sumsq_judge_unlabelled
    return _Parts(
        n,
        big_n,
        mean(m.sum_human, n),
        mean(m.sum_judge, n),
        mean(m.sum_judge_unlabelled, big_n),
        var(m.sumsq_human, m.sum_human, n),
        var(m.sumsq_judge, m.sum_judge, n),
        m.sum_product / n - (m.sum_human / n) * (m.sum_judge / n) if n else NAN,
        var(m.sumsq_judge_unlabelled, m.sum_judge_unlabelled, big_n),
        mean(all_sum, total),
        var(all_ss, all_sum, total),
    )


def _tuned_lambda(p: _Parts) -> float:
    """``cov(y, f) / ((1 + n/N) var(f))`` clipped to [0, 1] (ppi_py's ``_calc_lam_glm``).

    0 when it is undefined: no unlabelled case (nothing to power the estimate), fewer than
    two judge scores, or judge scores that never vary (the judge carries no information).
    """
    total = p.n + p.big_n
    if p.n == 0 or p.big_n == 0 or total < 2:
        return 0.0
    var_all = p.var_all * total / (total - 1)  # np.cov's divisor n + N - 1
    if var_all <= 0.0:
        return 0.0
    lam = p.cov / ((1.0 + p.n / p.big_n) * var_all)
    return min(1.0, max(0.0, lam))


def _normal(estimate: float, se: float, n: int, z: float, method: str) -> Estimate:
    """A normal-interval Estimate; a zero or undefined standard error gives a nan interval."""
    if not math.isfinite(se) or se <= 0.0:
        return Estimate(estimate, se, _NAN_CI, n, method)
    return Estimate(
        estimate, se, ConfidenceInterval(estimate - z * se, estimate + z * se), n, method
    )


def _ppi_parts(p: _Parts, lam: float) -> tuple[float, float]:
    """The PPI estimate and its standard error at ``lam`` (``ppi_py.ppi_mean_ci``)."""
    if p.big_n == 0:
        return p.mean_y, math.sqrt(p.var_y / p.n)
    estimate = lam * p.mean_u + p.mean_y - lam * p.mean_f
    var_rect = max(p.var_y - 2.0 * lam * p.cov + lam * lam * p.var_f, 0.0)
    return estimate, math.sqrt(lam * lam * p.var_u / p.big_n + var_rect / p.n)


def _warn_undefined(n: int, total: int, results: tuple[tuple[str, Estimate], ...]) -> None:
    names = [name for name, r in results if math.isnan(r.ci.low)]
    if names:
        warn_degenerate(
            f"the {', '.join(names)} interval is undefined (nan) on {n} labelled of {total} "
            "cases: an interval needs 2 cases (2 labelled for PPI++ and labelled-only) and "
            "values that vary (a zero-width interval would claim a certainty a sample cannot "
            "give)."
        )


def ppi_mean_from_moments(
    moments: PPIMoments, confidence: float = 0.95, lam: float | None = None
) -> PPIMean:
    """A human-truth mean by PPI++ from :class:`PPIMoments`: see :func:`ppi_mean`."""
    _check_moments(moments)
    conf = check_confidence(confidence)
    given = None if lam is None else check_probability("lam", lam, open_interval=False)
    p = _parts(moments)
    z = z_critical(conf)
    total = p.n + p.big_n
    tuned = given is None
    lam_used = 0.0 if p.big_n == 0 else (_tuned_lambda(p) if given is None else given)
    judge_se = math.sqrt(p.var_all / total) if total >= 2 else NAN
    judge = _normal(p.mean_all, judge_se, total, z, "judge only (normal)")
    labelled_se = math.sqrt(p.var_y / p.n) if p.n >= 2 else NAN
    labelled = _normal(p.mean_y, labelled_se, p.n, z, "labelled only (normal)")
    estimate, se = _ppi_parts(p, lam_used) if p.n else (NAN, NAN)
    method = "ppi++ power-tuned (normal)" if tuned else f"ppi++ lambda {lam_used:g} (normal)"
    ppi = _normal(estimate, se if p.n >= 2 else NAN, total, z, method)
    named = (("judge-only", judge), ("labelled-only", labelled), ("PPI++", ppi))
    _warn_undefined(p.n, total, named)
    return PPIMean(ppi, judge, labelled, lam_used, tuned, p.n, p.big_n, conf)


def ppi_mean(
    judge: Sequence[float],
    human: Sequence[float],
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIMean:
    """A human-truth mean from judge scores on every case and human labels on a random few.

    ``judge``: one judge score per case (finite). ``human``: one value per case, the human
    label where the case is labelled and NaN where it is not. ``lam``: None (default) tunes
    it (PPI++: ``cov(y, f) / ((1 + n/N) var(f))`` clipped to [0, 1]); 1 is plain PPI, 0
    the labelled-only mean.

    Method: the module docstring (Angelopoulos, Duchi and Zrnic 2023). Matches, with
    ``Y, Yhat`` the labelled cases' labels and judge scores and ``Yhat_unlabeled`` the
    unlabelled cases' judge scores, ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled,
    alpha=1 - confidence, lam=lam)`` and ``ppi_py.ppi_mean_pointestimate`` (ppi_py 0.2.3),
    the labelled-only interval ``ppi_py.classical_mean_ci(Y)`` and the judge-only one
    ``ppi_py.classical_mean_ci(all judge scores)``. With no unlabelled case ``lam`` is 0
    (PPI++ is the labelled-only mean); with fewer than 2 labelled cases the labelled-only
    and PPI++ intervals are nan, with a DegenerateDataWarning, as is an interval whose
    standard error is 0.
    """
    return ppi_mean_from_moments(ppi_moments(judge, human), confidence, lam)


def _as_paired(est: Estimate, conf: float, informative: int | None) -> PairedResult:
    """A normal-interval Estimate of a mean delta as a PairedResult (z test against 0)."""
    if math.isfinite(est.se) and est.se > 0.0:
        statistic = est.estimate / est.se
        pvalue = 2.0 * norm_sf(abs(statistic))
    else:
        statistic, pvalue = NAN, NAN
    return PairedResult(
        est.estimate, est.se, est.ci, pvalue, est.n, informative, f"paired {est.method}", conf,
        statistic=statistic,
    )  # fmt: skip


def ppi_paired_from_moments(
    moments: PPIMoments, confidence: float = 0.95, lam: float | None = None
) -> PPIPaired:
    """The paired PPI++ delta from the :class:`PPIMoments` of the per-case deltas.

    ``moments`` are those of ``f = f_candidate - f_baseline`` and ``y = y_candidate -
    y_baseline`` (:func:`ppi_moments` on the deltas); see :func:`ppi_paired`. The result
    has no ``bias`` and no ``informative`` counts (the sums do not carry them).
    """
    r = ppi_mean_from_moments(moments, confidence, lam)
    conf = r.confidence
    return PPIPaired(
        _as_paired(r.ppi, conf, None),
        _as_paired(r.judge_only, conf, None),
        _as_paired(r.labelled_only, conf, None),
        r.lam,
        r.tuned,
        r.n_labelled,
        r.n_unlabelled,
        conf,
    )


def _paired_arrays(
    judge_baseline: Sequence[float],
    judge_candidate: Sequence[float],
    human_baseline: Sequence[float],
    human_candidate: Sequence[float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    names = ("judge_baseline", "judge_candidate", "human_baseline", "human_candidate")
    arrays = (
        _values(names[0], judge_baseline, missing=False),
        _values(names[1], judge_candidate, missing=False),
        _values(names[2], human_baseline, missing=True),
        _values(names[3], human_candidate, missing=True),
    )
    _same_length(names, arrays)
    one_sided = np.isnan(arrays[2]) != np.isnan(arrays[3])
    if one_sided.any():
        i = int(np.flatnonzero(one_sided)[0])
        raise ValueError(
            f"the case at position {i} has a human label for one arm only "
            f"(human_baseline {arrays[2][i]!r}, human_candidate {arrays[3][i]!r}); a paired "
            "correction needs labels for both arms on every labelled case."
        )
    return arrays


def ppi_paired(
    judge_baseline: Sequence[float],
    judge_candidate: Sequence[float],
    human_baseline: Sequence[float],
    human_candidate: Sequence[float],
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIPaired:
    """Candidate minus baseline of the human-truth mean on shared cases, corrected by PPI++.

    One entry per shared case in each array, in the same case order. Every case has a judge
    score for both arms; a random subset of cases has human labels for *both* arms (NaN in
    both human arrays elsewhere; a case labelled for one arm only is a ValueError naming
    its position). PPI++ runs on the per-case deltas ``f = f_c - f_b`` and ``y = y_c - y_b``
    (:func:`ppi_mean`), so the case is the unit and the two arms' judge errors on a case
    cancel where they agree. Matches ``ppi_py.ppi_mean_ci`` on those deltas (0.2.3); the
    p-value is the two-sided z test against 0, ``ppi_py.ppi_mean_pval(..., lam=lam)``.
    ``informative`` counts the non-zero deltas (judge deltas over every case for
    ``judge_only`` and ``ppi``, human deltas over the labelled ones for ``labelled_only``).
    ``bias`` is :func:`judge_bias` on the labelled cases.
    """
    fb, fc, yb, yc = _paired_arrays(
        judge_baseline, judge_candidate, human_baseline, human_candidate
    )
    f, y = fc - fb, yc - yb
    result = ppi_paired_from_moments(ppi_moments(f, y), confidence, lam)
    lab = ~np.isnan(y)
    judge_moved = int(np.count_nonzero(f))
    return replace(
        result,
        ppi=replace(result.ppi, informative=judge_moved),
        judge_only=replace(result.judge_only, informative=judge_moved),
        labelled_only=replace(result.labelled_only, informative=int(np.count_nonzero(y[lab]))),
        bias=_bias(fb[lab], fc[lab], yb[lab], yc[lab], result.confidence),
    )


def _bias(fb: np.ndarray, fc: np.ndarray, yb: np.ndarray, yc: np.ndarray, conf: float) -> JudgeBias:
    db, dc = fb - yb, fc - yc
    n = int(db.size)
    base = mean_t(n, float(db.mean()) if n else NAN, float(db.std(ddof=1)) if n >= 2 else NAN,
                  conf)  # fmt: skip
    cand = mean_t(n, float(dc.mean()) if n else NAN, float(dc.std(ddof=1)) if n >= 2 else NAN,
                  conf)  # fmt: skip
    return JudgeBias(base, cand, paired_means(db, dc, conf), n, conf)


def judge_bias(
    judge_baseline: Sequence[float],
    judge_candidate: Sequence[float],
    human_baseline: Sequence[float],
    human_candidate: Sequence[float],
    confidence: float = 0.95,
) -> JudgeBias:
    """The judge's bias per arm on the labelled cases, and whether it differs between arms.

    Arrays as in :func:`ppi_paired` (NaN human labels mark unlabelled cases, left out here).
    Per arm: the mean of ``f - y`` with its Student t interval (:func:`mean_t`, as
    ``scipy.stats.ttest_1samp(f - y, 0).confidence_interval``). The difference: candidate
    minus baseline bias, the paired t on the labelled cases (:func:`paired_means`, as
    ``scipy.stats.ttest_rel(f_c - y_c, f_b - y_b)``); a difference that is not zero is what
    moves a judge-only paired delta. Degenerate parts (fewer than 2 labelled cases, a bias
    that never varies) are nan with a DegenerateDataWarning.
    """
    conf = check_confidence(confidence)
    fb, fc, yb, yc = _paired_arrays(
        judge_baseline, judge_candidate, human_baseline, human_candidate
    )
    lab = ~np.isnan(yb)
    return _bias(fb[lab], fc[lab], yb[lab], yc[lab], conf)


def judge_confusion(
    judge: Sequence[float], human: Sequence[float], threshold: float = 1.0
) -> JudgeConfusion:
    """Pass/fail agreement of judge and human on one arm's labelled cases (NaN: unlabelled).

    A score passes at ``threshold`` or above (the reducers' convention, Inspect's default
    1.0). ``agreement`` is nan with no labelled case.
    """
    thr = check_real("threshold", threshold)
    f = _values("judge", judge, missing=False)
    y = _values("human", human, missing=True)
    _same_length(("judge", "human"), (f, y))
    lab = ~np.isnan(y)
    jp, hp = f[lab] >= thr, y[lab] >= thr
    counts = (
        int(np.sum(jp & hp)), int(np.sum(jp & ~hp)), int(np.sum(~jp & hp)), int(np.sum(~jp & ~hp))
    )  # fmt: skip
    n = sum(counts)
    return JudgeConfusion(*counts, (counts[0] + counts[3]) / n if n else NAN, thr)

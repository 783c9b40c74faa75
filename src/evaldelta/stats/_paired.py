"""Paired comparisons on the same cases: McNemar, Newcombe's paired interval, paired t."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from evaldelta.stats._distributions import binomtest_half, t_sf
from evaldelta.stats._means import t_critical
from evaldelta.stats._proportions import _wilson, z_critical
from evaldelta.stats._results import (
    ConfidenceInterval,
    PairedResult,
    ReliabilityWarning,
    TestResult,
)
from evaldelta.stats._thresholds import (
    MIN_DISCORDANT,
    MIN_INFORMATIVE,
    MIN_REPEAT_CASES,
    WALD_MIN_PAIRS,
)
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_mean,
    check_sd,
    warn_degenerate,
)

NAN = float("nan")
_INTERVALS = ("newcombe", "wald")


def _mcnemar_pvalue(b: int, c: int) -> float:
    if b + c == 0:
        return 1.0
    return binomtest_half(b, b + c)  # scipy.stats.binomtest(b, b + c, 0.5).pvalue


def mcnemar_exact(b: int, c: int) -> TestResult:
    """Exact two-sided McNemar test on the discordant counts ``b`` and ``c``.

    Method: McNemar (1947), exact form: a two-sided binomial test of ``b`` successes in
    ``b + c`` trials at p = 0.5 (``scipy.stats.binomtest``); matches
    ``statsmodels.stats.contingency_tables.mcnemar([[a, b], [c, d]], exact=True)``, whose
    statistic is ``min(b, c)``, the statistic reported here. With ``b = c = 0`` there is no
    discordant pair and the p-value is 1.0 (statistic 0).
    """
    b = check_count("b", b)
    c = check_count("c", c)
    return TestResult(float(min(b, c)), _mcnemar_pvalue(b, c), "exact mcnemar")


def _newcombe_paired(
    both: float, only_c: float, only_b: float, neither: float, z: float
) -> tuple[float, float]:
    """Newcombe (1998) paired method 10 for p_candidate - p_baseline.

    Notation of the paper: e = both pass, f = first (candidate) only, g = second (baseline)
    only, h = both fail. Counts are whole pairs except in ``stats._settle``, which scales a
    table's shares to a hypothetical n.
    """
    e, f, g, h = both, only_c, only_b, neither
    n = e + f + g + h
    p1, p2 = (e + f) / n, (e + g) / n
    d = p1 - p2
    l1, u1 = _wilson(e + f, n, z)
    l2, u2 = _wilson(e + g, n, z)
    margins = (e + f) * (g + h) * (e + g) * (f + h)
    if margins == 0:
        phi = 0.0  # the paper sets phi to 0 when any margin is empty
    else:
        cross = e * h - f * g
        corrected = cross - n / 2.0 if cross > n / 2.0 else (0.0 if cross >= 0 else cross)
        phi = corrected / math.sqrt(margins)
    dl1, du1 = p1 - l1, u1 - p1
    dl2, du2 = p2 - l2, u2 - p2
    low = d - math.sqrt(max(0.0, dl1 * dl1 - 2.0 * phi * dl1 * du2 + du2 * du2))
    high = d + math.sqrt(max(0.0, du1 * du1 - 2.0 * phi * du1 * dl2 + dl2 * dl2))
    return max(-1.0, low), min(1.0, high)


def _warn_few_discordant(discordant: int) -> None:
    """Warn when Newcombe's paired interval rests on fewer than ``MIN_DISCORDANT`` pairs.

    When the discordant pairs all go one way it covers 0.893 at 40 pairs and 5% discordance
    and 0.885 at 100 pairs and 2% (exact: every table enumerated with its multinomial
    probability; docs/calibration.md, one-way grid); on the tables with 5 or more discordant
    pairs it covers at least 0.945 on that grid. Issue 24 (item 12) offered a warning or
    another interval (Tango's 1998 score interval, a mid-p exact conditional one); the
    warning keeps the interval Fagerland, Lydersen and Laake (2014) rank among the best.
    """
    if discordant < MIN_DISCORDANT:
        warnings.warn(
            f"the paired pass/fail interval rests on fewer than {MIN_DISCORDANT} "
            "discordant pairs: when they all go one way Newcombe's interval covers as "
            "little as 0.89 (docs/calibration.md, one-way discordance)",
            ReliabilityWarning,
            stacklevel=3,
        )


def paired_proportions(
    both_pass: int,
    only_baseline: int,
    only_candidate: int,
    both_fail: int,
    confidence: float = 0.95,
    interval: str = "newcombe",
) -> PairedResult:
    """Paired difference of pass rates, candidate minus baseline, from the 2x2 table.

    Estimate ``(c - b) / n`` with ``b = only_baseline``, ``c = only_candidate``; ``se`` is the
    Wald form ``sqrt(b + c - (b - c)^2 / n) / n``; ``pvalue`` and ``statistic`` are the exact
    McNemar test (:func:`mcnemar_exact`; statistic ``min(b, c)``); ``informative = b + c``.

    ``interval="newcombe"`` (default): Newcombe (1998), "Improved confidence intervals for the
    difference between binomial proportions based on paired data", Statistics in Medicine
    17:2635-2650, method 10: Wilson score intervals for the two marginal rates combined with
    the continuity-corrected phi correlation (phi = 0 when a margin is empty).
    ``interval="wald"``: ``estimate +/- z * se`` (Newcombe's method 1); below
    ``WALD_MIN_PAIRS`` (100) pairs it under-covers badly (measured in docs/calibration.md)
    and a ReliabilityWarning says so, as it does for Newcombe's on fewer than
    ``MIN_DISCORDANT`` (5) discordant pairs (:func:`_warn_few_discordant`). With ``n = 0``
    everything is nan with a DegenerateDataWarning.
    """
    a = check_count("both_pass", both_pass)
    b = check_count("only_baseline", only_baseline)
    c = check_count("only_candidate", only_candidate)
    d = check_count("both_fail", both_fail)
    conf = check_confidence(confidence)
    if interval not in _INTERVALS:
        raise ValueError(f"interval must be 'newcombe' or 'wald'; got {interval!r}.")
    method = f"paired proportions ({interval} interval, exact mcnemar)"
    n = a + b + c + d
    test = mcnemar_exact(b, c)
    if n == 0:
        warn_degenerate("A paired difference is undefined for n = 0 pairs; returning nan.")
        nan_ci = ConfidenceInterval(NAN, NAN)
        return PairedResult(
            NAN, NAN, nan_ci, NAN, 0, 0, method, conf, b=0, c=0, a=0, interval=interval
        )
    z = z_critical(conf)
    estimate = (c - b) / n
    se = math.sqrt(max(0.0, b + c - (b - c) ** 2 / n)) / n
    if interval == "wald":
        ci = ConfidenceInterval(estimate - z * se, estimate + z * se)
        if n < WALD_MIN_PAIRS:
            warnings.warn(
                f"the Wald paired interval on fewer than {WALD_MIN_PAIRS} pairs covers well "
                "below its nominal level (Newcombe 1998, method 1; docs/calibration.md); "
                "the default, Newcombe's method 10, holds there",
                ReliabilityWarning,
                stacklevel=2,
            )
    else:
        ci = ConfidenceInterval(*_newcombe_paired(a, c, b, d, z))
        _warn_few_discordant(b + c)
    return PairedResult(
        estimate,
        se,
        ci,
        test.pvalue,
        n,
        b + c,
        method,
        conf,
        b=b,
        c=c,
        statistic=test.statistic,
        a=a,
        interval=interval,
    )


def _paired_t(
    n: int,
    mean: float,
    sd: float,
    conf: float,
    informative: int | None,
    pass_fail_repeats: bool = False,
) -> PairedResult:
    method = "paired t"
    if n < 2:
        warn_degenerate(f"A paired t interval needs n >= 2 pairs; got n = {n}. Returning nan.")
        est = mean if n == 1 else NAN
        return PairedResult(
            est, NAN, ConfidenceInterval(NAN, NAN), NAN, n, informative, method, conf
        )
    df = float(n - 1)
    se = sd / math.sqrt(n)
    if se == 0.0:
        warn_degenerate(
            f"Every one of the {n} paired deltas is {mean:g} (sd = 0): the t statistic and "
            "interval are undefined (an interval of zero width would claim certainty a "
            "finite sample cannot give); returning nan."
        )
        return PairedResult(
            mean,
            0.0,
            ConfidenceInterval(NAN, NAN),
            NAN,
            n,
            informative,
            method,
            conf,
            statistic=NAN,
            df=df,
        )
    if informative is not None and informative < MIN_INFORMATIVE:
        warnings.warn(
            f"the paired t interval rests on fewer than {MIN_INFORMATIVE} informative pairs "
            "(pairs whose delta is not zero): its coverage is not assured there "
            "(docs/calibration.md), so the slice is not decidable and a gate rule on it is "
            "inconclusive",
            ReliabilityWarning,
            stacklevel=3,
        )
    if pass_fail_repeats and n < MIN_REPEAT_CASES:
        warnings.warn(
            f"the paired t interval on case means of pass/fail repeats rests on fewer than "
            f"{MIN_REPEAT_CASES} cases: its coverage is not assured there (0.91 at 20 cases, "
            "docs/calibration.md), so the slice is not decidable and a gate rule on it is "
            "inconclusive",
            ReliabilityWarning,
            stacklevel=3,
        )
    statistic = mean / se
    pvalue = 2.0 * t_sf(abs(statistic), df)
    half = t_critical(conf, df) * se
    return PairedResult(
        mean,
        se,
        ConfidenceInterval(mean - half, mean + half),
        pvalue,
        n,
        informative,
        method,
        conf,
        statistic=statistic,
        df=df,
    )


def paired_means(
    baseline_scores: Sequence[float],
    candidate_scores: Sequence[float],
    confidence: float = 0.95,
) -> PairedResult:
    """Paired t on per-case deltas ``candidate - baseline``.

    Method: Student's paired t test: mean delta, ``se = sd(ddof=1) / sqrt(n)``, t interval on
    ``n - 1`` degrees of freedom and a two-sided p-value; matches
    ``scipy.stats.ttest_rel(candidate_scores, baseline_scores)`` (statistic, pvalue,
    ``confidence_interval()``). ``informative`` counts the non-zero deltas. With fewer than 2
    pairs, or identical deltas, the undefined parts are nan with a DegenerateDataWarning.
    """
    conf = check_confidence(confidence)
    base = _scores("baseline_scores", baseline_scores)
    cand = _scores("candidate_scores", candidate_scores)
    if base.shape != cand.shape:
        raise ValueError(
            "baseline_scores and candidate_scores must have the same length; got "
            f"{base.size} and {cand.size}."
        )
    deltas = cand - base
    n = int(deltas.size)
    mean = float(np.mean(deltas)) if n else NAN
    sd = float(np.std(deltas, ddof=1)) if n >= 2 else NAN
    informative = int(np.count_nonzero(deltas))
    return _paired_t(n, mean, sd, conf, informative)


def paired_means_from_summary(
    n: int,
    mean_delta: float,
    sd_delta: float,
    confidence: float = 0.95,
    *,
    informative: int | None = None,
    pass_fail_repeats: bool = False,
) -> PairedResult:
    """Paired t from summary statistics of the deltas ``candidate - baseline``.

    Method: as :func:`paired_means` (Student's paired t; ``scipy.stats.ttest_rel``), with
    ``sd_delta`` the sample standard deviation (ddof = 1) of the per-case deltas.
    ``pass_fail_repeats``: the deltas are differences of case means of repeated pass/fail
    attempts; below ``MIN_REPEAT_CASES`` (30) cases a ReliabilityWarning says the interval's
    coverage is not assured (0.91 at 20 cases on the draws with 10 or more informative
    pairs; docs/calibration.md).
    """
    n = check_count("n", n)
    mean = check_mean("mean_delta", mean_delta, n)
    sd = check_sd("sd_delta", sd_delta, n)
    conf = check_confidence(confidence)
    if informative is not None:
        informative = check_count("informative", informative)
        if informative > n:
            raise ValueError(f"informative must not exceed n = {n}; got {informative!r}.")
    return _paired_t(n, mean, sd, conf, informative, pass_fail_repeats)


def _scores(name: str, values: Sequence[float]) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a sequence of numbers; got {values!r}.") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite; got {arr[index]!r} at position {index}.")
    return arr

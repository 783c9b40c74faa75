"""Intervals at another confidence level, and the one-sided p-value an interval implies.

A gate rule judges an estimate against a bound with the comparison's two-sided interval.
Controlling the family-wise rate of its *fail* decisions across many rules (Holm 1979)
needs each rule's one-sided p-value for "below the bound", consistent with the interval
method that judged it: the p-value is ``(1 - c*) / 2`` where ``c*`` is the confidence level
at which the interval's upper end reaches the bound (the test-interval duality). This works
for every interval evaldelta computes, recomputed from the result's own sufficient
statistics: Newcombe's paired score interval from its 2x2 table, Wald and t intervals from
the estimate and standard error, Wilson from the count (or effective count).
"""

from __future__ import annotations

import math
from typing import Any

from evaldelta.stats._distributions import norm_cdf, norm_ppf, norm_sf, t_cdf, t_ppf
from evaldelta.stats._results import (
    ConfidenceInterval,
    Estimate,
    FixedMix,
    PairedResult,
    UnpairedResult,
)
from evaldelta.stats._validate import check_confidence

__all__ = ["fail_pvalue", "interval_at"]

NAN = float("nan")


def _symmetric(
    estimate: float, se: float, confidence: float, df: float | None
) -> ConfidenceInterval:
    if not (math.isfinite(estimate) and math.isfinite(se)) or se <= 0.0:
        return ConfidenceInterval(NAN, NAN)
    q = 0.5 + confidence / 2.0
    crit = t_ppf(q, df) if df is not None and math.isfinite(df) else norm_ppf(q)
    return ConfidenceInterval(estimate - crit * se, estimate + crit * se)


def interval_at(result: Any, confidence: float) -> ConfidenceInterval:
    """``result``'s interval recomputed at ``confidence``, by the method that made it.

    ``PairedResult``: pass/fail pairs from the 2x2 table (Newcombe or Wald, as judged), else
    the paired t on ``df``. ``Estimate``: Wilson on the count (``"wilson"``) or on the
    effective count of repeats (the Wilson of :func:`proportion_of_means`), else t on
    ``df``. ``FixedMix``: ``center +/- t_df se`` (normal without a df; unclipped).
    ``UnpairedResult``: t on its df when it has one (Welch), else normal on its standard
    error.
    """
    conf = check_confidence(confidence)
    if hasattr(result, "fail_pvalue"):  # a confidence sequence recomputes itself
        return result.ci_at(conf)  # type: ignore[no-any-return]
    if isinstance(result, PairedResult):
        if result.a is not None and result.b is not None and result.c is not None:
            from evaldelta.stats._paired import _newcombe_paired
            from evaldelta.stats._proportions import z_critical

            a, b, c, n = result.a, result.b, result.c, result.n
            if n == 0:
                return ConfidenceInterval(NAN, NAN)
            z = z_critical(conf)
            if result.interval == "wald":  # the same formula as paired_proportions
                se = math.sqrt(max(0.0, b + c - (b - c) ** 2 / n)) / n
                est = (c - b) / n
                return ConfidenceInterval(est - z * se, est + z * se)
            return ConfidenceInterval(*_newcombe_paired(a, c, b, n - a - b - c, z))
        return _symmetric(result.estimate, result.se, conf, result.df)
    if isinstance(result, Estimate):
        if result.method.startswith("wilson"):
            from evaldelta.stats._proportions import _rate_limits, z_critical

            size = float(result.df) if result.df is not None else float(result.n)
            if not size or not math.isfinite(result.estimate):
                return ConfidenceInterval(NAN, NAN)
            low, high = _rate_limits(result.estimate * size, size, z_critical(conf))
            return ConfidenceInterval(low, high)
        return _symmetric(result.estimate, result.se, conf, result.df)
    if isinstance(result, FixedMix):
        center = result.center if result.center is not None else result.estimate
        return _symmetric(center, result.se, conf, result.df)
    if isinstance(result, UnpairedResult):
        return _symmetric(result.estimate, result.se, conf, result.df)
    raise TypeError(f"no interval method for {type(result).__name__}")


def _symmetric_pvalue(result: Any, estimate: float, bound: float) -> float | None:
    """The closed form for a symmetric interval ``estimate +/- q * se``: ``F((est - b) / se)``."""
    score_based = (isinstance(result, PairedResult) and result.a is not None) or (
        isinstance(result, Estimate) and result.method.startswith("wilson")
    )
    if score_based:
        return None
    se = float(result.se)
    if not math.isfinite(se) or se <= 0.0:
        return NAN
    if isinstance(result, FixedMix) and result.center is not None:
        estimate = result.center  # the interval's centre (Price-Bonett adjusted rates)
    z = (estimate - bound) / se
    df = getattr(result, "df", None)
    if df is not None and math.isfinite(df):
        return t_cdf(z, df)
    return norm_cdf(z)


def _score_upper(result: Any, z: float) -> float:
    """The upper end of a score interval (Newcombe, Wald, Wilson) at normal quantile ``z``."""
    from evaldelta.stats._paired import _newcombe_paired
    from evaldelta.stats._proportions import _rate_limits

    if isinstance(result, PairedResult):
        a, b, c, n = result.a or 0, result.b or 0, result.c or 0, result.n
        if result.interval == "wald":
            se = math.sqrt(max(0.0, b + c - (b - c) ** 2 / n)) / n
            return (c - b) / n + z * se
        return _newcombe_paired(a, c, b, n - a - b - c, z)[1]
    size = float(result.df) if result.df is not None else float(result.n)
    return _rate_limits(result.estimate * size, size, z)[1]


def fail_pvalue(result: Any, bound: float) -> float:
    """The one-sided p-value for "the true value lies below ``bound``" that the interval implies.

    Method: with ``U(c)`` the upper end of ``result``'s two-sided interval at confidence
    ``c`` (:func:`interval_at`), the p-value is ``(1 - c*) / 2`` where ``U(c*) = bound``:
    the rule "fail when the whole (1 - alpha) interval lies below the bound" is exactly
    "fail when this p-value is below alpha / 2". For a t or normal interval this is the
    closed form ``F((estimate - bound) / se)``; for a score interval (Newcombe, Wilson)
    ``U`` is solved for its normal quantile ``z*`` by bisection (``scipy.optimize.brentq``)
    and the p-value is ``1 - Phi(z*)``. An estimate at or above the bound gives 1; an
    undefined interval gives nan.
    """
    estimate = float(result.estimate)
    if not math.isfinite(estimate) or not math.isfinite(bound):
        return NAN
    if estimate >= bound:
        return 1.0
    anytime = getattr(result, "fail_pvalue", None)
    if anytime is not None:  # a confidence sequence's own anytime-valid p-value
        return float(anytime(bound))
    closed = _symmetric_pvalue(result, estimate, bound)
    if closed is not None:
        return closed
    if result.n == 0:
        return NAN

    def gap(z: float) -> float:
        return _score_upper(result, z) - bound

    low, high = 1e-9, 40.0
    if gap(low) >= 0.0:
        return 0.5
    if gap(high) < 0.0:
        return norm_sf(high)
    from scipy import optimize  # only here: importing it costs 0.3 s beyond scipy.special

    return norm_sf(optimize.brentq(gap, low, high, xtol=1e-12, rtol=1e-12))

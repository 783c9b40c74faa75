"""Direct standardization to a fixed slice mix, and the Simpson's-paradox check."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

from evaldelta.stats._proportions import check_successes, z_critical
from evaldelta.stats._results import (
    ConfidenceInterval,
    FixedMix,
    FrozenDict,
    SimpsonResult,
    Standardization,
    StandardizedRate,
)
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_nonnegative,
    check_real,
    warn_degenerate,
)

NAN = float("nan")
Counts = Mapping[str, Mapping[str, tuple[float, int]]]


def _check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Validate weights and rescale them by their largest, which leaves every share as it was.

    Rescaling first keeps sums finite: weights of 1e308 would otherwise sum to infinity
    and every share would come out 0.
    """
    checked = {str(k): check_nonnegative(f"weights[{k!r}]", w) for k, w in weights.items()}
    top = max(checked.values(), default=0.0)
    if not checked or top <= 0.0:
        raise ValueError(
            f"weights must contain at least one positive weight; got {dict(weights)!r}."
        )
    return {k: w / top for k, w in checked.items()}


def _is_finite(value: object) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _fixed_mix(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: dict[str, float],
    conf: float,
    method: str,
    bounds: tuple[float, float] | None = None,
    dfs: Mapping[str, float] | None = None,
) -> FixedMix:
    total = sum(weights.values())
    used: list[str] = []
    dropped: list[str] = []
    for name, w in weights.items():
        if w <= 0.0:
            continue
        x, se = estimates.get(name), ses.get(name)
        if _is_finite(x) and _is_finite(se):
            used.append(name)
        else:
            dropped.append(name)
    dropped_weight = sum(weights[k] for k in dropped) / total
    if not used:
        warn_degenerate(
            "No slice with positive weight has a finite estimate and standard error "
            f"(dropped: {', '.join(dropped)}); the fixed-mix estimate is nan."
        )
        nan_ci = ConfidenceInterval(NAN, NAN)
        return FixedMix(
            NAN, NAN, nan_ci, FrozenDict({}), (), tuple(dropped), dropped_weight, method
        )
    used_total = sum(weights[k] for k in used)
    norm = {k: weights[k] / used_total for k in used}
    estimate = sum(norm[k] * float(estimates[k]) for k in used)
    parts = [(norm[k] * float(ses[k])) ** 2 for k in used]
    se = math.sqrt(sum(parts))
    df: float | None = None
    if dfs is None:
        half = z_critical(conf) * se
    else:
        from evaldelta.stats._fixed_mix import satterthwaite_df
        from evaldelta.stats._means import t_critical

        df = satterthwaite_df(parts, [float(dfs[k]) for k in used])
        half = t_critical(conf, df) * se
    low, high = estimate - half, estimate + half
    if bounds is not None:  # the parameter cannot leave its range; neither may its interval
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return FixedMix(
        estimate,
        se,
        ConfidenceInterval(low, high),
        FrozenDict(norm),
        tuple(used),
        tuple(dropped),
        dropped_weight,
        method,
        df=df,
    )


def fixed_mix(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: Mapping[str, float],
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    dfs: Mapping[str, float] | None = None,
) -> FixedMix:
    """Directly standardized combination ``sum_k w_k x_k`` of per-slice estimates.

    Method: direct standardization (Breslow & Day 1987, "Statistical Methods in Cancer
    Research" vol. II, ch. 2; Rothman, Greenland & Lash, "Modern Epidemiology", ch. on
    standardization): ``estimate = sum_k w_k x_k``, ``se = sqrt(sum_k w_k^2 se_k^2)``,
    normal interval ``estimate +/- z se``; slices are treated as independent.

    ``weights`` may be on any scale (they are renormalized). A slice is used when it has a
    positive weight and a finite estimate and finite standard error (an se of 0 is fine).
    Positive-weight slices missing from ``estimates`` / ``ses`` or non-finite there are
    dropped and their share of the original total weight is reported; zero-weight slices and
    slices absent from ``weights`` carry no weight and are neither used nor dropped. Negative
    or non-finite weights, or all weights zero, raise ValueError; a negative se raises
    ValueError. With no usable slice the result is nan with a DegenerateDataWarning.

    ``bounds`` (for example ``(0, 1)`` for a rate, ``(-1, 1)`` for a difference of rates)
    clips the interval to the parameter's range: a normal interval around a standardized
    rate near 0 or 1 would otherwise claim impossible values, and clipping changes no
    interval's coverage, since the true value lies inside the range.

    ``dfs`` (each used slice's degrees of freedom, for example ``n_k - 1`` for a t standard
    error) makes the interval Student t on Satterthwaite's (1946) df of the combined
    variance (:func:`evaldelta.stats.satterthwaite_df`), recorded as the result's ``df``:
    a mix that weights a small slice heavily then widens as it should.
    """
    checked = _check_weights(weights)
    if bounds is not None:
        lo, hi = (check_real("bounds[0]", bounds[0]), check_real("bounds[1]", bounds[1]))
        if not lo < hi:
            raise ValueError(f"bounds must be (low, high) with low < high; got {bounds!r}.")
        bounds = (lo, hi)
    conf = check_confidence(confidence)
    for name, se in ses.items():
        if _is_finite(se) and float(se) < 0.0:
            raise ValueError(f"ses[{name!r}] must be non-negative; got {se!r}.")
    if dfs is not None:
        for name, f in dfs.items():
            if not (_is_finite(f) or f == math.inf) or float(f) <= 0.0:
                raise ValueError(f"dfs[{name!r}] must be positive; got {f!r}.")
        missing = [k for k, w in checked.items() if w > 0 and k in estimates and k not in dfs]
        if missing:
            raise ValueError(f"dfs must give every weighted slice's df; missing {missing!r}.")
    method = (
        "direct standardization (normal interval)"
        if dfs is None
        else "direct standardization (t on Satterthwaite df)"
    )
    return _fixed_mix(estimates, ses, checked, conf, method, bounds, dfs)


def _check_counts(
    counts: Counts, *, graded: bool = False
) -> dict[str, dict[str, tuple[float, int]]]:
    if not counts:
        raise ValueError("counts must contain at least one arm; got an empty mapping.")
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for arm, slices in counts.items():
        out[arm] = {}
        for name, pair in slices.items():
            try:
                passed, total = pair
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"counts[{arm!r}][{name!r}] must be a (passed, total) pair; got {pair!r}."
                ) from exc
            where = f"counts[{arm!r}][{name!r}]"
            n = check_count(f"{where} total", total)
            if graded:
                if not _is_finite(passed):
                    raise ValueError(f"{where} sum must be a finite number; got {passed!r}.")
                out[arm][name] = (float(passed), n)
            else:
                out[arm][name] = (check_successes(f"{where} passed", passed, n), n)
    return out


def _pooled(slices: Mapping[str, tuple[float, int]]) -> tuple[float, int]:
    passed = sum(p for p, _ in slices.values())
    total = sum(n for _, n in slices.values())
    return (passed / total if total else NAN), total


def standardize(
    counts: Counts, weights: Mapping[str, float], confidence: float = 0.95
) -> Standardization:
    """Fixed-mix (directly standardized) pass rates for every arm, beside pooled rates.

    Method: direct standardization as :func:`fixed_mix` (Breslow & Day 1987, vol. II, ch. 2)
    over the common slices, those with positive weight where every arm has ``total > 0``;
    per-slice se is the binomial ``sqrt(p (1 - p) / n)``, so this function is for binary
    pass/fail rates (``passed`` may be a float sum, but the se then assumes 0/1 scores).
    ``pooled`` is each arm's own-mix rate ``sum passed / sum total`` over all its slices.
    ``counts`` is ``{arm: {slice: (passed, total)}}``; ``weights`` is ``{slice: w >= 0}`` on
    any scale.
    """
    checked_w = _check_weights(weights)
    conf = check_confidence(confidence)
    data = _check_counts(counts)
    total_w = sum(checked_w.values())
    common = tuple(
        k
        for k, w in checked_w.items()
        if w > 0.0 and all(data[arm].get(k, (0.0, 0))[1] > 0 for arm in data)
    )
    dropped = tuple(k for k, w in checked_w.items() if w > 0.0 and k not in common)
    dropped_weight = sum(checked_w[k] for k in dropped) / total_w
    common_total = sum(checked_w[k] for k in common)
    norm = {k: checked_w[k] / common_total for k in common}
    if not common:
        warn_degenerate(
            "No slice with positive weight has cases in every arm; standardized rates are nan."
        )
    method = "direct standardization of binomial rates (normal interval)"
    rates: dict[str, StandardizedRate] = {}
    for arm, slices in data.items():
        est = {k: slices[k][0] / slices[k][1] for k in common}
        ses = {k: math.sqrt(est[k] * (1.0 - est[k]) / slices[k][1]) for k in common}
        if common:
            mix = _fixed_mix(est, ses, checked_w, conf, method, (0.0, 1.0))
        else:
            mix = FixedMix(
                NAN,
                NAN,
                ConfidenceInterval(NAN, NAN),
                FrozenDict({}),
                (),
                dropped,
                dropped_weight,
                method,
            )
        pooled, pooled_n = _pooled(slices)
        if pooled_n == 0:
            warn_degenerate(f"Arm {arm!r} has no cases; its pooled rate is nan.")
        rates[arm] = StandardizedRate(arm, mix, pooled, pooled_n)
    return Standardization(FrozenDict(rates), FrozenDict(norm), common, dropped, dropped_weight)


def _strictly_opposite(x: float, y: float) -> bool:
    return (x > 0.0 and y < 0.0) or (x < 0.0 and y > 0.0)


def simpson_check(
    counts: Counts,
    baseline: str,
    candidate: str,
    *,
    weights: Mapping[str, float] | None = None,
    graded: bool = False,
) -> SimpsonResult:
    """Check whether pooled rates tell a different story from per-slice rates.

    Method: Simpson's paradox (Simpson 1951; Blyth 1972, "On Simpson's paradox and the
    sure-thing principle", JASA 67:364-366) diagnosed by comparing the pooled delta (each arm
    on its own mix) with the slice deltas over common slices (both arms ``total > 0``) and
    with the directly standardized delta ``sum_k w_k d_k`` (weights renormalized over the
    common slices with positive weight; ``weights=None`` means equal weights).
    ``standardized_delta`` is None when no common slice has positive weight. Deltas are
    candidate minus baseline. With ``graded=True`` the first member of each pair is a sum of
    case-level scores (any finite number) rather than a pass count, so the same check applies
    to graded means.
    """
    data = _check_counts(counts, graded=graded)
    for role, arm in (("baseline", baseline), ("candidate", candidate)):
        if arm not in data:
            raise ValueError(f"{role} arm {arm!r} is not in counts (arms: {list(data)!r}).")
    if baseline == candidate:
        raise ValueError(f"baseline and candidate must differ; both are {baseline!r}.")
    base, cand = data[baseline], data[candidate]
    order = list(base) + [k for k in cand if k not in base]
    common = tuple(
        k for k in order if base.get(k, (0.0, 0))[1] > 0 and cand.get(k, (0.0, 0))[1] > 0
    )
    deltas = {k: cand[k][0] / cand[k][1] - base[k][0] / base[k][1] for k in common}
    pooled_b, n_b = _pooled(base)
    pooled_c, n_c = _pooled(cand)
    if n_b == 0 or n_c == 0:
        warn_degenerate(
            f"An arm has no cases (baseline n = {n_b}, candidate n = {n_c}); "
            "the pooled delta is nan."
        )
    pooled_delta = pooled_c - pooled_b
    w = {k: 1.0 for k in common} if weights is None else _check_weights(weights)
    used = [k for k in common if w.get(k, 0.0) > 0.0]
    standardized: float | None = None
    if used:
        total = sum(w[k] for k in used)
        standardized = sum(w[k] / total * deltas[k] for k in used)
    values = list(deltas.values())
    strict = bool(values) and (
        (all(v > 0.0 for v in values) and pooled_delta < 0.0)
        or (all(v < 0.0 for v in values) and pooled_delta > 0.0)
    )
    shift = strict or (standardized is not None and _strictly_opposite(pooled_delta, standardized))
    return SimpsonResult(common, FrozenDict(deltas), pooled_delta, standardized, strict, shift)

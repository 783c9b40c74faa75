"""pass@k, pass^k and repeat spread over cases, against direct enumeration and scipy.

References: per case, pass@k and pass^k are the shares of the ``C(n, k)`` subsets of ``k``
attempts (``itertools.combinations``) with at least one pass and with every one passing,
which is what Chen et al. 2021 (eq. 1) and Yao et al. 2024 (tau-bench) estimate without
replacement; the interval over cases is ``scipy.stats.ttest_1samp(...).confidence_interval``
clipped to [0, 1]; the paired delta ``scipy.stats.ttest_rel``; Holm
``statsmodels.stats.multitest.multipletests(method="holm")``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import evaldelta.stats as es


def _enumerated(n: int, c: int, k: int) -> tuple[float, float]:
    attempts = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(attempts, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


def _cases(seed: int, size: int, most: int = 6) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    attempts = [rng.randint(1, most) for _ in range(size)]
    rates = [rng.random() for _ in range(size)]
    passes = [sum(rng.random() < p for _ in range(a)) for a, p in zip(attempts, rates, strict=True)]
    return attempts, passes


def _rc(
    attempts: list[int] | tuple[int, ...], passes: list[int] | tuple[int, ...]
) -> es.RepeatCounts:
    return es.RepeatCounts(tuple(attempts), tuple(passes))


def _t_clipped(values: list[float]) -> tuple[float, float]:
    low, high = sps.ttest_1samp(values, 0.0).confidence_interval(0.95)
    return max(0.0, float(low)), min(1.0, float(high))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_reliability_matches_enumeration_and_scipy(k: int) -> None:
    attempts, passes = _cases(k, 60)
    res = es.repeat_reliability(attempts, passes, k)
    used = [(n, c) for n, c in zip(attempts, passes, strict=True) if n >= k]
    at = [_enumerated(n, c, k)[0] for n, c in used]
    hat = [_enumerated(n, c, k)[1] for n, c in used]
    assert res.cases == len(used) and res.short == 60 - len(used)
    assert res.pass_at_k.estimate == pytest.approx(float(np.mean(at)), abs=1e-12)
    assert res.pass_hat_k.estimate == pytest.approx(float(np.mean(hat)), abs=1e-12)
    for got, values in ((res.pass_at_k, at), (res.pass_hat_k, hat)):
        assert (got.ci.low, got.ci.high) == pytest.approx(_t_clipped(values), rel=1e-10)
        assert got.method == "t over cases (clipped to [0, 1])" and got.df == len(values) - 1
    assert res.always_pass == sum(c == n for n, c in used)
    assert res.always_fail == sum(c == 0 for n, c in used)
    assert res.always_pass + res.always_fail + res.mixed == res.cases


def test_per_case_values_are_the_reducers() -> None:
    attempts, passes = _cases(9, 40, most=7)
    for n, c in zip(attempts, passes, strict=True):
        values = [1.0] * c + [0.0] * (n - c)
        for k in range(1, n + 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", es.DegenerateDataWarning)
                one = es.repeat_reliability([n, n], [c, c], k)  # equal cases: sd 0 warns
            at = es.reduce_values(values, es.parse_reducer(f"pass_at_{k}"))
            hat = es.reduce_values(values, es.parse_reducer(f"pass_{k}"))
            assert one.pass_at_k.estimate == at and one.pass_hat_k.estimate == hat


def test_enumeration_of_every_small_case() -> None:
    for n in range(1, 8):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at, hat = _enumerated(n, c, k)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", es.DegenerateDataWarning)
                    res = es.repeat_reliability([n, n + 1], [c, c], k)
                first_at = res.pass_at_k.estimate * 2 - _enumerated(n + 1, c, k)[0]
                first_hat = res.pass_hat_k.estimate * 2 - _enumerated(n + 1, c, k)[1]
                assert first_at == pytest.approx(at, abs=1e-12)
                assert first_hat == pytest.approx(hat, abs=1e-12)


def test_pass_hat_k_paired_matches_ttest_rel() -> None:
    nb, cb = _cases(31, 80, most=5)
    nc, cc = _cases(32, 80, most=5)
    k = 3
    res = es.pass_hat_k_paired(
        es.RepeatCounts(tuple(nb), tuple(cb)), es.RepeatCounts(tuple(nc), tuple(cc)), k
    )
    shared = [i for i in range(80) if nb[i] >= k and nc[i] >= k]
    base = [_enumerated(nb[i], cb[i], k)[1] for i in shared]
    cand = [_enumerated(nc[i], cc[i], k)[1] for i in shared]
    ref = sps.ttest_rel(cand, base)
    assert res.n == len(shared)
    assert res.estimate == pytest.approx(float(np.mean(cand) - np.mean(base)), abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert (res.ci.low, res.ci.high) == pytest.approx(tuple(ref.confidence_interval()), rel=1e-10)
    assert res.informative == sum(a != b for a, b in zip(base, cand, strict=True))


def test_slices_get_holm_across_them() -> None:
    slices = {}
    for s in range(4):
        nb, cb = _cases(40 + s, 50, most=4)
        nc, cc = _cases(50 + s, 50, most=4)
        slices[f"s{s}"] = (
            es.RepeatCounts(tuple(nb), tuple(cb)),
            es.RepeatCounts(tuple(nc), tuple(cc)),
        )
    res = es.pass_hat_k_slices(slices, 2)
    raw = [res.deltas[f"s{s}"].pvalue for s in range(4)]
    ref = multipletests(raw, method="holm")[1]
    assert [res.holm[f"s{s}"] for s in range(4)] == pytest.approx(list(ref), rel=1e-12)
    for s in range(4):
        one = es.pass_hat_k_paired(*slices[f"s{s}"], 2)
        assert res.deltas[f"s{s}"] == one
        nb, nc = slices[f"s{s}"][0].attempts, slices[f"s{s}"][1].attempts
        assert res.short[f"s{s}"] == sum(a < 2 or b < 2 for a, b in zip(nb, nc, strict=True))


def test_repeat_spread_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    values = [list(rng.normal(5.0, 1.0, size)) for size in rng.integers(1, 6, 50)]
    values[0] = [4.0, math.nan, 6.0]  # an unscored attempt is left out
    res = es.repeat_spread(values)
    scored = [np.asarray([v for v in case if not math.isnan(v)]) for case in values]
    used = [s for s in scored if s.size >= 2]
    sds = [float(s.std(ddof=1)) for s in used]
    assert res.cases == len(used) and res.short == len(values) - len(used)
    assert res.mean_sd.estimate == pytest.approx(float(np.mean(sds)), rel=1e-12)
    low, high = sps.ttest_1samp(sds, 0.0).confidence_interval(0.95)
    assert (res.mean_sd.ci.low, res.mean_sd.ci.high) == pytest.approx((max(0.0, low), high))
    pooled = sum((s.size - 1) * s.var(ddof=1) for s in used) / sum(s.size - 1 for s in used)
    assert res.pooled_sd == pytest.approx(math.sqrt(pooled), rel=1e-12)


def test_identical_repeats_make_every_case_always() -> None:
    res = es.repeat_reliability([3, 3, 3, 3], [3, 0, 3, 0], 3)
    assert (res.always_pass, res.always_fail, res.mixed) == (2, 2, 0)
    assert res.pass_hat_k.estimate == 0.5 == res.pass_at_k.estimate
    with pytest.warns(es.DegenerateDataWarning, match="sd = 0"):
        steady = es.repeat_reliability([3, 3], [3, 3], 2)
    assert steady.pass_hat_k.estimate == 1.0 and math.isnan(steady.pass_hat_k.ci.low)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: es.repeat_reliability([3], [4], 2), r"passes\[0\] = 4 exceeds attempts\[0\] = 3"),
        (
            lambda: es.repeat_reliability([3, -1], [1, 0], 2),
            r"attempts\[1\] must be a non-neg",
        ),
        (lambda: es.repeat_reliability([3], [1, 0], 2), "got 1 and 2"),
        (lambda: es.repeat_reliability([3], [1], 0), "k must be at least 1; got 0"),
        (lambda: es.repeat_reliability([3], [1], 1.5), "k must be a non-negative integer"),
        (
            lambda: es.pass_hat_k_paired(
                es.RepeatCounts((3,), (1,)), es.RepeatCounts((3, 3), (1, 1)), 2
            ),
            "one entry per shared case",
        ),
        (
            lambda: es.pass_hat_k_paired(
                es.RepeatCounts((3,), (1,)), es.RepeatCounts((3,), (5,)), 2
            ),
            r"candidate.passes\[0\] = 5 exceeds candidate.attempts\[0\] = 3",
        ),
        (lambda: es.pass_hat_k_slices({"a": (1, 2, 3)}, 2), "slice 'a' needs a"),
        (lambda: es.repeat_spread([[1.0, math.inf]]), r"values\[0\] must be a flat sequence"),
        (lambda: es.repeat_spread([["x"]]), r"values\[0\] must be a sequence of numbers"),
    ],
)
def test_bad_arguments_name_the_value(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_results_serialize() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.StatisticsWarning)
        pair = (es.RepeatCounts((3, 3, 2), (1, 3, 0)), es.RepeatCounts((3, 3, 3), (2, 3, 1)))
        results = [
            es.repeat_reliability([3, 3, 2], [1, 3, 0], 2),
            es.pass_hat_k_slices({"a": pair, "b": pair}, 2),
            es.repeat_spread([[1.0, 2.0], [3.0, 3.5, 4.0]]),
        ]
    for result in results:
        assert json.loads(json.dumps(dataclasses.asdict(result), allow_nan=True)) is not None

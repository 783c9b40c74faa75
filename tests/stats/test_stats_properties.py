import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldelta.stats import (
    ReliabilityWarning,
    clustered_se,
    clustered_se_from_summary,
    fixed_mix,
    newcombe_unpaired,
    paired_means,
    paired_proportions,
    simpson_check,
    standardize,
    welch,
)

counts = st.integers(min_value=0, max_value=60)
confidences = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@given(counts, counts, counts, counts, confidences, st.sampled_from(["newcombe", "wald"]))
def test_paired_proportions_swap_and_contain(
    a: int, b: int, c: int, d: int, conf: float, interval: str
) -> None:
    if a + b + c + d == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)  # Wald below 100 pairs: tested apart
        fwd = paired_proportions(a, b, c, d, conf, interval)
        rev = paired_proportions(a, c, b, d, conf, interval)
    assert rev.estimate == pytest.approx(-fwd.estimate, abs=1e-12)
    assert rev.pvalue == fwd.pvalue
    assert rev.se == pytest.approx(fwd.se)
    assert rev.ci.low == pytest.approx(-fwd.ci.high, abs=1e-12)
    assert rev.ci.high == pytest.approx(-fwd.ci.low, abs=1e-12)
    assert fwd.ci.low - 1e-12 <= fwd.estimate <= fwd.ci.high + 1e-12


@given(st.integers(1, 200), st.integers(1, 200), st.floats(0, 1), st.floats(0, 1), confidences)
def test_newcombe_unpaired_swap_and_contain(
    n_b: int, n_c: int, f_b: float, f_c: float, conf: float
) -> None:
    s_b, s_c = round(f_b * n_b), round(f_c * n_c)
    if s_b + s_c in (0, n_b + n_c):
        return  # the pooled test is undefined there (covered by a warning test)
    fwd = newcombe_unpaired(s_b, n_b, s_c, n_c, conf)
    rev = newcombe_unpaired(s_c, n_c, s_b, n_b, conf)
    assert rev.estimate == pytest.approx(-fwd.estimate, abs=1e-12)
    assert rev.pvalue == pytest.approx(fwd.pvalue, rel=1e-9, abs=1e-300)
    assert rev.ci.low == pytest.approx(-fwd.ci.high, abs=1e-12)
    assert fwd.ci.low - 1e-12 <= fwd.estimate <= fwd.ci.high + 1e-12


finite = st.floats(-10, 10, allow_nan=False)


@settings(deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=40), confidences)
def test_paired_means_swap_and_contain(pairs: list[tuple[float, float]], conf: float) -> None:
    base = [p[0] for p in pairs]
    cand = [p[1] for p in pairs]
    deltas = np.subtract(cand, base)
    if np.ptp(deltas) < 1e-6:
        return  # identical deltas: t undefined (covered by a warning test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)  # < 10 informative: tested apart
        fwd = paired_means(base, cand, conf)
        rev = paired_means(cand, base, conf)
    assert rev.estimate == pytest.approx(-fwd.estimate, abs=1e-9)
    assert rev.pvalue == pytest.approx(fwd.pvalue, rel=1e-9, abs=1e-12)
    assert fwd.ci.low <= fwd.estimate <= fwd.ci.high


@settings(deadline=None)
@given(
    finite, st.floats(0.01, 5), st.integers(2, 500), finite, st.floats(0.01, 5),
    st.integers(2, 500), confidences,
)  # fmt: skip
def test_welch_swap_and_contain(
    m_b: float, s_b: float, n_b: int, m_c: float, s_c: float, n_c: int, conf: float
) -> None:
    fwd = welch(m_b, s_b, n_b, m_c, s_c, n_c, conf)
    rev = welch(m_c, s_c, n_c, m_b, s_b, n_b, conf)
    assert rev.estimate == pytest.approx(-fwd.estimate)
    assert rev.pvalue == pytest.approx(fwd.pvalue, rel=1e-9, abs=1e-300)
    assert fwd.ci.low <= fwd.estimate <= fwd.ci.high


slice_names = st.sampled_from(["a", "b", "c", "d", "e"])


@given(
    st.dictionaries(slice_names, st.tuples(st.floats(0, 1), st.floats(0, 0.2)), min_size=1),
    st.dictionaries(slice_names, st.floats(0.001, 100), min_size=1),
    st.floats(1e-3, 1e3),
)
def test_fixed_mix_weight_scale_invariance(
    data: dict[str, tuple[float, float]], weights: dict[str, float], scale: float
) -> None:
    est = {k: v[0] for k, v in data.items()}
    ses = {k: v[1] for k, v in data.items()}
    if not set(est) & set(weights):
        return
    a = fixed_mix(est, ses, weights)
    b = fixed_mix(est, ses, {k: w * scale for k, w in weights.items()})
    assert b.estimate == pytest.approx(a.estimate, rel=1e-9, abs=1e-12)
    assert b.se == pytest.approx(a.se, rel=1e-9, abs=1e-12)
    assert b.dropped_weight == pytest.approx(a.dropped_weight, abs=1e-12)
    assert b.used_slices == a.used_slices
    assert math.fsum(a.weights.values()) == pytest.approx(1.0)
    assert a.ci.low <= a.estimate <= a.ci.high


arm_counts = st.dictionaries(
    slice_names,
    st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1,
)


@given(arm_counts, arm_counts, st.floats(1e-3, 1e3))
def test_standardize_scale_invariance_and_swap(
    x: dict[str, tuple[int, int]], y: dict[str, tuple[int, int]], scale: float
) -> None:
    common = set(x) & set(y)
    if not common:
        return
    weights = {k: float(i + 1) for i, k in enumerate(sorted(common))}
    counts = {"base": x, "cand": y}
    a = standardize(counts, weights)
    b = standardize(counts, {k: w * scale for k, w in weights.items()})
    for arm in counts:
        sa, sb = a.rates[arm].standardized, b.rates[arm].standardized
        assert sb.estimate == pytest.approx(sa.estimate, rel=1e-9, abs=1e-12)
        assert sb.se == pytest.approx(sa.se, rel=1e-9, abs=1e-12)
        assert sa.ci.low <= sa.estimate <= sa.ci.high
    fwd = simpson_check(counts, "base", "cand", weights=weights)
    rev = simpson_check(counts, "cand", "base", weights=weights)
    assert rev.pooled_delta == pytest.approx(-fwd.pooled_delta, abs=1e-12)
    assert fwd.standardized_delta is not None and rev.standardized_delta is not None
    assert rev.standardized_delta == pytest.approx(-fwd.standardized_delta, abs=1e-12)
    assert fwd.kind == rev.kind
    for k, v in fwd.slice_deltas.items():
        assert rev.slice_deltas[k] == pytest.approx(-v, abs=1e-12)


@given(
    st.lists(
        st.tuples(st.floats(-5, 5, allow_nan=False), st.integers(0, 6)), min_size=2, max_size=60
    )
)
def test_clustered_se_two_forms_agree(rows: list[tuple[float, int]]) -> None:
    x = np.array([r[0] for r in rows])
    labels = [r[1] for r in rows]
    if len(set(labels)) < 2:
        return
    groups = sorted(set(labels))
    sizes = [labels.count(g) for g in groups]
    sums = [float(sum(v for v, lab in rows if lab == g)) for g in groups]
    direct = clustered_se(x.tolist(), labels)
    summary = clustered_se_from_summary(sizes, sums, float(np.sum(x * x)))
    assert summary == pytest.approx(direct, rel=1e-6, abs=1e-6)

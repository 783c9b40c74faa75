"""Labels needed for a PPI++ interval: the closed form, and the intervals it promises.

The variance being solved is PPI++'s for a mean (Angelopoulos, Duchi and Zrnic 2023,
arXiv:2311.01453), written out independently here; the simulation checks that the mean
half-width of :func:`ppi_mean`'s own interval at the answer is the target.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import evaldelta.stats as es


def _variance(n: float, m: int, sd_y: float, sd_f: float, rho: float) -> float:
    """PPI++ variance with n of m labelled, at the tuned lambda clipped to [0, 1]."""
    big_n = m - n
    lam = 0.0 if big_n == 0 else rho * sd_y / sd_f * big_n / m
    lam = min(1.0, max(0.0, lam))
    cov = rho * sd_y * sd_f
    imputed = lam * lam * sd_f * sd_f / big_n if big_n else 0.0
    return imputed + (sd_y * sd_y - 2 * lam * cov + lam * lam * sd_f * sd_f) / n


@pytest.mark.parametrize(
    ("h", "m", "sd_y", "sd_f", "rho"),
    [
        (0.02, 20000, 0.45, 0.45, 0.7),  # lambda inside (0, 1)
        (0.01, 20000, 0.3, 0.3, 0.9),
        (0.03, 20000, 1.0, 0.3, 0.95),  # lambda clips to 1
        (0.03, 5000, 0.5, 0.5, -0.3),  # lambda clips to 0: the labelled-only answer
        (0.05, 1000, 0.5, 0.4, 0.85),
    ],
)
def test_the_half_width_is_reached_exactly_at_n_exact(
    h: float, m: int, sd_y: float, sd_f: float, rho: float
) -> None:
    res = es.ppi_labels_needed(h, m, sd_y, sd_f, rho)
    z = sps.norm.ppf(0.975)
    assert z * math.sqrt(_variance(res.n_exact, m, sd_y, sd_f, rho)) == pytest.approx(h, rel=1e-9)
    assert res.n == math.ceil(res.n_exact)
    assert z * math.sqrt(_variance(res.n, m, sd_y, sd_f, rho)) <= h
    assert z * math.sqrt(_variance(res.n - 1, m, sd_y, sd_f, rho)) > h
    assert res.n_classical == math.ceil((z * sd_y / h) ** 2)
    assert res.n <= res.n_classical


def test_correlation_at_or_below_zero_needs_the_labelled_only_count() -> None:
    for rho in (0.0, -0.5):
        res = es.ppi_labels_needed(0.05, 10000, 0.5, 0.5, rho)
        assert res.n == res.n_classical == math.ceil((sps.norm.ppf(0.975) * 0.5 / 0.05) ** 2)
        assert res.lam == 0.0


def test_out_of_reach_and_trivial_targets() -> None:
    # labelling all 100 cases gives half-width 1.96 * 0.5 / 10 = 0.098
    assert es.ppi_labels_needed(0.09, 100, 0.5, 0.5, 0.9).n is None
    assert es.ppi_labels_needed(0.09, 100, 0.5, 0.5, 0.9).n_classical is None
    assert es.ppi_labels_needed(0.1, 100, 0.5, 0.5, 0.9).n is not None
    assert es.ppi_labels_needed(0.1, 100, 0.0, 0.5, 0.9).n == 2  # labels that never vary
    assert es.ppi_labels_needed(0.1, 1000, 0.5, 0.5, 1.0).n == 2  # a perfect judge


def _mean_half_width(
    rng: np.random.Generator, n: int, m: int, sd_y: float, sd_f: float, rho: float, reps: int
) -> float:
    widths = []
    for _ in range(reps):
        base = rng.standard_normal(m)
        y = sd_y * (rho * base + math.sqrt(1 - rho * rho) * rng.standard_normal(m))
        human = np.full(m, np.nan)
        keep = rng.choice(m, n, replace=False)
        human[keep] = y[keep]
        res = es.ppi_mean(sd_f * base, human)
        widths.append((res.ppi.ci.high - res.ppi.ci.low) / 2)
    return float(np.mean(widths))


@pytest.mark.parametrize(
    ("h", "sd_y", "sd_f", "rho"),
    [(0.03, 0.45, 0.45, 0.75), (0.04, 1.0, 0.3, 0.95), (0.05, 0.5, 0.5, -0.3)],
)
def test_the_simulated_interval_has_the_planned_half_width(
    h: float, sd_y: float, sd_f: float, rho: float
) -> None:
    m = 5000
    res = es.ppi_labels_needed(h, m, sd_y, sd_f, rho)
    assert res.n is not None
    rng = np.random.default_rng(27)
    at_n = _mean_half_width(rng, res.n, m, sd_y, sd_f, rho, reps=40)
    assert at_n == pytest.approx(h, rel=0.02)
    fewer = _mean_half_width(rng, int(res.n * 0.8), m, sd_y, sd_f, rho, reps=40)
    assert fewer > h * 1.05


def test_from_pilot_reads_the_figures_off_the_moments() -> None:
    rng = np.random.default_rng(5)
    f = rng.normal(0.5, 0.2, 2000)
    y = 0.9 * f + rng.normal(0.0, 0.1, 2000)
    human = np.where(np.arange(2000) < 150, y, np.nan)
    res = es.ppi_labels_needed_from_pilot(es.ppi_moments(f, human), 0.01)
    lab = ~np.isnan(human)
    assert res.cases == 2000
    assert res.sd_human == pytest.approx(y[lab].std(), rel=1e-9)
    assert res.sd_judge == pytest.approx(f.std(), rel=1e-9)
    assert res.correlation == pytest.approx(np.corrcoef(f[lab], y[lab])[0, 1], rel=1e-9)
    assert es.ppi_labels_needed_from_pilot(es.ppi_moments(f, human), 0.01, cases=9000).cases == 9000


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"half_width": 0.0}, "half_width must be positive; got 0.0"),
        ({"cases": 1}, "cases must be at least 2; got 1"),
        ({"cases": 10.5}, "cases must be a non-negative integer; got 10.5"),
        ({"sd_human": -0.1}, "sd_human must be non-negative; got -0.1"),
        ({"sd_judge": math.nan}, "sd_judge must be finite"),
        ({"correlation": 1.2}, "correlation must be between -1 and 1; got 1.2"),
        ({"confidence": 1.0}, "confidence must be strictly between 0 and 1"),
    ],
)
def test_bad_arguments_name_the_value(kwargs: dict[str, float], match: str) -> None:
    args = {"half_width": 0.05, "cases": 1000, "sd_human": 0.5, "sd_judge": 0.5}
    args |= {"correlation": 0.5} | kwargs
    with pytest.raises(ValueError, match=match):
        es.ppi_labels_needed(**args)  # type: ignore[arg-type]


def test_a_pilot_without_variation_is_refused() -> None:
    with pytest.raises(ValueError, match="got 1 labelled"):
        es.ppi_labels_needed_from_pilot(
            es.ppi_moments([1.0, 0.0, 1.0], [1.0, math.nan, math.nan]), 0.1
        )

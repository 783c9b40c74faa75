"""What every calibration study shares: vectorised intervals, each checked against evaldelta.

The interval methods are re-implemented here as vectorised numpy (thousands of replications
at once); :data:`CHECK` compares each with evaldelta's own function on sample replications of
every cell before the study trusts it. :class:`Cell` is one grid point of a study.
``bench/calibrate.py`` runs the studies and writes docs/calibration.md.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats as sps

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from evaldelta import stats  # noqa: E402

CONF = 0.95
Z = float(sps.norm.ppf(0.975))
LOW_OK, HIGH_OK = 0.94, 0.96  # the band the study reports against
FLOOR = 0.93  # the bar wherever the tool prints a number without a warning


# --------------------------------------------------------------------------------------
# vectorised methods, each checked equal to evaldelta's own function
# --------------------------------------------------------------------------------------


def wilson(k: np.ndarray, n: np.ndarray | float, z: float = Z) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score limits (as stats._proportions._wilson), vectorised; k may be fractional."""
    k = np.asarray(k, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), k.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        z2n = z * z / n
        center = (p + z2n / 2.0) / (1.0 + z2n)
        half = z / (1.0 + z2n) * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2n / (4.0 * n))
    low = np.where(k <= 0, 0.0, np.maximum(0.0, center - half))
    high = np.where(k >= n, 1.0, np.minimum(1.0, center + half))
    return low, high


def rate_limits(k: np.ndarray, n: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """stats.proportion's interval: Wilson, widened to the one-sided Poisson limit at 1-3
    successes or failures (Brown, Cai and DasGupta 2001, section 4.1.1), vectorised."""
    k = np.asarray(k, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), k.shape)
    low, high = wilson(k, n)
    alpha = 2.0 * float(sps.norm.sf(Z))
    edge = stats.POISSON_EDGE
    with np.errstate(invalid="ignore", divide="ignore"):
        few = (k > 0) & (k <= edge)
        pl = sps.chi2.ppf(alpha, 2.0 * np.where(few, k, 1.0)) / (2.0 * n)
        low = np.where(few, np.minimum(low, pl), low)
        f = n - k
        few_f = (f > 0) & (f <= edge)
        pu = 1.0 - sps.chi2.ppf(alpha, 2.0 * np.where(few_f, f, 1.0)) / (2.0 * n)
        high = np.where(few_f, np.maximum(high, pu), high)
    return low, high


def newcombe_paired(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, z: float = Z
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe (1998) method 10 for candidate - baseline; a both pass, b only baseline,
    c only candidate, d both fail (as stats.paired_proportions), vectorised."""
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    p1, p2 = (a + c) / n, (a + b) / n
    delta = p1 - p2
    l1, u1 = wilson(a + c, n, z)
    l2, u2 = wilson(a + b, n, z)
    margins = (a + c) * (b + d) * (a + b) * (c + d)
    cross = a * d - c * b
    corrected = np.where(cross > n / 2.0, cross - n / 2.0, np.where(cross >= 0, 0.0, cross))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(margins == 0, 0.0, corrected / np.sqrt(np.where(margins == 0, 1, margins)))
    dl1, du1, dl2, du2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    low = delta - np.sqrt(np.maximum(0.0, dl1**2 - 2.0 * phi * dl1 * du2 + du2**2))
    high = delta + np.sqrt(np.maximum(0.0, du1**2 - 2.0 * phi * du1 * dl2 + dl2**2))
    return np.maximum(-1.0, low), np.minimum(1.0, high)


def wald_paired(a, b, c, d, z: float = Z):  # type: ignore[no-untyped-def]
    n = a + b + c + d
    est = (c - b) / n
    se = np.sqrt(np.maximum(0.0, b + c - (b - c) ** 2 / n)) / n
    return est - z * se, est + z * se


def t_interval(mean: np.ndarray, sd: np.ndarray, n: int | np.ndarray, df=None):  # type: ignore[no-untyped-def]
    """Student t: mean +- t_{df} sd / sqrt(n) (df = n - 1); nan where sd == 0 (as the tool)."""
    df = np.asarray(n) - 1 if df is None else df
    half = sps.t.ppf(0.975, df) * sd / np.sqrt(n)
    half = np.where(sd > 0, half, np.nan)
    return mean - half, mean + half


def of_means(mean: np.ndarray, sd: np.ndarray, n: int, attempts: int, minority=None):  # type: ignore[no-untyped-def]
    """stats.proportion_of_means: Wilson at the Kish effective n, vectorised.

    ``minority``: cases with the rarer outcome; below MIN_MINORITY_CASES the cases are the unit.
    """
    spread = mean * (1 - mean)
    se = sd / math.sqrt(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.clip(spread / (se * se), n, attempts)
    n_eff = np.where(spread <= 0, n, np.where(se <= 0, attempts, n_eff))
    if minority is not None:
        n_eff = np.where((spread > 0) & (minority < stats.MIN_MINORITY_CASES), n, n_eff)
    return rate_limits(mean * n_eff, n_eff)


@dataclass
class Checks:
    """Every vectorised method compared with evaldelta's function on sample replications."""

    done: dict[str, int] = field(default_factory=dict)

    def same(self, name: str, mine: tuple[float, float], theirs: stats.ConfidenceInterval) -> None:
        ok = all(
            (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
            for x, y in zip(mine, (theirs.low, theirs.high), strict=True)
        )
        if not ok:
            raise AssertionError(f"{name}: vectorised {mine} != evaldelta {theirs}")
        self.done[name] = self.done.get(name, 0) + 1


CHECK = Checks()
SAMPLE = 5  # replications of every cell checked against evaldelta


# --------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------


@dataclass
class Cell:
    """One grid point: its coverage and, where the tool warns, what share of draws warn."""

    study: str
    label: dict[str, str]
    coverage: float  # over the draws where the tool prints a number without a warning
    reps: int
    before: float | None = None  # the method the tool used before this study, for contrast
    warned: float = 0.0  # share of draws on which the tool warns (excluded from coverage)
    no_number: float = 0.0  # share of draws with no interval (n/a), excluded
    exact: bool = False
    others: dict[str, float] = field(default_factory=dict)  # further contrasts, by name

    @property
    def mc_se(self) -> float:
        if self.exact or self.reps == 0:
            return 0.0
        p = min(max(self.coverage, 1e-6), 1 - 1e-6)
        return math.sqrt(p * (1 - p) / self.reps)


def _cover(low: np.ndarray, high: np.ndarray, truth: float | np.ndarray) -> np.ndarray:
    return (low <= truth) & (truth <= high)


MIN_KEPT = 200  # fewer unwarned draws than this: coverage is not reported (too noisy)


def _rate(hit: np.ndarray, keep: np.ndarray) -> float:
    kept = int(keep.sum())
    return float(hit[keep].sum() / kept) if kept >= MIN_KEPT else math.nan


def _beta_rates(rng: np.random.Generator, p: float, icc: float, size: tuple[int, ...]):  # type: ignore[no-untyped-def]
    """Case-level pass probabilities with mean p and intra-case correlation icc (beta)."""
    if icc <= 0:
        return np.full(size, p)
    s = (1 - icc) / icc
    return rng.beta(p * s, (1 - p) * s, size=size)


class _quiet_ctx:
    def __enter__(self) -> None:
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def _chunks(total: int, size: int) -> Iterator[int]:
    while total > 0:
        yield min(size, total)
        total -= size

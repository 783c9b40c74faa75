"""How many human labels a PPI++ interval of a given half-width needs.

Method: the variance of the PPI++ mean (Angelopoulos, Duchi and Zrnic 2023, arXiv:2311.01453,
eq. 2 with the mean's loss) with ``n`` of ``M`` cases labelled and ``N = M - n`` not,

    V(n, lam) = lam^2 sd_f^2 / N + (sd_y^2 - 2 lam rho sd_y sd_f + lam^2 sd_f^2) / n,

at the tuned ``lam*(n) = rho (sd_y / sd_f) N / M`` (their ``cov / ((1 + n/N) var f)``),
clipped to [0, 1] as :func:`evaldelta.stats.ppi_mean` clips it. Unclipped, the variance is
``sd_y^2 (1 - rho^2) / n + sd_y^2 rho^2 / M``, decreasing in ``n``, and the half-width
``z sqrt(V)`` reaches ``h`` at the closed form

    n = sd_y^2 (1 - rho^2) / ((h / z)^2 - sd_y^2 rho^2 / M).

Where ``lam*`` would exceed 1 (``n < M (1 - sd_f / (rho sd_y))``) ``lam = 1`` and ``n`` is
the smaller root of ``V(n, 1) = (h / z)^2``, a quadratic; with ``rho <= 0`` ``lam = 0`` and
``n = (z sd_y / h)^2``, the labelled-only answer. Labelling every case gives
``V = sd_y^2 / M``: a target below that is out of reach (``n`` is None).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from evaldelta.stats._ppi import PPIMoments, _check_moments, _parts
from evaldelta.stats._proportions import z_critical
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_nonnegative,
    check_positive,
    check_real,
)

__all__ = ["LabelsNeeded", "ppi_labels_needed", "ppi_labels_needed_from_pilot"]

METHOD = "ppi++ variance at the tuned lambda (Angelopoulos, Duchi and Zrnic 2023)"


@dataclass(frozen=True)
class LabelsNeeded:
    """The human labels that make the PPI++ interval's half-width at most ``half_width``.

    ``n``: labels needed, rounded up (at least 2; None when even labelling all ``cases``
    falls short); ``n_exact``: the unrounded solution; ``n_classical``: what the
    labelled-only interval would need (None beyond ``cases``); ``lam``: the tuned lambda at
    ``n``. The pilot figures it was computed from are carried beside them.
    """

    n: int | None
    n_exact: float
    n_classical: int | None
    lam: float
    half_width: float
    cases: int
    sd_human: float
    sd_judge: float
    correlation: float
    confidence: float
    method: str = METHOD


def _lam(n: float, m: int, sd_y: float, sd_f: float, rho: float) -> float:
    if rho <= 0.0 or sd_f == 0.0 or n >= m:
        return 0.0
    return min(1.0, rho * sd_y / sd_f * (m - n) / m)


def _n_exact(target: float, m: int, sd_y: float, sd_f: float, rho: float) -> float:
    """The smallest real ``n`` with ``V(n) <= target``, or inf (module docstring)."""
    var_y = sd_y * sd_y
    if var_y / m > target:
        return math.inf  # not even with every case labelled
    if rho <= 0.0 or sd_f == 0.0 or var_y == 0.0:
        return var_y / target  # lam = 0: the labelled-only variance
    unexplained = var_y * (1.0 - rho * rho)
    n_star = unexplained / (target - var_y * rho * rho / m) if unexplained > 0.0 else 0.0
    n_clip = m * (1.0 - sd_f / (rho * sd_y))  # below this, lam* > 1 and lam = 1
    if n_star >= n_clip:
        return n_star
    var_r = var_y - 2.0 * rho * sd_y * sd_f + sd_f * sd_f  # var(y - f)
    b = target * m - sd_f * sd_f + var_r
    disc = max(b * b - 4.0 * target * var_r * m, 0.0)
    return (b - math.sqrt(disc)) / (2.0 * target)


def ppi_labels_needed(
    half_width: float,
    cases: int,
    sd_human: float,
    sd_judge: float,
    correlation: float,
    confidence: float = 0.95,
) -> LabelsNeeded:
    """Human labels for a PPI++ interval of half-width at most ``half_width`` on ``cases``.

    ``sd_human``, ``sd_judge`` and ``correlation``: the human labels' and judge scores'
    standard deviations and their correlation, from a pilot. Method: the module docstring
    (the closed form from the PPI++ variance at the tuned lambda). The half-width is that
    of :func:`evaldelta.stats.ppi_mean` in expectation: a sample's own interval varies
    around it (``tests/stats`` checks the two agree on simulated data).
    """
    h = check_positive("half_width", half_width)
    m = check_count("cases", cases)
    if m < 2:
        raise ValueError(f"cases must be at least 2; got {cases!r}.")
    sd_y = check_nonnegative("sd_human", sd_human)
    sd_f = check_nonnegative("sd_judge", sd_judge)
    rho = check_real("correlation", correlation)
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"correlation must be between -1 and 1; got {correlation!r}.")
    conf = check_confidence(confidence)
    target = (h / z_critical(conf)) ** 2
    exact = _n_exact(target, m, sd_y, sd_f, rho)
    n = None if exact > m else min(m, max(2, math.ceil(exact - 1e-9)))
    classical_exact = sd_y * sd_y / target
    classical = None if classical_exact > m else max(2, math.ceil(classical_exact - 1e-9))
    lam = _lam(n if n is not None else m, m, sd_y, sd_f, rho)
    return LabelsNeeded(n, exact, classical, lam, h, m, sd_y, sd_f, rho, conf)


def ppi_labels_needed_from_pilot(
    pilot: PPIMoments,
    half_width: float,
    cases: int | None = None,
    confidence: float = 0.95,
) -> LabelsNeeded:
    """:func:`ppi_labels_needed` with the figures read off a labelled pilot.

    ``sd_human`` and the correlation come from the pilot's labelled cases, ``sd_judge``
    from all its judge scores (the variance the tuned lambda divides by); each with divisor
    ``n``, as :func:`evaldelta.stats.ppi_mean` estimates them. ``cases`` defaults to the
    pilot's own ``n_labelled + n_unlabelled``. A pilot with fewer than 2 labelled cases,
    or labels or judge scores that never vary, is a ValueError.
    """
    _check_moments(pilot)
    p = _parts(pilot)
    if p.n < 2 or not p.var_y > 0.0 or not p.var_f > 0.0:
        raise ValueError(
            "the pilot needs at least 2 labelled cases whose labels and judge scores vary; "
            f"got {p.n} labelled (label variance {p.var_y!r}, judge variance {p.var_f!r})."
        )
    rho = max(-1.0, min(1.0, p.cov / math.sqrt(p.var_y * p.var_f)))
    total = p.n + p.big_n if cases is None else cases
    return ppi_labels_needed(
        half_width, total, math.sqrt(p.var_y), math.sqrt(p.var_all), rho, confidence
    )

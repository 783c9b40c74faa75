"""The small edges of the calibration study (issue 24, items 5 and 12-16).

Each study here measures a cell an independent calibration found missing or mis-stated:

- one-way discordance: Newcombe's paired interval when every discordant pair goes one way,
  exact (the multinomial enumerated), against the "fewer than 5 discordant pairs" warning;
- the fixed-mix rate and paired delta: Price and Bonett (2004) pseudo-counts spread over the
  mix, Bonett and Price (2012) for pairs, against the score-interval half-widths (MOVER,
  Zou and Donner 2008) they replaced;
- clustered pass/fail rates: Korn and Graubard's (1998) interval on the CR2 variance, against
  the symmetric CR2 t interval (Bell and McCaffrey 2002; Imbens and Kolesar 2016);
- the gate at its margin with sparse graded slices: the Holm family of every rule evaluated,
  against the family of the decidable rules alone.

Every vectorised method is checked equal to evaldelta's own function (``CHECK.same``).
"""

from __future__ import annotations

import math

import numpy as np
from _calibration_core import (
    CHECK,
    CONF,
    SAMPLE,
    Cell,
    Z,
    _cover,
    _quiet_ctx,
    _rate,
    newcombe_paired,
    rate_limits,
)
from scipy import stats as sps
from scipy.special import gammaln

from evaldelta import stats
from evaldelta.gating import FAIL, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.gating.synthetic import from_deltas
from evaldelta.stats._cluster import UNEQUAL_CV

__all__ = [
    "MIXES",
    "cluster_sizes",
    "study_clustered_binary",
    "study_fixed_mix",
    "study_gate_margin",
    "study_one_way",
]

MIN_SHARE = 0.02  # an exact cell's unwarned share below this: no coverage reported (as MIN_KEPT)


# --------------------------------------------------------------------------------------
# one-way discordance: Newcombe, exact
# --------------------------------------------------------------------------------------


def study_one_way(
    ns: tuple[int, ...] = (20, 40, 100, 200),
    psis: tuple[float, ...] = (0.02, 0.05, 0.1),
    base: float = 0.5,
) -> list[Cell]:
    """Newcombe's coverage when every discordant pair goes the candidate's way, exactly.

    The baseline passes with probability ``base``; a share ``psi`` of cases pass only with
    the candidate (c), none only with the baseline (b = 0), so the true delta is ``psi``.
    Every table (a, 0, c, d) is enumerated with its multinomial probability. The coverage
    column is over the tables with ``MIN_DISCORDANT`` or more discordant pairs (the others
    print "rests on k discordant pairs" and a note); the contrast column over every table,
    what the tool printed before, with no word. By symmetry the baseline's way is the same.
    """
    out = []
    for n in ns:
        a, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        d = n - a - c
        ok = d >= 0
        a, c, d = a[ok], c[ok], d[ok]
        b = np.zeros_like(a)
        low, high = newcombe_paired(a, b, c, d)
        for i in (0, len(a) // 3, len(a) // 2, len(a) - 1):
            with _quiet_ctx():
                ref = stats.paired_proportions(int(a[i]), 0, int(c[i]), int(d[i]))
            CHECK.same("newcombe_paired", (float(low[i]), float(high[i])), ref.ci)
        for psi in psis:
            log_p = gammaln(n + 1) - gammaln(a + 1) - gammaln(c + 1) - gammaln(d + 1)
            log_p += a * math.log(base) + c * math.log(psi) + d * math.log(1 - base - psi)
            prob = np.exp(log_p)
            hit = _cover(low, high, psi)
            warned = c < stats.MIN_DISCORDANT
            unwarned = float(prob[~warned].sum())
            coverage = (
                float((prob * hit)[~warned].sum()) / unwarned if unwarned >= MIN_SHARE else math.nan
            )
            label = {"pairs": str(n), "discordance (all one way)": f"{psi:.0%}"}
            cell = Cell("one_way", label, coverage, 0, exact=True)
            cell.before = float((prob * hit).sum())
            cell.warned = float(prob[warned].sum())
            cell.others["silent misses, share of all tables"] = float((prob * ~hit)[~warned].sum())
            out.append(cell)
    return out


# --------------------------------------------------------------------------------------
# fixed-mix standardized rate and paired delta
# --------------------------------------------------------------------------------------

MIXES = {
    # name: (slice sizes, baseline pass rates, weights)
    "rates near 0 and 1": ((200, 60, 20, 10), (0.98, 0.6, 0.03, 0.995), (1, 1, 1, 1)),
    "a rare slice carries weight": ((400, 100, 30, 12), (0.9, 0.7, 0.5, 0.99), (1, 2, 3, 4)),
    "large slices": ((2000, 1000, 500, 200), (0.99, 0.8, 0.2, 0.01), (4, 3, 2, 1)),
    # issue 24, item 13: the equal mix with a 20-case slice at 0.60 weighted 25%
    "equal mix, a 20-case slice at 0.60": (
        (400, 200, 100, 20),
        (0.95, 0.85, 0.75, 0.6),
        (1, 1, 1, 1),
    ),
    "equal mix, four slices of 9-11 pairs (seed 002)": (
        (10, 9, 10, 11),
        (0.8, 0.85, 0.9, 0.85),
        (1, 1, 1, 1),
    ),
}


def _price_bonett(x: np.ndarray, n: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Price-Bonett standardized rate: estimate, interval, vectorised over replications.

    ``x`` is (reps, m), ``n`` and ``w`` (m,), ``w`` summing to 1: ``2/m`` successes and
    ``4/m`` trials per slice, ``centre +/- z se``, clipped to [0, 1].
    """
    m = n.size
    p = (x + 2.0 / m) / (n + 4.0 / m)
    half = Z * np.sqrt((w * w * p * (1 - p) / (n + 4.0 / m)).sum(axis=1))
    center = (w * p).sum(axis=1)
    est = (w * x / n).sum(axis=1)
    return est, np.maximum(0.0, center - half), np.minimum(1.0, center + half)


def _bonett_price(
    b: np.ndarray, c: np.ndarray, n: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Bonett-Price standardized paired delta (1/m per discordant cell), vectorised.

    Returns the estimate, the interval (``delta +/- z se``, clipped to [-1, 1]) and whether
    the tool warns: fewer than ``MIN_DISCORDANT`` discordant pairs in all, or once weighted
    (Satterthwaite's df with ``2 (b + c + 2/m)`` per slice, halved).
    """
    m = n.size
    total = n + 2.0 / m
    bt, ct = (b + 1.0 / m) / total, (c + 1.0 / m) / total
    se = np.sqrt(np.maximum(0.0, bt + ct - (ct - bt) ** 2) / total)
    parts = (w * se) ** 2
    worth = parts.sum(axis=1) ** 2 / (parts**2 / (2.0 * (b + c + 2.0 / m))).sum(axis=1) / 2.0
    est = (w * (c - b) / n).sum(axis=1)
    half = Z * np.sqrt(parts.sum(axis=1))
    warned = np.minimum(worth, (b + c).sum(axis=1)) < stats.MIN_DISCORDANT
    return est, np.maximum(-1.0, est - half), np.minimum(1.0, est + half), warned


def study_fixed_mix(rng: np.random.Generator, reps: int) -> list[Cell]:
    """Coverage of the fixed-mix rate and paired delta under each of :data:`MIXES`.

    The baseline passes at each slice's rate; the candidate flips a share ``disc`` of the
    cases, half each way where there is room, so a slice's delta is ``p01 - p10``. The
    contrast column is the method these replaced: each slice's SE its score interval's
    half-width over z (Wilson, Newcombe), normal interval.
    """
    out = []
    for name, (ns, rates, weights) in MIXES.items():
        n = np.asarray(ns, dtype=float)
        w = np.asarray(weights, dtype=float) / sum(weights)
        for disc in (0.1, 0.3):
            tables = []
            for k, p in enumerate(rates):
                p10, p01 = min(disc / 2, p), min(disc / 2, 1 - p)
                probs = [p - p10, p10, p01, 1 - p - p01]
                tables.append(rng.multinomial(ns[k], probs, size=reps))
            a, b, c, d = (np.stack([t[:, j] for t in tables], axis=1) for j in range(4))
            truth_d = float(sum(w[k] * (min(disc / 2, 1 - p) - min(disc / 2, p))
                                for k, p in enumerate(rates)))  # fmt: skip
            if disc == 0.1:  # the rate does not depend on the discordance: once per mix
                out.append(_rate_cell(name, a + b, n, w, float(w @ np.asarray(rates)), reps))
            _, low, high, warned = _bonett_price(b, c, n, w)
            _check_paired(a, b, c, d, w, (low, high))
            keep = ~warned
            before = _score_halfwidths_delta(a, b, c, d, w)
            cell = Cell(
                "fixed_mix",
                {"mix": name, "what": "paired delta", "discordance": f"{disc:g}"},
                _rate(_cover(low, high, truth_d), keep),
                int(keep.sum()),
                before=_rate(_cover(*before, truth_d), np.ones(reps, bool)),
                warned=float(warned.mean()),
            )
            out.append(cell)
    return out


def _rate_cell(
    name: str, x: np.ndarray, n: np.ndarray, w: np.ndarray, truth: float, reps: int
) -> Cell:
    est, low, high = _price_bonett(x, n, w)
    weights = {f"s{k}": float(w[k]) for k in range(n.size)}
    for i in range(SAMPLE):
        counts = {f"s{k}": (float(x[i, k]), int(n[k])) for k in range(n.size)}
        ref = stats.standardized_rate(counts, weights)
        CHECK.same("standardized_rate", (float(low[i]), float(high[i])), ref.ci)
    lo, hi = rate_limits(x, n)
    se = np.sqrt(((((hi - lo) / (2 * Z)) * w) ** 2).sum(axis=1))
    everything = np.ones(reps, bool)
    return Cell(
        "fixed_mix",
        {"mix": name, "what": "standardized rate", "discordance": ""},
        _rate(_cover(low, high, truth), everything),
        reps,
        before=_rate(_cover(est - Z * se, est + Z * se, truth), everything),
    )


def _check_paired(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    d: np.ndarray,
    w: np.ndarray,
    mine: tuple[np.ndarray, np.ndarray],
) -> None:
    weights = {f"s{k}": float(w[k]) for k in range(w.size)}
    for i in range(SAMPLE):
        tables = {f"s{k}": (int(a[i, k]), int(b[i, k]), int(c[i, k]), int(d[i, k]))
                  for k in range(w.size)}  # fmt: skip
        with _quiet_ctx():
            ref = stats.standardized_paired_delta(tables, weights)
        CHECK.same("standardized_paired_delta", (float(mine[0][i]), float(mine[1][i])), ref.ci)


def _score_halfwidths_delta(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The replaced method: Newcombe half-widths over z as slice SEs, normal, clipped."""
    lo, hi = newcombe_paired(a, b, c, d)
    n = a + b + c + d
    est = (w * (c - b) / n).sum(axis=1)
    se = np.sqrt((((hi - lo) / (2 * Z) * w) ** 2).sum(axis=1))
    return np.maximum(-1.0, est - Z * se), np.minimum(1.0, est + Z * se)


# --------------------------------------------------------------------------------------
# clustered pass/fail rates: Korn-Graubard on CR2, against the CR2 t interval
# --------------------------------------------------------------------------------------


def cluster_sizes(g: int, cv: float, mean: float = 10.0) -> np.ndarray:
    """``g`` cluster sizes at lognormal quantiles whose coefficient of variation is ``cv``."""
    q = (np.arange(g) + 0.5) / g
    best: np.ndarray | None = None
    for sigma in np.linspace(0.05, 3.0, 600):
        x = np.maximum(1, np.round(np.exp(sps.norm.ppf(q) * sigma) * mean)).astype(int)
        if best is None or abs(x.std() / x.mean() - cv) < abs(best.std() / best.mean() - cv):
            best = x
    assert best is not None
    return best


def study_clustered_binary(
    rng: np.random.Generator, reps: int, gs: tuple[int, ...] = (5, 10, 20), cv: float = 0.92
) -> list[Cell]:
    """Clustered pass/fail rates, cluster sizes of coefficient of variation ``cv``.

    Cluster pass rates are beta with mean ``rate`` and intra-cluster correlation ``icc``.
    The coverage column is the tool's interval (Korn and Graubard 1998 on the CR2 variance);
    the contrast the CR2 t interval on Bell-McCaffrey df it printed before, as for graded
    scores. Warned: fewer than ``MIN_RATE_CLUSTERS`` clusters or sizes of cv above 1.
    """
    out = []
    for g in gs:
        sizes = cluster_sizes(g, cv)
        n = int(sizes.sum())
        labels = np.repeat(np.arange(g), sizes)
        share = sizes / n
        wts = 1.0 / ((1.0 - share) * n * n)
        cross = np.diag(sizes) - np.outer(sizes, sizes) / n
        df = float((wts @ np.diag(cross)) ** 2 / np.sum(np.outer(wts, wts) * cross**2))
        ratio = (sps.t.ppf(0.975, n - 1) / sps.t.ppf(0.975, df)) ** 2
        for rate in (0.5, 0.9, 0.97):
            for icc in (0.05, 0.3):
                s = (1 - icc) / icc
                q = rng.beta(rate * s, (1 - rate) * s, size=(reps, g))
                x = (rng.random((reps, n)) < q[:, labels]).astype(float)
                sums = np.zeros((reps, g))
                np.add.at(sums, (slice(None), labels), x)
                p = sums.sum(axis=1) / n
                v = ((sums - sizes * p[:, None]) ** 2 * wts).sum(axis=1)
                spread = p * (1 - p)
                with np.errstate(divide="ignore", invalid="ignore"):
                    n_eff = np.where((v > 0) & (spread > 0), np.minimum(n, spread / v), n)
                n_eff = n_eff * ratio
                k = p * n_eff
                with np.errstate(invalid="ignore"):
                    low = np.where(k > 0, sps.beta.ppf(0.025, k, n_eff - k + 1), 0.0)
                    high = np.where(k < n_eff, sps.beta.ppf(0.975, k + 1, n_eff - k), 1.0)
                half = sps.t.ppf(0.975, df) * np.sqrt(v)
                for i in range(SAMPLE):
                    with _quiet_ctx():
                        ref = stats.clustered_proportion(
                            list(sizes), list(sums[i]), float(sums[i].sum())
                        )
                        t_ref = stats.clustered_mean(
                            list(sizes), list(sums[i]), float(sums[i].sum())
                        )
                    CHECK.same("clustered_proportion", (float(low[i]), float(high[i])), ref.ci)
                    t_mine = (float(p[i] - half[i]), float(p[i] + half[i]))
                    CHECK.same("clustered_cr2_bm", t_mine, t_ref.ci)
                everything = np.ones(reps, bool)
                label = {
                    "clusters": str(g),
                    "sizes": f"cv {sizes.std() / sizes.mean():.2f}",
                    "rate": f"{rate:g}",
                    "icc": f"{icc:g}",
                    "cases": str(n),
                }
                hit = _cover(low, high, rate)
                cell = Cell("clustered_binary", label, _rate(hit, everything), reps)
                cell.before = _rate(_cover(p - half, p + half, rate), everything)
                unequal = sizes.std() / sizes.mean() > UNEQUAL_CV
                few = g < stats.MIN_RATE_CLUSTERS  # a pass rate: 50 clusters (20 for a mean)
                cell.warned = 1.0 if few or unequal else 0.0
                out.append(cell)
    return out


# --------------------------------------------------------------------------------------
# the gate at its margin with sparse graded slices
# --------------------------------------------------------------------------------------

# seed 004's shape (the cheap model loses points): nonzero deltas and their probabilities,
# mean -1.2; with 87.5% of pairs identical a slice's mean delta is exactly -0.15
SPARSE = (np.array([-1.0, -2.0, -3.0, 1.0]), np.array([0.6, 0.2, 0.1, 0.1]))
ZERO = 0.875
PAIRS = 40


def _sparse_slice(rng: np.random.Generator) -> stats.PairedResult:
    """A slice of ``PAIRS`` pairs whose true mean delta is -0.15 (the margin)."""
    moved = rng.random(PAIRS) >= ZERO
    d = np.where(moved, rng.choice(SPARSE[0], size=PAIRS, p=SPARSE[1]), 0.0)
    return stats.paired_means_from_summary(
        PAIRS, float(d.mean()), float(d.std(ddof=1)), CONF, informative=int(np.count_nonzero(d))
    )


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def study_gate_margin(
    rng: np.random.Generator, gates: int, ks: tuple[int, ...] = (20, 50)
) -> list[dict[str, object]]:
    """Releases at the margin: K graded slices of 40 pairs, 87.5% of them identical.

    Each slice's mean delta is exactly -0.15 against ``max_regression = 0.15``, so every fail
    is a false fail; most slices rest on fewer than 10 informative pairs (their rules are
    inconclusive). "Before" Holm-adjusts the decidable rules alone (the family the
    gate used before issue 24, item 15), from the same verdicts' one-sided p-values.
    """
    policy = parse_policy("[defaults]\nmax_regression = 0.15\n")
    rows: list[dict[str, object]] = []
    for k in ks:
        now = before = none = 0
        undecided = 0
        for _ in range(gates):
            with _quiet_ctx():
                deltas = {f"s{i}": _sparse_slice(rng) for i in range(k)}
            comparison = from_deltas(deltas, kind="graded", confidence=CONF, version="calibration")
            verdict = evaluate(policy, comparison)
            now += verdict.outcome == FAIL
            ps = [float(r.p_fail) for r in verdict.rules if _finite(r.p_fail)]
            undecided += k - len(ps)
            before += bool(ps) and min(stats.holm(ps)) <= (1 - CONF) / 2
            none += bool(ps) and min(ps) <= (1 - CONF) / 2
        rows.append(
            {
                "slices": k,
                "gates": gates,
                "none": none / gates,
                "before": before / gates,
                "holm": now / gates,
                "undecided": undecided / (gates * k),
            }
        )
    return rows

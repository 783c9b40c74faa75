"""The distribution functions evaldelta needs, from ``scipy.special`` without ``scipy.stats``.

Importing ``scipy.stats`` costs about 1.5 s (its docstrings are processed at import), more
than a whole ``evaldelta compare`` of a small file should take (issue 12). Each function
here is the special function that the named ``scipy.stats`` method itself evaluates, with
that method's handling of the support's ends and of invalid parameters (nan), so the values
are the same to the last bit; ``tests/stats/test_stats_distributions.py`` checks each one
against the ``scipy.stats`` call it replaces over a grid with the edge cases.

The binomial and the noncentral t come from the Boost ufuncs in ``scipy.special._ufuncs``
that ``scipy.stats.binom`` and ``scipy.stats.nct`` call: the public ``bdtr``/``bdtrc`` are
Cephes, and differ from ``binom.cdf`` by up to 4e-10 relative at 100,000 trials.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

try:  # the Boost ufuncs scipy.stats.binom and scipy.stats.nct evaluate (scipy >= 1.14)
    from scipy.special._ufuncs import (
        _binom_cdf,
        _binom_pmf,
        _binom_ppf,
        _binom_sf,
        _nct_sf,
    )
except ImportError:  # pragma: no cover - an older scipy: the same values through scipy.stats
    from scipy.stats import binom, nct  # (slow to import, but only on such a scipy)

    _binom_cdf, _binom_pmf, _binom_ppf, _binom_sf = binom.cdf, binom.pmf, binom.ppf, binom.sf
    _nct_sf = nct.sf

__all__ = [
    "binom_cdf",
    "binom_pmf",
    "binom_ppf",
    "binom_sf",
    "binomtest_half",
    "chi2_ppf",
    "nct_sf",
    "norm_cdf",
    "norm_isf",
    "norm_ppf",
    "norm_sf",
    "t_cdf",
    "t_isf",
    "t_ppf",
    "t_sf",
]

NAN = math.nan
Array = np.ndarray  # of float64 (masks: of bool)


# -- standard normal: scipy.stats.norm evaluates ndtr and ndtri, which handle +-inf and nan ---
def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)``: ``special.ndtr(x)``."""
    return float(special.ndtr(x))


def norm_sf(x: float) -> float:
    """``scipy.stats.norm.sf(x)``: ``special.ndtr(-x)``."""
    return float(special.ndtr(-x))


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``: ``special.ndtri(q)`` (-inf at 0, inf at 1, nan outside)."""
    return float(special.ndtri(q))


def norm_isf(q: float) -> float:
    """``scipy.stats.norm.isf(q)``: ``-special.ndtri(q)``."""
    return float(-special.ndtri(q))


# -- Student t: scipy.stats.t evaluates stdtr and stdtrit; df must be > 0 ----------------------
def t_cdf(x: float, df: float) -> float:
    """``scipy.stats.t.cdf(x, df)``: ``special.stdtr(df, x)``; nan unless ``df > 0``."""
    if not df > 0.0 or math.isnan(x):
        return NAN
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    return float(special.stdtr(df, x))


def t_sf(x: float, df: float) -> float:
    """``scipy.stats.t.sf(x, df)``: ``special.stdtr(df, -x)``; nan unless ``df > 0``."""
    if not df > 0.0 or math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    return float(special.stdtr(df, -x))


def _quantile_ends(q: float, df: float, low: float, high: float) -> float | None:
    """The value ``rv_continuous.ppf`` gives without calling ``_ppf``, or None to call it."""
    if not df > 0.0 or not 0.0 <= q <= 1.0:  # nan q or df fails these too
        return NAN
    if q == 0.0:
        return low
    if q == 1.0:
        return high
    return None


def t_ppf(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``: ``special.stdtrit(df, q)``; -inf at 0, inf at 1."""
    end = _quantile_ends(q, df, -math.inf, math.inf)
    return float(special.stdtrit(df, q)) if end is None else end


def t_isf(q: float, df: float) -> float:
    """``scipy.stats.t.isf(q, df)``: ``-special.stdtrit(df, q)``; inf at 0, -inf at 1."""
    end = _quantile_ends(q, df, math.inf, -math.inf)
    return float(-special.stdtrit(df, q)) if end is None else end


# -- chi-square ------------------------------------------------------------------------------
def chi2_ppf(q: float, df: float) -> float:
    """``scipy.stats.chi2.ppf(q, df)``: ``2 * special.gammaincinv(df / 2, q)``; 0 at 0."""
    end = _quantile_ends(q, df, 0.0, math.inf)
    return float(2.0 * special.gammaincinv(df / 2.0, q)) if end is None else end


# -- beta ------------------------------------------------------------------------------------
def beta_ppf(q: float, a: float, b: float) -> float:
    """``scipy.stats.beta.ppf(q, a, b)``: ``special.betaincinv(a, b, q)``."""
    return float(special.betaincinv(a, b, q))


# -- noncentral t ----------------------------------------------------------------------------
def nct_sf(x: float, df: float, nc: float) -> float:
    """``scipy.stats.nct.sf(x, df, nc)``: Boost's noncentral t survival function, in [0, 1]."""
    if not df > 0.0 or math.isnan(nc) or math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    with np.errstate(over="ignore"):  # as scipy.stats.nct._sf (scipy gh-17432)
        return float(np.clip(_nct_sf(x, df, nc), 0.0, 1.0))


# -- binomial (arrays, as in the exact McNemar power) --------------------------------------
def _binom_args(k: Any, n: Any, p: Any) -> tuple[Array, Array, Array, Array]:
    """Broadcast float arrays and the mask of valid parameters (``binom._argcheck``)."""
    k_, n_, p_ = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(k, n, p))
    ok = (n_ >= 0) & (n_ == np.floor(n_)) & (p_ >= 0) & (p_ <= 1)
    return k_, n_, p_, ok


def _binom_tail(tail: Any, k: Any, n: Any, p: Any, below: float) -> Array:
    """``tail`` (Boost cdf or sf) at ``floor(k)`` in ``[0, n)``; ``below`` under 0, else 1 - it."""
    k_, n_, p_, ok = _binom_args(k, n, p)
    out = np.where(k_ < 0, below, 1.0 - below)
    inside = ok & (k_ >= 0) & (k_ < n_) & np.isfinite(k_)
    out[inside] = np.clip(tail(np.floor(k_[inside]), n_[inside], p_[inside]), 0.0, 1.0)
    out[~ok | np.isnan(k_)] = NAN
    return out


def binom_cdf(k: Any, n: Any, p: Any) -> Array:
    """``scipy.stats.binom.cdf(k, n, p)``: Boost's binomial cdf; 0 below 0, 1 from n on."""
    return _binom_tail(_binom_cdf, k, n, p, below=0.0)


def binom_sf(k: Any, n: Any, p: Any) -> Array:
    """``scipy.stats.binom.sf(k, n, p)``: Boost's binomial sf; 1 below 0, 0 from n on."""
    return _binom_tail(_binom_sf, k, n, p, below=1.0)


def binom_pmf(k: Any, n: Any, p: Any) -> Array:
    """``scipy.stats.binom.pmf(k, n, p)``: Boost's binomial pmf at whole ``k`` in ``[0, n]``."""
    k_, n_, p_, ok = _binom_args(k, n, p)
    out = np.zeros(k_.shape)
    inside = ok & (k_ >= 0) & (k_ <= n_) & (k_ == np.floor(k_))
    out[inside] = np.clip(_binom_pmf(k_[inside], n_[inside], p_[inside]), 0.0, 1.0)
    out[~ok | np.isnan(k_)] = NAN
    return out


def binom_ppf(q: Any, n: Any, p: Any) -> Array:
    """``scipy.stats.binom.ppf(q, n, p)``: Boost's binomial quantile; -1 at 0 and n at 1."""
    q_, n_, p_, ok = _binom_args(q, n, p)
    out = np.full(q_.shape, NAN)
    inside = ok & (q_ > 0) & (q_ < 1)
    out[inside] = _binom_ppf(q_[inside], n_[inside], p_[inside])
    out[ok & (q_ == 0)] = -1.0
    out[ok & (q_ == 1)] = n_[ok & (q_ == 1)]
    return out


def _pmf(k: float, n: int) -> float:
    return float(binom_pmf(k, n, 0.5))


def binomtest_half(k: int, n: int) -> float:
    """``scipy.stats.binomtest(k, n, 0.5).pvalue`` (two-sided), for ``0 <= k <= n``, ``n >= 1``.

    The same algorithm as scipy's: the p-value sums the probabilities of the outcomes no more
    likely than ``k`` (within a relative 1e-7), the far tail found by a binary search on the
    pmf; ``min(1, ...)``.
    """
    d = _pmf(k, n)
    rerr = 1 + 1e-7
    if k == 0.5 * n:
        return 1.0
    if k < 0.5 * n:
        ix = _search(lambda x: -_pmf(x, n), -d * rerr, math.ceil(0.5 * n), n)
        y = n - ix + int(d * rerr == _pmf(ix, n))
        pval = _cdf_half(k, n) + _sf_half(n - y, n)
    else:
        ix = _search(lambda x: _pmf(x, n), d * rerr, 0, math.floor(0.5 * n))
        pval = _cdf_half(ix, n) + _sf_half(k - 1, n)
    return min(1.0, pval)


def _cdf_half(k: int, n: int) -> float:
    return float(binom_cdf(k, n, 0.5))


def _sf_half(k: int, n: int) -> float:
    return float(binom_sf(k, n, 0.5))


def _search(a: Any, d: float, lo: int, hi: int) -> int:
    """As scipy's ``_binary_search_for_binom_tst``: ``i`` in ``[lo, hi]``, a(i) <= d < a(i+1)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1

"""Do evaldelta's figures agree with the hand-written query's and with the peers'?

Each check reads evaldelta's ``compare --format json`` result and the other tool's JSON and
returns a list of problems (empty when they agree) with the tolerance it applied:

- exact arithmetic on the same counts (rates, deltas, 2x2 cells, Wilson and Newcombe
  limits, exact binomial p-values) must agree to rounding: ``ABS_TOL`` for estimates and
  interval limits, ``REL_TOL`` for p-values (both may underflow to 0 at large N);
- Monte Carlo figures (paired-eval's permutation p-value and percentile bootstrap, 10,000
  resamples) are held to their Monte Carlo error; see `check_paired_eval`.

Runs in evaldelta's venv (it uses scipy for the binomial mass in the mid-p identity).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ABS_TOL = 1e-12  # estimates and interval limits computed from the same counts
REL_TOL = 1e-9  # p-values: binomial tails summed by different code
PVALUE_FLOOR = 1e-300  # below this both tools are reporting an underflowed 0
ALL = "(all cases)"


class EvaldeltaResult:
    """The parts of evaldelta's JSON the checks read: one metric, one slicing, one pair."""

    def __init__(self, path: Path, candidate: str = "cand") -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        slicing = doc["metrics"][0]["slicings"][0]
        self.arms = {(a["arm"], a["slice"]): a for a in slicing["arms"]}
        self.pairs = {p["candidate"]: p for p in slicing["pairs"]}
        pair = self.pairs[candidate]
        self.slices: dict[str, dict[str, Any]] = {s["slice"]: s for s in pair["slices"]}
        self.slices[ALL] = pair["overall"]
        self.overall = pair["overall"]
        self.paired = pair["overall"]["paired"]


def _near(got: float, want: float, tol: float = ABS_TOL) -> bool:
    return abs(got - want) <= tol


def _p_near(got: float, want: float) -> bool:
    if got < PVALUE_FLOOR and want < PVALUE_FLOOR:
        return True
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=0.0)


def check_hand_query(ed_json: Path, query_json: Path) -> list[str]:
    """Per-(arm, slice) cases and rates, per-slice 2x2 tables: counts exact, rates to 1e-12."""
    ed = EvaldeltaResult(ed_json)
    rows = json.loads(query_json.read_text(encoding="utf-8"))
    problems = []
    if set(rows) != set(ed.slices):
        problems.append(f"slices: query {sorted(rows)} vs evaldelta {sorted(ed.slices)}")
    for name, row in rows.items():
        for arm in ("base", "cand"):
            got = ed.arms.get((arm, name))
            if got is None:
                problems.append(f"{arm}/{name}: missing in evaldelta")
                continue
            rate = got["estimate"]["estimate"]
            if got["cases"] != row[f"{arm}_cases"] or not _near(rate, row[f"{arm}_rate"]):
                problems.append(
                    f"{arm}/{name}: evaldelta {got['cases']} cases rate {rate!r}, "
                    f"query {row[f'{arm}_cases']} cases rate {row[f'{arm}_rate']!r}"
                )
        table = ed.slices.get(name, {}).get("table", {})
        cells = {k: row[k] for k in ("both_pass", "only_baseline", "only_candidate", "both_fail")}
        if table != cells:
            problems.append(f"2x2 of {name}: evaldelta {table} vs query {cells}")
    return problems


def _mid_p(exact_p: float, b: int, c: int) -> float:
    """McNemar mid-p from the exact two-sided p: 2 P(X <= k) - P(X = k), X ~ Bin(b + c, 1/2)."""
    from scipy.stats import binom

    return exact_p - float(binom.pmf(min(b, c), b + c, 0.5))


def check_evalstats(ed_json: Path, peer_json: Path) -> list[str]:
    """evalstats with method="newcombe" computes evaldelta's own statistics.

    Arm rates and Wilson limits, the paired difference and its Newcombe (method 10)
    limits to 1e-12; evalstats' McNemar mid-p equals evaldelta's exact McNemar p minus
    the binomial mass at min(b, c), to 1e-9 relative. evalstats reports base - cand.
    """
    ed, peer = EvaldeltaResult(ed_json), json.loads(peer_json.read_text(encoding="utf-8"))
    problems = []
    for arm, got in peer["arms"].items():
        want = ed.arms[(arm, ALL)]["estimate"]
        limits = (want["ci"]["low"], want["ci"]["high"])
        if not _near(got["mean"], want["estimate"]) or not all(
            _near(g, w) for g, w in zip(got["ci"], limits, strict=True)
        ):
            problems.append(f"{arm}: evalstats {got} vs evaldelta {want['estimate']} {limits}")
    pair, paired = peer["pair"], ed.paired
    sign = -1.0 if pair["a"] == "base" else 1.0  # evalstats' diff is a - b
    diff, lo, hi = sign * pair["diff"], pair["ci_low"], pair["ci_high"]
    lo, hi = (-hi, -lo) if sign < 0 else (lo, hi)
    if not _near(diff, paired["estimate"]):
        problems.append(f"delta: evalstats {diff!r} vs evaldelta {paired['estimate']!r}")
    if not (_near(lo, paired["ci"]["low"]) and _near(hi, paired["ci"]["high"])):
        problems.append(f"Newcombe: evalstats ({lo!r}, {hi!r}) vs evaldelta {paired['ci']}")
    mid_p = _mid_p(paired["pvalue"], paired["b"], paired["c"])
    if not _p_near(pair["p_value"], mid_p):
        problems.append(f"mid-p: evalstats {pair['p_value']!r} vs from evaldelta {mid_p!r}")
    return problems


def check_bonett_price(ed_json: Path, peer_json: Path) -> list[str]:
    """evalstats' default (Bonett-Price) is not evaldelta's interval: check it is that
    formula (Bonett and Price 2012; Fagerland et al. 2014 eq. 16) on evaldelta's 2x2 table."""
    from scipy.stats import norm

    ed, peer = EvaldeltaResult(ed_json), json.loads(peer_json.read_text(encoding="utf-8"))
    paired, n = ed.paired, ed.paired["n"]
    p12, p21 = (paired["b"] + 1) / (n + 2), (paired["c"] + 1) / (n + 2)  # base-only, cand-only
    half = norm.ppf(0.975) * math.sqrt((p12 + p21 - (p12 - p21) ** 2) / (n + 2))
    want = (p12 - p21 - half, p12 - p21 + half)  # base - cand, evalstats' orientation
    got = (peer["pair"]["ci_low"], peer["pair"]["ci_high"])
    if peer["pair"]["a"] != "base" or not all(_near(g, w) for g, w in zip(got, want, strict=True)):
        return [f"Bonett-Price: evalstats {got} vs the formula on evaldelta's table {want}"]
    return []


def check_paired_eval(ed_json: Path, peer_json: Path) -> list[str]:
    """paired-eval against evaldelta, exact where it is exact, to Monte Carlo error elsewhere.

    - ``mean_diff`` = evaldelta's paired estimate (1e-12);
    - ``mcnemar_exact`` = evaldelta's exact McNemar p (1e-9 relative); ``wilson_ci`` of each
      arm = evaldelta's Wilson limits (1e-12, called with the full-precision z);
    - the sign-flip permutation p of 0/1 differences is a Monte Carlo estimate of that same
      exact McNemar p: |p_perm - p| <= 4 sqrt(p (1 - p) / B) + 1 / (B + 1), B = 10,000;
    - the percentile bootstrap limits estimate the Wald limits (evaldelta's alternative
      interval: the bootstrap variance is the Wald plug-in variance): each within
      4 Monte Carlo SEs of a 2.5% quantile, 4 * 0.0267 * se (0.0267 = sqrt(0.025 * 0.975 /
      B) / phi(1.96)), plus 2 / n for the lattice of the bootstrap means.
    """
    ed, peer = EvaldeltaResult(ed_json), json.loads(peer_json.read_text(encoding="utf-8"))
    paired, problems = ed.paired, []
    if "paired_compare" in peer:
        res, b = peer["paired_compare"], 10_000
        if not _near(res["mean_diff"], paired["estimate"]):
            problems.append(f"delta: paired-eval {res['mean_diff']!r} vs {paired['estimate']!r}")
        p = paired["pvalue"]
        tol = 4 * math.sqrt(p * (1 - p) / b) + 1 / (b + 1)
        if abs(res["p_value"] - p) > tol:
            problems.append(f"permutation p {res['p_value']!r} vs exact {p!r} (tol {tol:.1e})")
        wald = ed.overall["alternative_ci"]
        tol = 4 * 0.0267 * paired["se"] + 2 / paired["n"]
        for got, want in zip(res["diff_ci"], (wald["low"], wald["high"]), strict=True):
            if abs(got - want) > tol:
                problems.append(f"bootstrap limit {got!r} vs Wald {want!r} (tol {tol:.1e})")
    if "mcnemar_exact" in peer:
        if not _p_near(peer["mcnemar_exact"], paired["pvalue"]):
            problems.append(
                f"McNemar: paired-eval {peer['mcnemar_exact']!r} vs {paired['pvalue']!r}"
            )
        for arm, got in peer["wilson"].items():
            ci = ed.arms[(arm, ALL)]["estimate"]["ci"]
            if not (_near(got[0], ci["low"]) and _near(got[1], ci["high"])):
                problems.append(f"Wilson {arm}: paired-eval {got} vs evaldelta {ci}")
    return problems

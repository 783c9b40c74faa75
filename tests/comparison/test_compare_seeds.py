"""The seeds' worked figures, reproduced end to end through compare on the bundled data.

Reference values are the seed texts' own numbers (quoted in comments) or scipy/statsmodels
calls on the same data, computed here independently of evaldelta's statistics.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import confint_proportions_2indep

from evaldelta.comparison.model import Comparison, PairComparison
from evaldelta.demo import data_path
from evaldelta.demo.scenarios import SCENARIOS, run_demo, run_scenario
from evaldelta.report import render_markdown, render_text
from evaldelta.report._format import fmt

BY_KEY = {s.key: s for s in SCENARIOS}


def pair_of(result: Comparison, candidate: str | None = None) -> PairComparison:
    pairs = result.slicing().pairs
    if candidate is None:
        return pairs[0]
    return next(p for p in pairs if p.candidate == candidate)


@pytest.fixture(scope="module")
def results() -> dict[str, Comparison]:
    return {s.key: run_scenario(s) for s in SCENARIOS}


def test_000_pooled_and_production_weighted(results):
    pair = pair_of(results["000"])
    # Seed 000: "aggregate v1: 0.815, aggregate v2: 0.833"
    assert fmt(pair.pooled.baseline) == "0.815"
    assert fmt(pair.pooled.candidate) == "0.833"  # 0.8325 exactly: a rounding tie, half-up
    # Seed 000: "production-weighted v1: 0.814, v2: 0.802"
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    assert fmt(traffic.per_arm["v1"].estimate) == "0.814"
    assert fmt(traffic.per_arm["v2"].estimate) == "0.802"  # 0.8015 exactly
    # examples/compare-000.txt: v2 - v1 -1.2 pts [-3.3, +0.9]
    assert traffic.delta.estimate == pytest.approx(-0.012, abs=1e-12)
    assert round(traffic.delta.ci.low * 100, 1) == -3.3
    assert round(traffic.delta.ci.high * 100, 1) == 0.9


def test_000_is_a_mix_shift_not_a_strict_reversal(results):
    pair = pair_of(results["000"])
    assert pair.simpson is not None
    assert pair.simpson.mix_shift
    assert not pair.simpson.strict_reversal
    assert pair.simpson.kind == "mix_shift"


def test_000_has_no_paired_analysis_and_says_so(results):
    pair = pair_of(results["000"])
    assert not pair.paired_available
    assert pair.shared_cases == 0
    assert all(d.paired is None and d.basis == "unpaired" for d in pair.slices)
    text = render_text(results["000"])
    assert "No paired analysis" in text
    assert "share no cases" in text


def test_000_slice_intervals_match_statsmodels_newcombe(results):
    pair = pair_of(results["000"])
    counts = {
        "short_factual": (855, 900, 792, 900),
        "multi_turn": (560, 700, 532, 700),
        "tool_use": (408, 600, 390, 600),
        "long_context": (10, 50, 950, 1000),
    }
    for d in pair.slices:
        xb, nb, xc, nc = counts[d.slice]
        low, high = confint_proportions_2indep(xc, nc, xb, nb, method="newcomb", compare="diff")
        assert d.unpaired is not None
        assert d.unpaired.estimate == pytest.approx(xc / nc - xb / nb)
        assert d.unpaired.ci.low == pytest.approx(low, abs=1e-9)
        assert d.unpaired.ci.high == pytest.approx(high, abs=1e-9)


def test_001_strict_reversal_and_fixed_mix(results):
    pair = pair_of(results["001"])
    assert pair.simpson is not None and pair.simpson.strict_reversal
    # Seed 001's fixture: raw(b) < raw(a) while fixed(b) > fixed(a); fixed = equal weights.
    assert pair.pooled.baseline == pytest.approx(83 / 100)
    assert pair.pooled.candidate == pytest.approx(37 / 100)
    chosen = pair.standardized[0]
    assert chosen.mix == "equal"
    assert chosen.per_arm["A"].estimate == pytest.approx((81 / 90 + 2 / 10) / 2)
    assert chosen.per_arm["B"].estimate == pytest.approx((10 / 10 + 27 / 90) / 2)
    assert "Simpson reversal" in render_text(results["001"])


def test_002_paired_difference(results):
    pair = pair_of(results["002"])
    o = pair.overall
    assert o.table is not None
    assert (o.table.both_pass, o.table.only_baseline, o.table.only_candidate) == (33, 1, 3)
    assert o.table.both_fail == 3
    assert o.paired is not None
    # Seed 002: "+2/40, five points"; "sqrt(b + c - (b-c)^2/n)/n is sqrt(3.9)/40 ~ 4.9 points"
    assert o.paired.estimate == pytest.approx(2 / 40)
    assert o.paired.se == pytest.approx(math.sqrt(3.9) / 40)
    # the demo's interval is the default, Newcombe (1998) method 10: [-6.9, +17.6] points
    # (examples/compare-002.txt); the seed's Wald interval is printed beside it
    assert o.paired.interval == "newcombe"
    assert (round(o.paired.ci.low * 100, 1), round(o.paired.ci.high * 100, 1)) == (-6.9, 17.6)
    # Wald: estimate +- z * se; "from about -5 to +15"
    z = sps.norm.ppf(0.975)
    assert o.alternative_ci is not None and o.alternative_interval == "wald"
    assert o.alternative_ci.low == pytest.approx(0.05 - z * math.sqrt(3.9) / 40)
    assert o.alternative_ci.high == pytest.approx(0.05 + z * math.sqrt(3.9) / 40)
    # exact McNemar on a 3-1 split: scipy binomtest, and the seed's 10/16
    assert o.paired.pvalue == pytest.approx(sps.binomtest(1, 4, 0.5).pvalue)
    assert o.paired.pvalue == pytest.approx(10 / 16)
    assert o.informative == 4


def test_002_unpaired_contrast_matches_scipy_welch(results):
    pair = pair_of(results["002"])
    with data_path("seed002.csv") as path:
        df = pd.read_csv(path)
    inc = df[df.arm == "incumbent"].sort_values("case_id").score.to_numpy(float)
    cand = df[df.arm == "candidate"].sort_values("case_id").score.to_numpy(float)
    ref = sps.ttest_ind(cand, inc, equal_var=False).confidence_interval(0.95)
    u = pair.overall.unpaired
    assert u is not None
    assert u.ci.low == pytest.approx(ref.low)
    assert u.ci.high == pytest.approx(ref.high)
    # examples/compare-002.txt: "+5.0 pts [-9.9, +19.9] (Welch)"
    assert (round(u.ci.low * 100, 1), round(u.ci.high * 100, 1)) == (-9.9, 19.9)


def test_002_discordant_cases_listed(results):
    pair = pair_of(results["002"])
    moved = {m.case_id: m.delta for m in pair.discordant}
    assert len(moved) == pair.discordant_total == 4
    assert moved["T2301"] == -1.0  # the "delivery by Friday" regression


@pytest.fixture(scope="module")
def seed004() -> pd.DataFrame:
    with data_path("seed004.csv") as path:
        df = pd.read_csv(path)
    return df.pivot(index="case_id", columns="arm", values="score")


def test_004_paired_vs_unpaired(results, seed004):
    pair = pair_of(results["004"], "cascade")
    o = pair.overall
    assert o.paired is not None and o.unpaired is not None
    ref = sps.ttest_rel(seed004.cascade, seed004.always_strong)
    d = (seed004.cascade - seed004.always_strong).to_numpy()
    # Seed 004: "paired delta -0.0286", "standard error of 0.0024", "t = -11.9"
    assert fmt(o.paired.estimate, 4) == "-0.0286"
    assert fmt(o.paired.se, 4) == "0.0024"
    assert fmt(o.paired.statistic, 1) == "-11.9"
    assert o.paired.statistic == pytest.approx(ref.statistic)
    assert o.paired.pvalue == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-300)
    assert o.paired.se == pytest.approx(d.std(ddof=1) / math.sqrt(len(d)))
    # "the standard error of the difference between two independent means ... about 0.018"
    assert fmt(o.unpaired.se, 3) == "0.018"
    welch = sps.ttest_ind(seed004.cascade, seed004.always_strong, equal_var=False)
    assert o.unpaired.statistic == pytest.approx(welch.statistic)
    # "Ninety-one percent of the paired differences are exactly zero"
    assert fmt(1 - o.informative_share, 2) == "0.91"


def test_004_extraction_is_the_worst_slice_and_carries_the_gap(results):
    pair = pair_of(results["004"], "cascade")
    worst = min(pair.slices, key=lambda d: d.paired.estimate if d.paired else 0.0)
    assert worst.slice == "extraction"
    assert worst.n_pairs == 150
    assert worst.paired is not None
    assert worst.paired.estimate == pytest.approx(-0.85, abs=0.02)
    share = worst.paired.estimate * worst.n_pairs / (pair.overall.paired.estimate * 5000)
    assert 0.85 < share < 0.93  # "Eighty-nine percent of the aggregate gap comes from 3%"
    assert worst.traffic_share == pytest.approx(0.03)


def test_004_three_arms(results):
    cheap = pair_of(results["004"], "always_cheap")
    cascade = pair_of(results["004"], "cascade")
    # Seed 004: "always-cheap arm scored 4.28, against 4.31 for the cascade and 4.34"
    assert fmt(cheap.pooled.candidate, 2) == "4.28"
    assert fmt(cascade.pooled.candidate, 2) == "4.31"
    assert fmt(cascade.pooled.baseline, 2) == "4.34"
    faq = next(d for d in cheap.slices if d.slice == "faq_lookup")
    assert fmt(faq.baseline_mean, 2) == "4.52" and fmt(faq.candidate_mean, 2) == "4.51"
    assert faq.traffic_share == pytest.approx(0.41)
    ext = next(d for d in cheap.slices if d.slice == "extraction")
    assert fmt(ext.candidate_mean, 2) == "3.10" and fmt(ext.baseline_mean, 2) == "4.40"
    assert cheap.cost is not None and cheap.cost.ratio < cascade.cost.ratio < 1  # type: ignore[union-attr]


def test_004_fixed_mix_paired_delta_matches_hand_computation(results, seed004):
    with data_path("seed004.csv") as path:
        df = pd.read_csv(path)
    slices = df[df.arm == "cascade"].set_index("case_id").slice
    d = (seed004.cascade - seed004.always_strong).rename("d").to_frame().join(slices)
    g = d.groupby("slice").d
    w = g.size() / g.size().sum()
    se = g.std(ddof=1) / np.sqrt(g.size())
    pair = pair_of(results["004"], "cascade")
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    assert traffic.delta.estimate == pytest.approx(float((w * g.mean()).sum()))
    # traffic004.csv's shares equal the sample's (5,000 requests drawn in proportion) but
    # are fixed in advance: the stratified SE, within-slice variation only
    assert not traffic.same_as_overall
    assert traffic.delta.se == pytest.approx(float(np.sqrt((w**2 * se**2).sum())))
    # the actual mix is the sample's own: the standardized delta is the all-cases paired
    # delta and gets its interval (issue 24, item 5): scipy.stats.ttest_rel(cascade,
    # always_strong).confidence_interval(0.95), the seed's "-0.0286 +/- 0.0047"
    actual = next(s for s in pair.standardized if s.mix == "actual")
    assert actual.same_as_overall
    ref = sps.ttest_rel(seed004.cascade, seed004.always_strong).confidence_interval(0.95)
    assert (actual.delta.ci.low, actual.delta.ci.high) == pytest.approx((ref.low, ref.high))


def test_004_equal_mix_is_t_on_satterthwaite_df(seed004):
    # another mix: sum_k w_k d_k with SE sqrt(sum w_k^2 se_k^2) and Student t on the
    # Welch-Satterthwaite df of those parts, n_k - 1 each (Satterthwaite 1946)
    from evaldelta.comparison import compare

    with data_path("seed004.csv") as path:
        df = pd.read_csv(path)
        result = compare([path], baseline="always_strong", candidates=["cascade"], mix="equal")
    slices = df[df.arm == "cascade"].set_index("case_id").slice
    d = (seed004.cascade - seed004.always_strong).rename("d").to_frame().join(slices)
    g = d.groupby("slice").d
    parts = (g.std(ddof=1) ** 2 / g.size()) / len(g) ** 2
    dof = float(parts.sum() ** 2 / (parts**2 / (g.size() - 1)).sum())
    half = sps.t.ppf(0.975, dof) * float(np.sqrt(parts.sum()))
    std = pair_of(result, "cascade").standardized[0]
    assert not std.same_as_overall and std.delta.df == pytest.approx(dof)
    assert std.delta.estimate == pytest.approx(float(g.mean().mean()))
    assert (std.delta.ci.low, std.delta.ci.high) == pytest.approx(
        (float(g.mean().mean()) - half, float(g.mean().mean()) + half)
    )


def test_demo_prints_every_scenario_and_the_sample_sizes():
    text = run_demo()
    for key in ("000", "001", "002", "004"):
        assert f"Seed {key}:" in text
    assert "about 312 paired tickets" in text  # examples/compare-002.txt, Connor (1987)
    assert "337 paired tickets for the exact McNemar test" in text  # 80% first at 337
    assert "the exact test has 76% power" in text
    assert "detect 0.50: 40 paired rows" in text and "77 per arm" in text
    assert "detect 0.25: 154 paired rows" in text and "305 per arm" in text


def test_markdown_summary_snapshot_shape(results):
    md = render_markdown(results["002"])
    lines = md.splitlines()
    assert lines[0] == "### evaldelta: `candidate` vs `incumbent` · score · by slice"
    # 4 discordant pairs: Newcombe's interval says what it rests on (issue 24, item 12)
    assert (
        "| **all cases** | +5.0 pts | [-6.9, +17.6] (rests on 4 discordant pairs) | 0.625 | 40 |"
        in lines
    )
    assert "- Informative pairs: 4/40 (10%)" in lines
    # the actual mix is the pairs' own: the standardized delta is the all-cases one, with
    # its interval, not [-10.1, +20.1] beside it (issue 24, item 5)
    assert (
        "- Standardized (actual): +5.0 pts [-6.9, +17.6] (rests on 4 discordant pairs): "
        "interval includes zero (the pairs' own mix: the all-cases paired delta)" in lines
    )


def test_002_shows_the_other_interval_for_contrast(results):
    # the demo uses the default (Newcombe) and prints the seed's Wald figure beside it
    assert "Wald interval for contrast: [-4.7, +14.7]" in render_text(results["002"])


def test_002_seed_wald_interval_stays_available():
    # examples/compare-002.txt: "--interval wald" gives "+5.0 pts [-4.7, +14.7] (Wald;
    # Newcombe: [-6.9, +17.6])", with the warning that Wald under-covers on 40 pairs
    from evaldelta.comparison import compare

    with data_path("seed002.csv") as path:
        result = compare([path], baseline="incumbent", interval="wald")
    o = pair_of(result).overall
    assert o.paired is not None and o.paired.interval == "wald"
    assert (round(o.paired.ci.low * 100, 1), round(o.paired.ci.high * 100, 1)) == (-4.7, 14.7)
    assert o.alternative_interval == "newcombe" and o.alternative_ci is not None
    low, high = o.alternative_ci.low * 100, o.alternative_ci.high * 100
    assert (round(low, 1), round(high, 1)) == (-6.9, 17.6)
    text = render_text(result)
    assert "Newcombe interval for contrast: [-6.9, +17.6]" in text
    assert "the Wald paired interval on fewer than 100 pairs covers well below" in text


def test_000_long_context_break_even_share(results):
    """Issue 13: the long_context share at which v2 - v1 under traffic weights turns positive.

    Analytically, from the seed's rates and weights: the other slices mixed among
    themselves give A = (0.45 x -0.07 + 0.30 x -0.04 + 0.20 x -0.03) / 0.95, and
    D(s) = 0.75 s + A (1 - s) = 0 at s = A / (A - 0.75) = 0.0650.
    """
    pair = pair_of(results["000"])
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    be = next(b for b in traffic.break_even if b.slice == "long_context")
    a = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95
    assert be.share == pytest.approx(0.05, abs=1e-12)
    assert be.sign_flip == pytest.approx(a / (a - 0.75), abs=1e-9)
    text = render_text(results["000"])
    assert (
        "long_context would have to grow from 5.0% to 6.5% of the mix for v2 to come out ahead"
        in text
    )


def test_000_break_even_words_say_where_the_interval_stops_excluding_zero(results):
    """Under the actual mix v2's lead excludes zero; shrinking long_context first makes the
    interval include zero, then flips the sign, then (further) excludes zero the other way.

    Each share in the sentence is checked by bracketing it with the delta and interval
    computed directly at that share (stats.delta_at_share, the mix rescaled by hand there).
    """
    import re

    from evaldelta import stats

    pair = pair_of(results["000"])
    actual = next(s for s in pair.standardized if s.mix == "actual")
    assert actual.delta.ci.low > 0  # the lead excludes zero today
    text = render_text(results["000"])
    line = next(x for x in text.splitlines() if "long_context would have to shrink" in x)
    pcts = [float(p) / 100 for p in re.findall(r"(\d+\.\d)%", line)]
    now, flip, stops, other = pcts
    assert "its interval stops excluding zero at" in line
    assert "for its interval to exclude zero the other way" in line
    assert now > stops > flip > other

    def at(share: float) -> tuple[float, float, float]:
        return stats.delta_at_share(
            actual.slice_deltas, actual.slice_ses, actual.weights, "long_context", share
        )

    step = 0.0006  # the sentence rounds to 0.1%
    assert at(stops + step)[1] > 0 > at(stops - step)[1]  # the low end crosses zero
    assert at(flip + step)[0] > 0 > at(flip - step)[0]  # the estimate crosses zero
    assert at(other + step)[2] > 0 > at(other - step)[2]  # the high end crosses zero

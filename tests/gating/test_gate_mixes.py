"""The [standardized] rule under several named mixes, and its break-even shares (issue 13).

Reference values: seed 000's published slice rates and production weights (seeds/000:
v1 0.950/0.800/0.680/0.200, v2 0.880/0.760/0.650/0.950, w = 0.45/0.30/0.20/0.05), solved by
hand below; the interval crossings by scipy.optimize.brentq on the fixed-mix delta computed
directly from the rescaled weights; and the gate rerun with a mix file at the solved share.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import optimize
from scipy import stats as sps

from evaldelta.comparison import compare
from evaldelta.demo import data_path
from evaldelta.gating import FAIL, INCONCLUSIVE, PASS, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report.verdict import render_verdict_markdown, render_verdict_text

W = {"short_factual": 0.45, "multi_turn": 0.30, "tool_use": 0.20, "long_context": 0.05}
D = {"short_factual": -0.07, "multi_turn": -0.04, "tool_use": -0.03, "long_context": 0.75}
# seeds/000's counts: (v1 passed, v1 total), (v2 passed, v2 total)
COUNTS = {
    "short_factual": ((855, 900), (792, 900)),
    "multi_turn": ((560, 700), (532, 700)),
    "tool_use": ((408, 600), (390, 600)),
    "long_context": ((10, 50), (950, 1000)),
}
# the other slices mixed among themselves, by hand
A = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95
MARGIN = 0.02
POLICY = f"[standardized]\nmix = 'chosen'\nmargin = {MARGIN}\n"


@pytest.fixture(scope="module")
def seed000() -> tuple[Path, Path]:
    with data_path("seed000.csv") as rows, data_path("traffic000.csv") as traffic:
        return rows, traffic


def _rule(verdict, mix):  # type: ignore[no-untyped-def]
    return next(r for r in verdict.rules if r.rule == "standardized_margin" and r.mix == mix)


def test_chosen_means_every_named_mix_must_hold(seed000):
    rows, traffic = seed000
    result = compare([rows], baseline="v1", mix=[f"today={traffic}", "equal"], traffic=traffic)
    verdict = evaluate(parse_policy(POLICY, "p.toml"), result)
    rules = [r for r in verdict.rules if r.rule == "standardized_margin"]
    assert [r.mix for r in rules] == ["today", "equal"]  # --traffic is not a --mix mix
    # today: -1.2 pts [-3.3, +0.9] straddles -2 pts; equal: +15.3 [+11.9, +18.6] clears it
    assert (_rule(verdict, "today").outcome, _rule(verdict, "equal").outcome) == (
        INCONCLUSIVE,
        PASS,
    )
    assert verdict.outcome == INCONCLUSIVE  # passing under one mix is not enough
    alone = evaluate(parse_policy(POLICY, "p.toml"), compare([rows], baseline="v1", mix="equal"))
    assert alone.outcome == PASS
    named = POLICY.replace("'chosen'", "'equal'")
    assert evaluate(parse_policy(named, "p.toml"), result).outcome == PASS
    text = render_verdict_text(verdict)
    assert "(all cases), today mix" in text and "(all cases), equal mix" in text


def test_point_basis_break_even_is_the_hand_solved_share(seed000):
    rows, traffic = seed000
    result = compare([rows], baseline="v1", mix=f"today={traffic}")
    verdict = evaluate(parse_policy('basis = "point"\n' + POLICY, "p.toml"), result)
    rule = _rule(verdict, "today")
    assert rule.outcome == PASS  # -1.2 pts >= -2 pts
    be = next(b for b in rule.break_even if b.slice == "long_context")
    # D(s) = 0.75 s + A (1 - s) = -0.02  <=>  s = (A + 0.02) / (A - 0.75) = 0.0400
    assert be.share == pytest.approx(0.05)
    assert be.down == pytest.approx((A + MARGIN) / (A - 0.75), abs=1e-9)
    assert be.down == pytest.approx(0.04003, abs=1e-5)
    assert be.down_outcome == FAIL
    assert be.up is None  # growing long_context only raises the delta
    assert (
        "long_context would have to shrink from 5.0% to 4.0% of the today mix for the "
        "standardized rule to fail" in render_verdict_text(verdict)
    )


def _direct(s: float, ses: dict[str, float]) -> tuple[float, float]:
    """The fixed-mix delta and SE with long_context at share s, the rest rescaled."""
    w = {k: W[k] / 0.95 * (1 - s) for k in W if k != "long_context"} | {"long_context": s}
    return sum(w[k] * D[k] for k in W), math.sqrt(sum(w[k] ** 2 * ses[k] ** 2 for k in W))


def test_interval_basis_break_even_solves_the_interval_crossing(seed000, run_cli, write):
    rows, traffic = seed000
    result = compare([rows], baseline="v1", mix=f"today={traffic}")
    verdict = evaluate(parse_policy(POLICY, "p.toml"), result)
    rule = _rule(verdict, "today")
    assert rule.outcome == INCONCLUSIVE
    be = next(b for b in rule.break_even if b.slice == "long_context")
    # each slice's SE inside the mix (issue 24, item 5): the arms share no case, so Price and
    # Bonett (2004) add 2/m successes and 4/m trials to each of the m = 8 proportions; the
    # interval is their normal one (scipy.stats.norm.ppf), as the share moves
    # (stats/_sensitivity.py)
    m = 2 * len(COUNTS)
    adjusted = {k: [((x + 2 / m) / (n + 4 / m), n) for x, n in COUNTS[k]] for k in COUNTS}
    parts = {k: [p * (1 - p) / (n + 4 / m) for p, n in v] for k, v in adjusted.items()}
    ses = {k: math.sqrt(sum(v)) for k, v in parts.items()}
    z = sps.norm.ppf(0.975)
    pair = result.slicing().pairs[0]
    today = next(s for s in pair.standardized if s.mix == "today")
    assert today.delta.df is None and today.mix_df is None

    def low(s: float) -> float:
        d, se = _direct(s, ses)
        return d - z * se + MARGIN

    def high(s: float) -> float:
        d, se = _direct(s, ses)
        return d + z * se + MARGIN

    assert low(0.05) < 0 < high(0.05)  # today: the interval straddles -margin
    passes_at = optimize.brentq(low, 0.05, 0.5, xtol=1e-14)  # low end reaches -margin
    fails_at = optimize.brentq(high, 0.0, 0.05, xtol=1e-14)  # high end falls below it
    assert (be.up, be.up_outcome) == (pytest.approx(passes_at, abs=1e-9), PASS)
    assert (be.down, be.down_outcome) == (pytest.approx(fails_at, abs=1e-9), FAIL)
    assert round(passes_at * 100, 1) == 6.7 and round(fails_at * 100, 1) == 1.4
    # the gate itself, rerun on a mix file just either side of the solved share
    policy = write("p.toml", POLICY)
    for share, code in ((passes_at + 0.002, 0), (passes_at - 0.002, 3)):
        rest = {k: W[k] / 0.95 * (1 - share) for k in W if k != "long_context"}
        lines = [f"{k},{v!r}" for k, v in rest.items()] + [f"long_context,{share!r}"]
        mix = write(f"m{code}.csv", "slice,weight\n" + "\n".join(lines) + "\n")
        res = run_cli("gate", rows, "--baseline", "v1", "--policy", policy, "--mix", mix)
        assert res.code == code, (share, res.out)


def test_no_share_that_changes_the_rule_is_said_in_words(seed000):
    rows, _ = seed000
    result = compare([rows], baseline="v1", mix="equal")
    wide = POLICY.replace(str(MARGIN), "0.5")  # -50 pts: every slice's delta clears it
    verdict = evaluate(parse_policy(wide, "p.toml"), result)
    rule = _rule(verdict, "equal")
    assert rule.outcome == PASS and rule.break_even
    assert all(b.up is None and b.down is None for b in rule.break_even)
    sentence = (
        "no single slice's share, anywhere from 0% to 100%, changes the standardized rule's "
        "outcome under the equal mix (pass)"
    )
    assert sentence in render_verdict_text(verdict)
    assert sentence in render_verdict_markdown(verdict)


def test_verdict_json_carries_the_mix_and_break_even(seed000, run_cli, write):
    rows, traffic = seed000
    policy = write("p.toml", POLICY)
    res = run_cli(
        "gate", rows, "--baseline", "v1", "--policy", policy, "--mix", f"today={traffic}",
        "--mix", "equal", "--format", "json",
    )  # fmt: skip
    assert res.code == 3, res.err
    rules = [r for r in json.loads(res.out)["rules"] if r["rule"] == "standardized_margin"]
    assert [r["mix"] for r in rules] == ["today", "equal"]
    lc = next(b for b in rules[0]["break_even"] if b["slice"] == "long_context")
    assert lc["up_outcome"] == PASS and lc["down_outcome"] == FAIL

"""Mix sensitivity in every report format (issue 13): the mixes side by side, the break-even
sentence, the HTML sweep plot, and the demo's seed 000 section.

Reference figures: seed 000's "v2 is 1.2 points worse" under production weights, and the
long_context share at which it turns positive, A / (A - 0.75) = 6.5% with
A = (0.45 x -0.07 + 0.30 x -0.04 + 0.20 x -0.03) / 0.95 (tests/comparison/test_compare_seeds).
"""

from __future__ import annotations

import re

import pytest

from evaldelta import stats
from evaldelta.comparison.model import to_jsonable
from evaldelta.demo.scenarios import SCENARIOS, run_demo, run_scenario
from evaldelta.gating import evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report import render_markdown, render_text
from evaldelta.report._mixes import sweep_panels
from evaldelta.report.html import render_html

SENTENCE = "long_context would have to grow from 5.0% to 6.5% of the mix for v2 to come out ahead"


@pytest.fixture(scope="module")
def seed000():  # type: ignore[no-untyped-def]
    return run_scenario(next(s for s in SCENARIOS if s.key == "000"))


def test_text_shows_the_mixes_side_by_side(seed000):
    text = render_text(seed000)
    table = text[text.index("Mixes side by side") :].splitlines()[:5]
    assert re.search(r"actual .* \+10\.4 pts .* v2 ahead", table[2])
    assert re.search(r"equal .* \+15\.3 pts .* v2 ahead", table[3])
    assert re.search(r"traffic .*0\.814 .*0\.802 .* -1\.2 pts .*\[-3\.3, \+0\.9\] .*"
                     r"interval includes zero", table[4])  # fmt: skip
    assert SENTENCE in text


def test_markdown_has_each_mix_its_verdict_and_the_break_even(seed000):
    md = render_markdown(seed000)
    assert "- Standardized (traffic): -1.2 pts [-3.3, +0.9]: interval includes zero" in md
    # the arms share no case: Price-Bonett slice SEs, t on Satterthwaite df (issue 24, item 5)
    assert "- Standardized (equal): +15.3 pts [+11.9, +18.6]: v2 ahead" in md
    assert f"  - break-even: {SENTENCE} (9.2% for its interval to exclude zero)" in md


def test_html_has_the_mix_table_the_sentence_and_the_sweep_plot(seed000):
    html = render_html(seed000)
    section = html[html.index("Mix sensitivity") :]
    assert "<td>traffic</td>" in section and "interval includes zero" in section
    assert SENTENCE in section
    sweep = section[section.index('class="plot sweep"') :]
    sweep = sweep[: sweep.index("</svg>")]
    # the worst slice's panel first (short_factual), then the nearest break-even
    # (long_context, which also pulls hardest on the delta); each marks both shares
    assert 'id="sweep-0-today-1"' in sweep and 'id="sweep-0-flip-1"' in sweep
    assert "today 5.0%" in sweep and "break-even 6.5%" in sweep
    assert (
        "long_context (nearest break-even, largest weight x delta): today 5.0% of the traffic "
        "mix; break-even 6.5%"
    ) in sweep  # <title>
    assert "short_factual (worst slice): today 45.0% of the traffic mix" in sweep


def test_the_sweep_curve_is_the_standardized_delta_at_each_share(seed000):
    pair = seed000.slicing().pairs[0]
    panels = sweep_panels(pair, True)
    assert [p.label for p in panels][:2] == ["short_factual", "long_context"]  # by relevance
    lc = panels[1]
    assert lc.why == ("nearest break-even", "largest weight x delta")
    # the sweeps are the Comparison's, and the JSON carries them (issue 25)
    assert [s.slice for s in pair.share_sweeps] == [p.label for p in panels]
    swept = to_jsonable(pair)["share_sweeps"][1]
    assert swept["why"] == list(lc.why) and len(swept["curve"]) == len(lc.curve)
    assert lc.mix == "traffic" and lc.today == pytest.approx(0.05)
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    at_today = next(c for c in lc.curve if c[0] == lc.today)
    # at today's share the curve is the reported -1.2 pts [-3.3, +0.9], in points
    assert at_today[1] == pytest.approx(traffic.delta.estimate * 100, abs=1e-9)
    assert (at_today[2], at_today[3]) == pytest.approx(
        (traffic.delta.ci.low * 100, traffic.delta.ci.high * 100), abs=1e-9
    )
    a = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95
    assert lc.flip == pytest.approx(a / (a - 0.75), abs=1e-9)
    at_flip = next(c for c in lc.curve if c[0] == lc.flip)
    assert at_flip[1] == pytest.approx(0.0, abs=1e-9)
    # every point is stats.delta_at_share on the same inputs
    ref = stats.delta_at_share(
        traffic.slice_deltas,
        traffic.slice_ses,
        traffic.delta.weights,
        "long_context",
        0.5,
        df=traffic.mix_df,
    )
    at_half = next(c for c in lc.curve if c[0] == 0.5)
    assert at_half[1:] == pytest.approx(tuple(x * 100 for x in ref))


def test_html_with_a_policy_shows_the_rule_per_mix_and_its_break_even(seed000):
    policy = parse_policy("[standardized]\nmix = 'traffic'\nmargin = 0.02\n", "p.toml")
    verdict = evaluate(policy, seed000)
    html = render_html(seed000, verdict)
    assert "<th>standardized rule</th>" in html
    assert "inconclusive (leaning pass)" in html
    assert (
        "long_context would have to grow from 5.0% to 6.7% of the traffic mix for the "
        "standardized rule to pass" in html
    )
    assert "gate margin" in html  # the sweep panels draw the rule's -2 pts


def test_demo_prints_the_mixes_and_the_break_even():
    text = run_demo()
    seed = text[text.index("Seed 000") : text.index("Seed 001")]
    assert "Mixes side by side" in seed
    for mix in ("actual", "equal", "traffic"):
        assert re.search(rf"^  {mix} +\d\.\d{{3}}", seed, re.MULTILINE), mix
    assert "under production traffic v2 - v1 is -1.2 pts [-3.3, +0.9]" in seed
    assert f"{SENTENCE} (9.2% for its interval to exclude zero)." in seed

"""The HTML report without a browser: self-contained, escaped, CSP-locked, deterministic."""

from __future__ import annotations

import base64
import hashlib
import html
import re

import pytest

from evaldelta.comparison import compare
from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.report._html_views import word_diff
from evaldelta.report.html import CSP, FILTER_SCRIPT, render_html
from tests.rows import paired, write_rows

SLICE_XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def seed004():
    return run_scenario(next(s for s in SCENARIOS if s.key == "004"))


def _rows(path, slices=1, outputs=True, slice_name=SLICE_XSS, arm_b="b"):
    rows = []
    for k in range(slices):
        name = slice_name if k == 0 else f"slice-{k:02d}"
        for i in range(20):
            case = f"c{k}-{i}"
            a = {"case_id": case, "slice": name, "arm": "a", "score": int(i % 3 != 0)}
            b = {"case_id": case, "slice": name, "arm": arm_b, "score": int(i % 4 != 0)}
            if outputs:
                a["output"] = f"the answer is {i}"
                b["output"] = f"the answer is <img src=x onerror=alert({i})>"
            rows += [a, b]
    return write_rows(path, rows, eol="\r\n")  # as csv.writer wrote it


def test_page_is_self_contained_and_csp_locked(seed004):
    page = render_html(seed004)
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert meta is not None and html.unescape(meta.group(1)) == CSP
    assert "default-src 'none'" in CSP and "img-src data:" in CSP
    digest = base64.b64encode(hashlib.sha256(FILTER_SCRIPT.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in CSP
    assert f"<script>{FILTER_SCRIPT}</script>" in page
    assert page.count("<script") == 1
    # nothing that could fetch: no external URLs in src/href, no @import, no url(http...)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<img" not in page and "<iframe" not in page


def test_rendering_is_deterministic(seed004):
    assert render_html(seed004) == render_html(seed004)


def test_forest_plot_has_one_mark_per_slice(seed004):
    page = render_html(seed004)
    for k, pair in enumerate(seed004.slicing().pairs):
        assert len(re.findall(rf'id="forest-{k}-mark-\d+"', page)) == len(pair.slices)


def test_verdict_section_names_the_deciding_rules(seed004):
    from evaldelta.gating import evaluate
    from evaldelta.gating.policy import parse_policy

    verdict = evaluate(
        parse_policy("[defaults]\nmax_regression = 0.15\n", "p"), seed004, candidates=("cascade",)
    )
    page = render_html(seed004, verdict)
    assert 'class="badge fail"' in page and "The rules that decided it" in page
    assert "gate margin -0.15" in page  # drawn on the forest plot


def test_untrusted_text_is_escaped_everywhere(tmp_path):
    # two slices: one slice alone has no row or plot mark of its own (issue 24.1)
    runs = _rows(tmp_path / "x.csv", slices=2, arm_b="<b onmouseover=alert(2)>b</b>")
    page = render_html(compare([runs], baseline="a"))
    body = page.split("<body>", 1)[1]
    assert "<script>alert" not in body
    assert "<img src=x" not in body
    assert "<b onmouseover" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # shown, as text
    assert "&lt;img src=x onerror=alert(" in body
    # the matplotlib SVG writes the slice name as escaped XML text as well
    svg = body.split('class="plot forest"', 1)[1].split("</svg>", 1)[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_dollar_signs_are_not_mathtext(tmp_path):
    runs = _rows(tmp_path / "x.csv", slice_name="cost $5 vs $10", outputs=False)
    page = render_html(compare([runs], baseline="a"))
    assert "cost $5 vs $10" in page


def test_outputs_side_by_side_with_word_diff(tmp_path):
    runs = _rows(tmp_path / "x.csv")
    result = compare([runs], baseline="a")
    moved = result.slicing().pairs[0].discordant
    assert moved and all(m.baseline_output and m.candidate_output for m in moved)
    page = render_html(result)
    assert 'class="out-baseline"' in page and "<del>" in page and "<ins>" in page


def test_word_diff_marks_changed_words():
    spans = word_diff("the cat sat", "the dog sat")
    assert [(s.op, s.text) for s in spans] == [
        ("same", "the "),
        ("del", "cat"),
        ("ins", "dog"),
        ("same", " sat"),
    ]


def test_fifty_slice_report_size(tmp_path, seed004):
    runs = _rows(tmp_path / "fifty.csv", slices=50, outputs=False, slice_name="slice-00")
    result = compare([runs], baseline="a")
    page = render_html(result)
    assert len(re.findall(r'id="forest-0-mark-\d+"', page)) == 50
    size50, size004 = len(page.encode()), len(render_html(seed004).encode())
    print(f"\nHTML size: 50-slice comparison {size50:,} bytes; seed 004 {size004:,} bytes")
    assert size50 < 1_000_000 and size004 < 1_000_000


def test_cli_infers_html_and_writes_pngs(run_cli, tmp_path):
    runs = _rows(tmp_path / "x.csv", outputs=False, slice_name="s")
    out = tmp_path / "report.html"
    res = run_cli("compare", runs, "-o", out, "--png", tmp_path / "png")
    assert res.code == 0, res.err
    assert out.read_text().startswith("<!DOCTYPE html>")
    pngs = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert pngs == ["forest-0.png", "rates-0.png"]
    assert (tmp_path / "png" / "forest-0.png").read_bytes()[:4] == b"\x89PNG"


def test_gate_and_compare_policy_write_html(run_cli, tmp_path):
    runs = _rows(tmp_path / "x.csv", outputs=False, slice_name="s")
    policy = tmp_path / "gate.toml"
    policy.write_text("[defaults]\nmax_regression = 0.5\n")
    for cmd in ("gate", "compare"):
        out = tmp_path / f"{cmd}.html"
        res = run_cli(cmd, runs, "--policy", policy, "--format", "html", "-o", out)
        assert res.code in (0, 3), res.err
        assert 'id="verdict"' in out.read_text()


# -- issue 24.9: the pictures the HTML chooses -------------------------------------------


def test_the_sweep_shows_the_relevant_slices_and_says_which(seed004):
    # the first four in list order left out extraction, the slice seed 004 is about
    from evaldelta.comparison._settle import sweep_choice

    slicing = seed004.slicing()
    cascade = next(p for p in slicing.pairs if p.candidate == "cascade")
    chosen = sweep_choice(cascade, slicing.arms)
    assert chosen[0][0].slice == "extraction"
    assert chosen[0][1] == ("worst slice", "largest weight x delta")  # 3% x -0.85
    assert len(chosen) == 4
    page = render_html(seed004)
    assert "extraction (worst slice, largest weight x delta): today 3.0% of the traffic mix" in page
    left = sorted({"classification", "drafting", "faq_lookup", "multi_step_reasoning",
                   "summarization"} - {b.slice for b, _ in chosen})  # fmt: skip
    assert "4 of 6 slices drawn, by relevance: the worst slice, then the largest" in page
    assert f"not drawn: {', '.join(left)}" in page


def test_a_slice_near_its_break_even_is_drawn_and_named():
    from evaldelta.comparison._settle import sweep_choice

    result = run_scenario(next(s for s in SCENARIOS if s.key == "000"))
    slicing = result.slicing()
    reasons = {b.slice: why for b, why in sweep_choice(slicing.pairs[0], slicing.arms)}
    # seed 000 under traffic: long_context 5.0% -> 6.5% flips the sign
    assert "nearest break-even" in reasons["long_context"]
    assert reasons["short_factual"] == ("worst slice",)


def test_the_forest_axis_is_set_by_the_slices_with_evidence(tmp_path):
    from evaldelta.report import plots

    # one 30-pair slice with a narrow interval; two 1-pair slices at +-80 points
    big = [(int(i % 3 != 0), int(i % 3 != 0 or i % 9 == 0)) for i in range(300)]
    rows = paired(big, arms=("a", "b"), slice="big", case="b{i}")
    rows += paired([(1, 1)], arms=("a", "b"), slice="tiny1", case="t1")
    rows += paired([(0, 0)], arms=("a", "b"), slice="tiny2", case="t2")
    path = write_rows(tmp_path / "r.csv", rows, "case_id,slice,arm,score")
    page = render_html(compare([path], baseline="a"))
    svg = page.split('class="plot forest"', 1)[1].split("</svg>", 1)[0]
    for i in range(3):
        assert f'id="forest-0-mark-{i}"' in svg  # still one mark per slice
    assert svg.count('id="forest-0-clip-') == 4  # both tiny slices, both ends
    assert (
        "2 intervals run past it, cut at the edge and marked with an arrowhead: tiny1, tiny2"
        in (" ".join(html.unescape(page).split()))
    )
    from evaldelta.comparison.ordering import ordered_slices
    from evaldelta.report._html_views import forest_rows

    result = compare([path], baseline="a")
    pair = result.slicing().pairs[0]
    order = ordered_slices(pair, result.slicing().arms)
    few = {d.slice for d in order.slices[order.ranked :]}
    fr = forest_rows(order.slices, True, {}, 0.05, few)
    lo, hi = plots.forest_limits(fr)
    assert lo > -20 and hi < 20  # the big slice's interval, not +-79 points


def test_no_empty_traffic_column_without_traffic(seed004):
    page002 = render_html(run_scenario(next(s for s in SCENARIOS if s.key == "002")))
    assert '<th class="num">traffic</th>' not in page002
    assert "traffic = the slice's traffic share" not in page002
    assert '<th class="num">traffic</th>' in render_html(seed004)  # given: shown

"""The reports say the same thing: Markdown and HTML carry the text report's facts.

Real data (../shared/data/real, skipped when absent) and the demo seeds. Reference values
are the figures each dataset's SOURCE.md computed with plain Python, quoted beside them.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.demo.scenarios import GATE_POLICY_004, SCENARIOS, run_scenario
from evaldelta.gating import FAIL, PASS, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report import render_markdown, render_text
from evaldelta.report.html import render_html
from evaldelta.report.verdict import render_verdict_markdown

from ..conftest import REAL

markdown_it = pytest.importorskip("markdown_it")

real = pytest.mark.skipif(not REAL.exists(), reason="../shared/data/real is not beside the repo")

PRO_BASE = "Claude 4 Sonnet - 10132025"
VERIFIED = ("Claude 4 Sonnet (20250514)", "Claude 4.5 Sonnet (20250929)")


def data(name: str) -> Path:
    return REAL / name / f"{name}.csv"


def page_text(page: str) -> str:
    """The HTML's text as a reader sees it (tags dropped, entities decoded, spaces joined)."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def squash(text: str) -> str:
    return " ".join(text.split())


def md_section(md: str, candidate: str) -> str:
    """One pair's section of the Markdown (from its heading to the next)."""
    parts = re.split(r"(?m)^(?=### evaldelta: )", md)
    (section,) = [p for p in parts if p.startswith(f"### evaldelta: `{candidate}` vs")]
    return section


@pytest.fixture(scope="module")
def metr() -> Comparison:
    return compare([data("metr_time_horizon")], baseline="o1-preview", candidates=["o1"])


@pytest.fixture(scope="module")
def pro() -> Comparison:
    return compare([data("swebench_pro_scale")], baseline=PRO_BASE)


@pytest.fixture(scope="module")
def verified() -> Comparison:
    return compare(
        [data("swebench_verified_bash_only")], baseline=VERIFIED[0], candidates=[VERIFIED[1]]
    )


@real
def test_metr_per_attempt_reversal_in_every_report(metr: Comparison) -> None:
    text, md, page = render_text(metr), render_markdown(metr), page_text(render_html(metr))
    # SOURCE.md: run-level 0.536 vs 0.358 (-17.8 pts); own cases 0.5176 vs 0.5299 (+1.2);
    # shared cases, paired, +0.0653
    attempts = (
        "per attempt (every run counts once): o1-preview 0.536  o1 0.358  o1 - o1-preview -17.8 pts"
    )
    flag = (
        "Per attempt and per case disagree in sign: o1 - o1-preview is -17.8 pts per attempt "
        "(every run counts once) but +1.2 pts per case (each case counts once; +6.5 pts "
        "paired on the 75 shared cases)."
    )
    assert attempts in text and f"! {flag}" in text
    assert f"  - {attempts}" in md
    assert f"- ⚠️ **{flag.split(': ')[0]}:** {flag.split(': ', 1)[1]}" in md
    assert squash(attempts) in page and squash(flag) in page
    assert 'class="flag attempt-flag"' in render_html(metr)


def test_no_reversal_flag_when_the_means_agree() -> None:
    # seed 004 is graded with one attempt per case: no per-attempt line anywhere
    result = run_scenario(next(s for s in SCENARIOS if s.key == "004"))
    for out in (render_text(result), render_markdown(result), render_html(result)):
        assert "per attempt" not in out and "disagree in sign: " not in out


@real
def test_pro_one_arm_only_counts_in_every_report(pro: Comparison) -> None:
    cand = "Claude Sonnet 4 - paper"
    pair = next(p for p in pro.slicing().pairs if p.candidate == cand)
    # the issue: 143 and 79 cases present in one arm only on SWE-Bench Pro
    assert (pair.overall.only_in_baseline, pair.overall.only_in_candidate) == (79, 143)
    sentence = (
        "Cases in one arm only (left out of the paired analysis, listed in JSON): "
        f"only {PRO_BASE} 79, only {cand} 143"
    )
    assert sentence in render_text(pro)
    section = md_section(render_markdown(pro), cand)
    assert f"- {sentence}; per slice (only {PRO_BASE}/only {cand}): " in section
    per_slice = section.split(f"only {cand}): ", 1)[1].splitlines()[0]
    counts = [tuple(map(int, c.rsplit(" ", 1)[1].split("/"))) for c in per_slice.split(", ")]
    assert sum(b for b, _ in counts) == 79 and sum(c for _, c in counts) == 143
    page = render_html(pro)
    assert squash(sentence) in page_text(page)
    k = pro.slicing().pairs.index(pair)
    section_html = page.split(f'id="pair-{k}"', 1)[1].split("<section", 1)[0]
    rows = re.findall(
        r'<tr><td>[^<]*</td><td class="num">(\d+)</td><td class="num">(\d+)</td></tr>',
        section_html.split('<table class="coverage">', 1)[1].split("</table>", 1)[0],
    )
    assert sum(int(b) for b, _ in rows) == 79 and sum(int(c) for _, c in rows) == 143


def _answers(text_block: str) -> list[str]:
    return [x for x in text_block.splitlines() if x.startswith(("Answer:", "Worst slice:"))]


def _rendered(line: str) -> str:
    """A Markdown line as GitHub shows it: rendered, tags dropped, the ZWJ invisible."""
    out = markdown_it.MarkdownIt("commonmark").render(line)
    return html.unescape(re.sub(r"<[^>]+>", "", out)).strip().replace("\u200d", "")


def _check_answers(result: Comparison) -> int:
    """Each pair's Markdown section carries the text report's Answer lines, verbatim."""
    text, md = render_text(result), render_markdown(result)
    blocks = re.split(r"(?m)^(?=evaldelta compare · )", text)[1:]
    pairs = result.slicing().pairs
    checked = 0
    for pair in pairs:
        (block,) = [b for b in blocks if b.startswith(f"evaldelta compare · {pair.baseline} ->")
                    and f" -> {pair.candidate} · " in b.splitlines()[0]]  # fmt: skip
        answers = _answers(block)
        section = md_section(md, pair.candidate)
        lines = section.splitlines()
        assert answers and lines[2].startswith("Answer: ")  # it leads, under the heading
        shown = [x for x in lines if x.startswith(("Answer:", "Worst slice:"))]
        assert [_rendered(x) for x in shown] == answers
        checked += 1
    return checked


@pytest.mark.parametrize("key", ["000", "001", "002", "004"])
def test_markdown_leads_with_the_text_answer_on_the_seeds(key: str) -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == key))
    assert _check_answers(result) == len(result.slicing().pairs)


@real
@pytest.mark.parametrize(
    "name", ["swebench_verified_bash_only", "swebench_pro_scale", "metr_time_horizon"]
)
def test_markdown_leads_with_the_text_answer_on_real_data(name: str) -> None:
    result = compare([data(name)])
    assert _check_answers(result) == len(result.slicing().pairs)


def _ranked_rows(section: str) -> list[list[str]]:
    lines = section.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("|---"))
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("|") or line.startswith("| **all cases**"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@real
def test_verified_worst_slices_are_ranked_by_interval_among_big_slices(
    verified: Comparison,
) -> None:
    (pair,) = verified.slicing().pairs
    section = md_section(render_markdown(verified), VERIFIED[1])
    rows = _ranked_rows(section)
    by_name = {d.slice: d for d in pair.slices}
    assert len(rows) == 3
    highs = []
    for name, *_rest, n in rows:
        d = by_name[name]
        assert d.n_pairs >= 10 and int(n) == d.n_pairs
        assert d.main is not None
        highs.append(d.main.ci.high)
    assert highs == sorted(highs)
    # no slice of at least 10 pairs outside the table has a lower upper bound
    others = [d for d in pair.slices if d.n_pairs >= 10 and d.slice not in {r[0] for r in rows}]
    assert all(d.main is not None and d.main.ci.high >= highs[-1] for d in others)
    small = [d.slice for d in pair.slices if d.n_pairs < 10]
    # SWE-bench Verified: pallets/flask has 1 pair, mwaskom/seaborn 2, psf/requests 8
    assert {"pallets/flask", "mwaskom/seaborn", "psf/requests"} <= set(small)
    assert not {r[0] for r in rows} & set(small)
    # one rule, stated; the cut table says what it left out and where the rest are
    assert "slices with fewer than 10 pairs after the others" in section
    assert f"3 of {len(pair.slices)} slices shown; the other {len(pair.slices) - 3}" in section


def test_seed_002_worst_slices_leave_out_the_9_pair_slice() -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == "002"))
    section = md_section(render_markdown(result), "candidate")
    names = [r[0] for r in _ranked_rows(section)]
    # seed 002: delivery_delay has 9 pairs, the other slices 10 or more
    assert "delivery_delay" not in names and len(names) == 3
    assert "slices with fewer than 10 pairs after the others" in section
    assert "3 of 4 slices shown; the other 1 slice is in the text and HTML reports" in section


def _verdict_tables(md: str) -> tuple[list[str], list[str]]:
    head, _, folded = md.partition("<details>")
    deciding = [
        x for x in head.splitlines() if x.startswith("| ") and not x.startswith("| outcome")
    ]
    passed = [
        x for x in folded.splitlines() if x.startswith("| ") and not x.startswith("| outcome")
    ]
    return deciding, passed


def test_single_candidate_verdict_folds_what_passed() -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == "004"))
    verdict = evaluate(parse_policy(GATE_POLICY_004), result, candidates=("cascade",))
    md = render_verdict_markdown(verdict)
    deciding, passed = _verdict_tables(md)
    assert f"<details><summary>{verdict.count(PASS)} rules passed</summary>" in md
    assert len(passed) == verdict.count(PASS) and len(deciding) == len(verdict.rules) - len(passed)
    assert all(x.startswith("| **FAIL**") or "INCONCLUSIVE" in x for x in deciding)
    assert all(x.startswith("| PASS |") for x in passed)
    assert "| candidate |" not in md and "| cascade |" not in md  # one candidate: said once
    assert md.count("cascade") == 1
    assert "- **max_regression fails on extraction**" in md


def test_several_candidates_keep_the_candidate_column() -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == "004"))
    verdict = evaluate(parse_policy(GATE_POLICY_004), result)
    assert len(verdict.candidates) == 2
    md = render_verdict_markdown(verdict)
    assert md.count("| outcome | rule | candidate |") == 2
    fails = [r for r in verdict.rules if r.outcome == FAIL]
    assert sum(x.startswith("- **") for x in md.splitlines()) == len(fails)


@real
def test_verified_24_rule_verdict_folds_the_passing_min_cases(verified: Comparison) -> None:
    policy = parse_policy("[defaults]\nmax_regression = 0.3\nmin_cases = 10\n", "gate.toml")
    verdict = evaluate(policy, verified)
    assert len(verdict.rules) == 2 * len(verified.slicing().pairs[0].slices)
    md = render_verdict_markdown(verdict)
    deciding, passed = _verdict_tables(md)
    min_cases_passed = [r for r in verdict.rules if r.rule == "min_cases" and r.outcome == PASS]
    assert min_cases_passed and len([x for x in passed if "| min_cases |" in x]) == len(
        min_cases_passed
    )
    assert not [x for x in deciding if x.startswith("| PASS")]
    assert md.count(VERIFIED[1]) == 1


def _text_rows(text: str, names: set[str]) -> list[str]:
    """The slice names of the text report's per-slice table, in their order."""
    start = text.index("Per slice, worst first:")
    out = []
    for line in text[start:].splitlines()[3:]:
        cell = line.strip().split("  ")[0]
        if cell == "all cases":
            break
        if cell in names:
            out.append(cell)
    return out


@real
def test_one_order_in_every_format_with_the_rule_stated(verified: Comparison) -> None:
    # issue 24.3: text and HTML sorted by the point estimate (SWE-bench Verified's 1-2 pair
    # slices at +0.0 on top), Markdown by the upper bound among slices with >= 10 pairs
    from evaldelta.comparison.ordering import ordered_slices
    from evaldelta.report.terminal import terminal_renderables

    slicing = verified.slicing()
    (pair,) = slicing.pairs
    order = [d.slice for d in ordered_slices(pair, slicing.arms).slices]
    names = set(order)
    # SOURCE.md: pallets/flask has 1 instance, mwaskom/seaborn 2, psf/requests 8: last
    assert order[-3:] == ["psf/requests", "mwaskom/seaborn", "pallets/flask"]
    assert order[0] == "sympy/sympy"  # [-7.6, +10.3]: the lowest upper end of 10+ pairs
    text = render_text(verified)
    assert _text_rows(text, names) == order
    page = render_html(verified)
    html_rows = re.findall(r'<tr class="(?:worse|better|unclear)"><td>([^<]+)</td>', page)
    assert [html.unescape(r) for r in html_rows] == order
    md = md_section(render_markdown(verified), VERIFIED[1])
    assert [r[0] for r in _ranked_rows(md)] == order[:3]
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=240, no_color=True).print(terminal_renderables(verified))
    terminal = buf.getvalue()
    positions = [terminal.index(f" {name} ") for name in order]
    assert positions == sorted(positions)
    rule = "worst first, by the upper end of each interval (the most gain the data allow)"
    for out in (text, squash(page_text(page)), md, squash(terminal)):
        assert rule in out
        assert "slices with fewer than 10 pairs after the others" in out

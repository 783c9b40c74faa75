"""Issue 26: every format says when a comparison's intervals are confidence sequences.

A sequential comparison (every interval an anytime-valid confidence sequence over the cases
in the order of a column) is built end to end: ``compare`` on a CSV, then
``comparison.sequential.anytime`` over arrivals built by hand. Each format must say so
before any interval, label every interval column ``anytime 95% CS`` (never ``95% interval``)
and every p-value anytime-valid, and show a stopped run's looks; a fixed comparison of the
same rows shows none of it (its outputs are the snapshot tests' and do not move).
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema
from rich.console import Console

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison, Look
from evaldelta.comparison.sequential import anytime
from evaldelta.evidence import ArrivedCase, CaseArrivals
from evaldelta.gating import evaluate, parse_policy
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.html import render_html
from evaldelta.report.junit import render_verdict_junit
from evaldelta.report.sections.sequential import MAX_LOOKS, shown_looks
from evaldelta.report.terminal import print_terminal
from evaldelta.report.verdict import render_verdict_markdown, render_verdict_text
from tests.conftest import ROOT
from tests.rows import write_rows

SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())
XSD = ROOT / "tests" / "fixtures" / "junit" / "jenkins-junit.xsd"
POLICY = parse_policy("max_regression = 0.05\nmin_cases = 10\n")

LEAD = "every interval in this report is an anytime-valid 95% confidence sequence"
# what a fixed-sample interval is labelled; a sequential report never says it
FIXED_LABEL = re.compile(r"95% (interval|CI)\b|\bCI\b|exact McNemar")
SEQUENTIAL_WORDS = ("anytime", "confidence sequence", "Sequential", " CS")


def _scores(i: int, graded: bool) -> tuple[int, int]:
    """Case i: chat cases are unchanged; extraction loses about half its passes (or points)."""
    if i % 2 == 0:  # chat
        base = 3 + i % 3 if graded else int(i % 5 != 0)
        return base, base if i % 8 else (base - 1 if graded else 1 - base)
    base = 4 + i % 2 if graded else int(i % 7 != 0)
    return base, (1 + i % 3 if graded else int(i % 3 == 0)) if i % 4 != 1 else base


def _runs(tmp_path: Path, graded: bool) -> tuple[Path, list[CaseArrivals]]:
    rows, arrived = [], {"base": [], "cand": []}  # type: dict[str, list[ArrivedCase]]
    for i in range(120):
        name = "chat" if i % 2 == 0 else "extraction"
        for arm, value in zip(("base", "cand"), _scores(i, graded), strict=True):
            rows.append((f"c{i:03d}", name, arm, value, i))
            arrived[arm].append(ArrivedCase(f"c{i:03d}", name, float(i), float(value)))
    runs = write_rows(tmp_path / "runs.csv", rows, "case_id,slice,arm,score,ts")
    arms = {arm: tuple(cases) for arm, cases in arrived.items()}
    return runs, [CaseArrivals("score", "slice", arms)]


def _looks(n: int) -> tuple[Look, ...]:
    """n looks of 10 cases: chat decided at look 3, the gate fails at the last."""
    return tuple(
        Look(
            index=k,
            cases=10 * k,
            calls=20 * k,
            outcome="fail" if k == n else "inconclusive",
            decided=("chat", "extraction") if k == n else ("chat",) if k >= 3 else (),
            usd=0.01 * k,  # below a dollar: four decimals
        )
        for k in range(1, n + 1)
    )


def _stopped(comparison: Comparison, looks: tuple[Look, ...], fixed: int = 240) -> Comparison:
    seq = comparison.sequential
    assert seq is not None
    seq = dataclasses.replace(
        seq,
        looks=looks,
        stopping="verdict",
        calls=looks[-1].calls,
        fixed_calls=fixed,
        stopped_because="the verdict was decided: max_regression fails on extraction",
    )
    return dataclasses.replace(comparison, sequential=seq)


@pytest.fixture(params=[False, True], ids=["pass-fail", "graded"])
def pair(request: Any, tmp_path: Path) -> tuple[Comparison, Comparison]:
    """(fixed, sequential) comparisons of the same rows."""
    runs, arrivals = _runs(tmp_path, graded=request.param)
    fixed = compare([runs], baseline="base")
    return fixed, anytime(fixed, arrivals, "ts")


@pytest.fixture
def stopped(tmp_path: Path) -> Comparison:
    runs, arrivals = _runs(tmp_path, graded=False)
    return _stopped(anytime(compare([runs], baseline="base"), arrivals, "ts"), _looks(6))


def _terminal(comparison: Comparison) -> str:
    buf = io.StringIO()
    print_terminal(comparison, Console(file=buf, force_terminal=True, no_color=True, width=400))
    return buf.getvalue()


def _html_heads(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", page)]


def test_text_says_sequential_first_and_labels_every_interval(pair):
    fixed, seq = pair
    text = render_text(seq)
    lines = text.splitlines()
    assert lines[1].startswith(f"Sequential: {LEAD} (CS) over the cases in the order of 'ts'")
    assert "It assumes the cases came in random order" in lines[1]
    assert "wider than a fixed-sample interval on the same cases" in lines[1]
    assert "Every p-value is anytime-valid too" in lines[1]
    assert "betting confidence sequence (Waudby-Smith and Ramdas 2024)" in lines[1]
    assert "Not shown (fixed-sample only): fixed-mix standardized deltas" in text
    assert "the unpaired (Welch) contrast" in text
    assert "· anytime-valid 95% confidence sequences\n" in text  # the pair's title
    head = next(x for x in lines if x.lstrip().startswith("slice "))
    assert "anytime 95% CS" in head and "anytime p (Holm)" in head
    assert "every p is anytime-valid; p in the slice rows is Holm-adjusted" in text
    assert "anytime-valid p = " in text  # the evidence's p-value
    assert "rate/mean  anytime 95% CS" in text  # the per-arm table
    assert "Holm-adjusted anytime-valid p < 0.05" in text  # the answer's count
    assert not FIXED_LABEL.search(text), FIXED_LABEL.search(text)
    assert "SE n/a" not in text and "t = n/a" not in text
    assert "(all cases)" in text and "[n/a, n/a]" not in text  # every arm row has its CS
    plain = render_text(fixed)
    assert not any(word in plain for word in SEQUENTIAL_WORDS)
    assert "95% interval" in plain


def test_markdown_and_terminal_label_the_sequences(pair):
    fixed, seq = pair
    md = render_markdown(seq)
    assert md.startswith(f"> Sequential: {LEAD} (CS) over the cases in the order of `ts`,")
    assert "| slice | cand − base | anytime 95% CS | anytime p (Holm) | n |" in md
    assert not FIXED_LABEL.search(md)
    assert not any(word in render_markdown(fixed) for word in SEQUENTIAL_WORDS)
    term = _terminal(seq)
    assert f"Sequential: {LEAD}" in term
    assert "anytime 95% CS" in term and "anytime p (Holm)" in term
    assert not FIXED_LABEL.search(term)
    assert not any(word in _terminal(fixed) for word in SEQUENTIAL_WORDS)


def test_html_labels_every_interval_column(pair):
    fixed, seq = pair
    page = html.unescape(render_html(seq, evaluate(POLICY, seq)))
    assert "anytime-valid 95% confidence sequences in the order of ts" in page  # the header
    assert "paired binary interval" not in page  # a fixed-sample method, not used
    assert '<section id="sequential">' in page
    assert page.index('<section id="verdict">') < page.index('<section id="sequential">')
    assert page.index('<section id="sequential">') < page.index('class="pair"')
    heads = _html_heads(page)
    assert heads.count("anytime 95% CS") >= 3  # slices, rates, the verdict's rules
    assert "anytime p (Holm)" in heads
    assert not [h for h in heads if re.fullmatch(r"(95% )?(interval|CI)", h)]
    assert "anytime-valid p = " in page and "exact McNemar p" not in page
    # the plan's pairs are a fixed design's, and say so
    assert "These are a fixed design's pairs (a fixed-sample interval)" in page
    assert "Basis: anytime-valid 95% confidence sequences (sequential)" in page
    fixed_page = render_html(fixed, evaluate(POLICY, fixed))
    assert '<section id="sequential">' not in fixed_page
    assert "anytime" not in fixed_page and "95% interval" in _html_heads(fixed_page)


def test_the_verdict_says_it_was_judged_on_confidence_sequences(pair):
    fixed, seq = pair
    verdict = evaluate(POLICY, seq)
    text = render_text(seq, verdict)
    gate = text[text.index("evaldelta gate") :]
    assert gate.splitlines()[0].endswith("· sequential (anytime-valid)")
    assert "Basis: anytime-valid 95% confidence sequences (sequential), not fixed-sample" in gate
    assert "on their anytime-valid p-values" in gate
    assert re.search(r"estimate +anytime 95% CS +bound", gate)
    # `evaldelta gate` prints the verdict alone: its rules say they were judged on sequences
    assert render_verdict_text(verdict) == gate
    md = render_verdict_markdown(verdict, seq)
    assert "| estimate | anytime 95% CS | bound |" in md and "· sequential (anytime-valid)" in md
    plain = render_verdict_text(evaluate(POLICY, fixed), fixed)
    assert "Basis: 95% intervals." in plain and "anytime" not in plain


def test_junit_names_the_sequences_and_carries_the_looks(stopped):
    verdict = evaluate(POLICY, stopped)
    doc = render_verdict_junit(verdict, stopped)
    xmlschema.XMLSchema(XSD).validate(doc)
    assert 'name="evaldelta.intervals" value="anytime-valid confidence sequences' in doc
    assert 'name="evaldelta.sequential.order" value="ts"' in doc
    assert 'name="evaldelta.sequential.calls" value="120"' in doc
    assert 'name="evaldelta.sequential.fixed_calls" value="240"' in doc
    assert "anytime 95% CS [" in doc and "adjusted anytime-valid p (fail)" in doc
    assert "; interval [" not in doc
    out = html.unescape(doc[doc.rindex("<system-out>Sequential:") :])
    assert "Calls spent: 120 of the fixed design's 240" in out
    assert "Looks (6):" in out and "fail          2 (+extraction)" in out


def test_every_format_shows_the_looks(stopped):
    calls = "Calls spent: 120 of the fixed design's 240 (every case on every arm; saved 50%)."
    stop = (
        "Stopped: the verdict was decided: max_regression fails on extraction "
        "(stopping rule: verdict)."
    )
    text = render_text(stopped)
    assert stop in text and calls in text
    table = text[text.index("Looks (6):") :].splitlines()[1:8]
    assert table[0].split() == ["look", "cases", "calls", "usd", "gate", "slices", "decided"]
    assert table[1].split() == ["1", "10", "20", "$0.0100", "inconclusive", "none"]
    assert table[3].split() == ["3", "30", "60", "$0.0300", "inconclusive", "1", "(+chat)"]
    assert table[6].split() == ["6", "60", "120", "$0.0600", "fail", "2", "(+extraction)"]
    md = render_markdown(stopped)
    assert "| look | cases | calls | usd | gate | slices decided |" in md
    assert "| 6 | 60 | 120 | \\$0.0600 | fail | 2 (+extraction) |" in md
    assert "saved 50%" in md
    page = html.unescape(render_html(stopped))
    looks = page[page.index('<table class="looks">') : page.index("</table>", page.index("looks"))]
    assert looks.count("<tr class=") == 6 and "2 (+extraction)" in looks
    assert "saved 50%" in page
    term = _terminal(stopped)
    assert calls in term and "Looks (6)" in term and "2 (+extraction)" in term


def test_long_runs_elide_looks_and_say_how_many():
    looks = _looks(40)  # changes at look 3 (chat decided) and look 40 (fail)
    shown, left = shown_looks(looks)
    assert [x.index for x in shown] == [1, 3, 40] and left == 37
    flapping = tuple(
        dataclasses.replace(x, outcome="inconclusive" if x.index % 2 else "pass") for x in looks
    )
    shown, left = shown_looks(flapping)
    assert len(shown) == MAX_LOOKS and left == 40 - MAX_LOOKS
    # the first and last look, and the earliest and latest changes
    assert [x.index for x in shown] == [1, 2, 3, 4, 5, 6, 35, 36, 37, 38, 39, 40]
    assert shown_looks(looks[:MAX_LOOKS]) == (looks[:MAX_LOOKS], 0)


def test_a_long_run_reads_in_every_format(tmp_path):
    runs, arrivals = _runs(tmp_path, graded=False)
    comparison = _stopped(
        anytime(compare([runs], baseline="base"), arrivals, "ts"), _looks(40), 1000
    )
    note = (
        "3 of 40 looks shown (37 not shown): the first, the last and each where the gate's "
        "outcome or the decided slices changed"
    )
    text = render_text(comparison)
    rows = text[text.index("Looks (40):") :].splitlines()
    assert [r.split()[0] for r in rows[2:5]] == ["1", "3", "40"]
    assert rows[5] == f"  ({note})"
    assert f"_{note}._" in render_markdown(comparison)
    assert note in html.unescape(render_html(comparison))
    assert note in " ".join(_terminal(comparison).split())
    assert (
        "Calls spent: 800 of the fixed design's 1,000 (every case on every arm; saved 20%)" in text
    )


def _keys(doc: Any) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def test_json_validates_and_leaves_out_the_per_case_values(pair, stopped):
    fixed, seq = pair
    for comparison in (seq, stopped):
        doc = json.loads(render_json(comparison))
        jsonschema.validate(doc, SCHEMA)
        assert "values" not in _keys(doc)
        p = doc["metrics"][0]["slicings"][0]["pairs"][0]
        paired = p["overall"]["paired"]
        assert paired["anytime"] is True and paired["se"] is None
        assert paired["method"].startswith("anytime-valid betting confidence sequence")
        assert paired["low_end"] == -paired["high_end"] and paired["high_end"] > 0
        arm = doc["metrics"][0]["slicings"][0]["arms"][0]["estimate"]
        assert arm["anytime"] is True and arm["confidence"] == 0.95
        assert doc["sequential"]["column"] == "ts"
    assert doc["sequential"]["looks"][-1] == {
        "index": 6,
        "cases": 60,
        "calls": 120,
        "outcome": "fail",
        "decided": ["chat", "extraction"],
        "usd": 0.06,
    }
    plain = json.loads(render_json(fixed))
    jsonschema.validate(plain, SCHEMA)
    assert "anytime" not in _keys(plain) and plain["sequential"] is None


def test_the_schema_rejects_an_anytime_result_that_carries_its_values(stopped):
    doc = json.loads(render_json(stopped))
    doc["metrics"][0]["slicings"][0]["pairs"][0]["overall"]["paired"]["values"] = [1.0]
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))

"""What an interval rests on and why two intervals differ, in every format (issue 24).

Item 12: Newcombe's paired interval on fewer than 5 discordant pairs says "rests on k
discordant pairs" (it covers 0.885 at 100 pairs and 2% discordance, all one way; exact,
docs/calibration.md). Item 14: a paired t on case means of pass/fail repeats over fewer than
30 cases says "rests on n cases". Item 5: the standardized delta under the pairs' own mix is
the all-cases paired delta, with its interval; under another mix the report says why its
interval differs. Formats: text, terminal (rich), Markdown, HTML and JSON.
"""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from rich.console import Console

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.demo import data_path
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.html import render_html
from evaldelta.report.terminal import terminal_renderables
from tests.rows import write_rows


def _terminal(comparison: Comparison) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(terminal_renderables(comparison))
    return console.export_text()


def _formats(comparison: Comparison) -> dict[str, str]:
    return {
        "text": render_text(comparison),
        "terminal": _terminal(comparison),
        "markdown": render_markdown(comparison),
        "html": html.unescape(render_html(comparison)),  # the text as a browser shows it
    }


@pytest.fixture(scope="module")
def seed002() -> Comparison:
    with data_path("seed002.csv") as path:
        return compare([path], baseline="incumbent")


@pytest.fixture(scope="module")
def seed002_equal() -> Comparison:
    with data_path("seed002.csv") as path:
        return compare([path], baseline="incumbent", mix="equal")


def test_few_discordant_pairs_are_named_in_every_format(seed002):
    # seed 002: 4 discordant pairs in 40 (3 only candidate, 1 only incumbent)
    for name, text in _formats(seed002).items():
        assert "(rests on 4 discordant pairs)" in text, name
        assert "fewer than 5 discordant pairs" in text, name  # the note says why
    data = json.loads(render_json(seed002))
    assert any("fewer than 5 discordant pairs" in n for n in data["notes"])
    overall = data["metrics"][0]["slicings"][0]["pairs"][0]["overall"]
    assert overall["informative"] == 4 and overall["paired"]["interval"] == "newcombe"


def test_the_pairs_own_mix_takes_the_all_cases_interval(seed002):
    pair = seed002.slicing().pairs[0]
    (actual,) = pair.standardized
    o = pair.overall.main
    assert actual.same_as_overall and o is not None
    assert (actual.delta.ci.low, actual.delta.ci.high) == (o.ci.low, o.ci.high)
    data = json.loads(render_json(seed002))
    std = data["metrics"][0]["slicings"][0]["pairs"][0]["standardized"][0]
    assert std["same_as_overall"] is True
    for name, text in _formats(seed002).items():
        assert "Why this interval differs" not in text, name


def test_another_mix_says_why_its_interval_differs(seed002_equal):
    pair = seed002_equal.slicing().pairs[0]
    (equal,) = pair.standardized
    assert not equal.same_as_overall
    why = "Why this interval differs from the all-cases paired one [-6.9, +17.6]: the equal mix"
    for name, text in _formats(seed002_equal).items():
        assert why in text, name
        assert "weights the slices differently from the pairs' own shares" in text, name
    data = json.loads(render_json(seed002_equal))
    std = data["metrics"][0]["slicings"][0]["pairs"][0]["standardized"][0]
    assert std["same_as_overall"] is False and std["discordant"] == 4


def _repeats_rows(tmp_path, cases: int):  # type: ignore[no-untyped-def]
    """Pass/fail repeats, seeded: 3 attempts per case and arm, the candidate failing more."""
    rng = np.random.default_rng(2024)
    rows = []
    for i in range(cases):
        for r in range(3):
            rows.append((f"c{i}", "base", r, int(rng.random() < 0.8)))
            rows.append((f"c{i}", "cand", r, int(rng.random() < 0.5)))
    return write_rows(tmp_path / f"repeats{cases}.csv", rows, "case_id,arm,repeat,score")


def test_pass_fail_repeats_on_fewer_than_30_cases_say_so_in_every_format(tmp_path):
    small = compare([_repeats_rows(tmp_path, 20)], baseline="base")
    overall = small.slicing().pairs[0].overall
    assert overall.n_pairs == 20 and overall.informative is not None
    assert overall.informative >= 10  # only the case count is too small
    for name, text in _formats(small).items():
        assert "(rests on 20 cases)" in text, name
    data = json.loads(render_json(small))
    assert any("fewer than 30 cases" in n for n in data["notes"])
    big = compare([_repeats_rows(tmp_path, 30)], baseline="base")
    for name, text in _formats(big).items():
        assert "rests on 30 cases" not in text, name

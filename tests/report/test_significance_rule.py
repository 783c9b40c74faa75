"""One significance rule in every report (issue 11, item 8).

The headline count of regressing slices, the HTML row colours, the terminal colours and the
forest plot all follow the p column: Holm-adjusted across the slices. The expected counts
come from statsmodels' Holm adjustment of the slices' raw p-values, not from evaldelta.
"""

from __future__ import annotations

import re

import pytest
from statsmodels.stats.multitest import multipletests

from evaldelta.comparison.model import Comparison
from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.report import render_markdown, render_text
from evaldelta.report.html import render_html


@pytest.fixture(scope="module")
def seed004() -> Comparison:
    return run_scenario(next(s for s in SCENARIOS if s.key == "004"))


def _expected(comparison: Comparison) -> list[tuple[int, int, int]]:
    """Per pair: (slices, Holm-significant regressions, unadjusted intervals below zero)."""
    out = []
    for pair in comparison.slicing().pairs:
        slices = [d for d in pair.slices if d.main is not None]
        raw = [d.main.pvalue for d in slices if d.main is not None]
        reject, _, _, _ = multipletests(raw, alpha=0.05, method="holm")
        worse = sum(
            1 for d, r in zip(slices, reject, strict=True) if r and d.main and d.main.estimate < 0
        )
        below = sum(1 for d in slices if d.main is not None and d.main.ci.high < 0)
        out.append((len(pair.slices), worse, below))
    return out


def test_seed004_has_a_slice_whose_unadjusted_interval_disagrees_with_holm(seed004):
    # the case the rule is about: cascade vs always_strong, 4 intervals below zero, 3 Holm
    assert _expected(seed004)[0] == (6, 3, 4)


def test_headline_counts_holm_and_names_the_unadjusted_count(seed004):
    text, md = render_text(seed004), render_markdown(seed004)
    for k, worse, below in _expected(seed004):
        sentence = f"{worse} of {k} slice(s) regress at Holm-adjusted p < 0.05"
        if below != worse:
            verb = "has" if below == 1 else "have"
            sentence += f"; {below} {verb} an unadjusted interval below zero"
        assert sentence + "." in text
        assert sentence + "." in md
    assert "regress with an interval below zero" not in text


def test_html_colours_follow_the_p_column(seed004):
    html = render_html(seed004)
    worse_rows = re.findall(r'<tr class="worse">', html)
    assert len(worse_rows) == sum(worse for _, worse, _ in _expected(seed004))
    assert len(re.findall(r'<tr class="better">', html)) == 0


def test_terminal_colours_follow_the_p_column(seed004):
    from rich.console import Console

    from evaldelta.report.sections import Report
    from evaldelta.report.sections.pairs import contexts
    from evaldelta.report.sections.slices import SLICES, slice_table

    first = contexts(Report(seed004))[0]  # the first metric, slicing column and pair
    console = Console(record=True, width=200, color_system="truecolor", force_terminal=True)
    console.print(slice_table(SLICES.view(first)))
    red_cells = console.export_text(styles=True).count("\x1b[31m")
    assert red_cells == _expected(seed004)[0][1]


def test_wald_below_100_pairs_warns_on_stderr_and_in_the_report(run_cli):
    # issue 11, item 6: the seed's Wald figure stays available, with a warning beside it
    from evaldelta.demo import data_path

    with data_path("seed002.csv") as path:
        res = run_cli("compare", path, "--baseline", "incumbent", "--interval", "wald")
        default = run_cli("compare", path, "--baseline", "incumbent")
    assert res.code == 0 and default.code == 0
    assert "+5.0 pts  [-4.7, +14.7]" in res.out
    warning = [line for line in res.err.splitlines() if "WARNING" in line]
    assert len(warning) == 1 and "Wald paired interval on fewer than 100 pairs" in warning[0]
    assert "in 5 places" in warning[0]  # 4 slices and all cases, named or counted
    assert "Wald" not in default.err
    assert "+5.0 pts  [-6.9, +17.6]" in default.out


def test_one_unadjusted_interval_is_named_in_the_singular() -> None:
    from evaldelta.comparison import compare

    from ..conftest import REAL

    path = REAL / "swebench_pro_scale" / "swebench_pro_scale.csv"
    if not path.exists():
        pytest.skip("../shared/data/real is not beside the repo")
    result = compare([str(path)], candidates=["Claude 4.5 Haiku -- 10222025"])
    ((k, worse, below),) = _expected(result)
    assert (worse, below) == (0, 1)  # statsmodels' Holm: none; NodeBB's interval is below 0
    assert f"{worse} of {k} slice(s) regress at Holm-adjusted p < 0.05; 1 has an " in (
        render_text(result)
    )

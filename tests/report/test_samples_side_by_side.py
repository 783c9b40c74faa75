"""Every sample side by side for imported Inspect AI logs (inspect_ai #1327).

Expectations come from the fixture's own per-run table (tests/fixtures/logs/inspect/README.md,
"Per sample run in eval/": match values of model-a and model-b over three epochs).
"""

from __future__ import annotations

from evaldelta.comparison import compare
from evaldelta.report.html import render_html
from tests.conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "logs" / "inspect" / "v0.3.285" / "eval"


def test_states_and_counts_follow_the_logs():
    result = compare([LOGS], by=("metadata.category",))
    (side,) = result.samples
    assert (side.metric, side.baseline, side.candidate) == (
        "match",
        "mockllm/model-a",
        "mockllm/model-b",
    )
    assert side.paired == 12 == sum(side.counts.values())
    rows = {r.case_id: r for r in side.rows}
    assert len(rows) == 12  # under the limit: every sample is listed
    # q04: C C C in both arms; q01: model-a C C C, model-b C I C
    assert (rows["q04"].baseline_state, rows["q04"].candidate_state) == ("right", "right")
    assert (rows["q01"].baseline_state, rows["q01"].candidate_state) == ("right", "partly")
    # q08: model-a C C I, model-b I I I -> partly / wrong; q05's errored epoch is unscored
    assert (rows["q08"].baseline_state, rows["q08"].candidate_state) == ("partly", "wrong")
    assert rows["q05"].baseline == 1.0  # C, error, C: the error is left out
    assert all(r.baseline_output is not None for r in side.rows)
    # the candidate's losses come first
    first = side.rows[0]
    assert first.candidate < first.baseline


def test_the_html_report_shows_the_grid_and_the_samples():
    html = render_html(compare([LOGS], by=("task",)))
    assert "Sample by sample: mockllm/model-b vs mockllm/model-a · match" in html
    assert html.count('data-slice="') >= 12
    assert 'data-filter="samples-table-0"' in html


def test_tidy_rows_get_no_side_by_side(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("case_id,arm,score\n1,a,1\n1,b,0\n2,a,1\n2,b,1\n")
    assert compare([rows]).samples == ()

"""Notes in the reader's words (issue 24.11): no "returning nan", no argument names.

Each degenerate call below is one the statistics warn about; the warning goes through
:func:`in_reader_words` before it becomes a note of the artifact.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable

import pytest

from evaldelta import stats
from evaldelta.comparison import compare
from evaldelta.comparison._notes import in_reader_words
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.html import render_html

CODE = re.compile(r"\bnan\b|[Rr]eturning|n_baseline|n_candidate|sd = 0|Welch's t (is|needs)")

DEGENERATE: dict[str, Callable[[], object]] = {
    "welch one case": lambda: stats.welch(1.0, 0.0, 1, 1.0, 0.0, 1),
    "welch no spread": lambda: stats.welch(1.0, 0.0, 5, 1.0, 0.0, 5),
    "t on one case": lambda: stats.mean_t(1, 0.5, 0.0),
    "t on equal scores": lambda: stats.mean_t(5, 0.5, 0.0),
    "paired t on one pair": lambda: stats.paired_means([1.0], [2.0]),
    "paired t on equal deltas": lambda: stats.paired_means([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]),
    "paired 2x2 of no pair": lambda: stats.paired_proportions(0, 0, 0, 0),
    "clustered one cluster": lambda: stats.clustered_se([1.0, 0.0, 1.0], ["a", "a", "a"]),
    "wilson of nothing": lambda: stats.wilson_interval(0, 0),
    "rate of nothing": lambda: stats.proportion(0, 0),
    "difference with an empty arm": lambda: stats.newcombe_unpaired(0, 0, 1, 2),
    "fixed mix of nothing": lambda: stats.fixed_mix({"a": float("nan")}, {"a": 0.1}, {"a": 1}),
    "standardize with an empty arm": lambda: stats.standardize(
        {"x": {"a": (1, 2)}, "y": {"b": (1, 2)}}, {"a": 1, "b": 1}
    ),
    "no detectable effect": lambda: stats.mde_mcnemar(3, 0.1),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_every_degenerate_warning_reads_as_words(name: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DEGENERATE[name]()
    messages = [str(w.message) for w in caught if issubclass(w.category, stats.StatisticsWarning)]
    assert messages, f"{name}: no statistics warning (the table of degenerate calls is stale)"
    for message in messages:
        words = in_reader_words(message)
        assert not CODE.search(words), (message, words)
        assert "n/a" in words, words


def test_an_unknown_message_loses_its_code_too() -> None:
    words = in_reader_words("Some new statistic is undefined for n_baseline=0; returning nan.")
    assert words == "Some new statistic is undefined for 0 in the baseline; shown as n/a"


def test_the_reports_of_one_case_slices_say_it_in_words(write) -> None:  # type: ignore[no-untyped-def]
    # one case per arm in slice s1, every case the same in slice s2: Welch is undefined twice
    rows = ["case_id,arm,slice,score", "c1,a,s1,1", "c1,b,s1,1"]
    rows += [f"d{i},{arm},s2,1" for i in range(5) for arm in "ab"]
    result = compare([write("rows.csv", "\n".join(rows) + "\n")], baseline="a")
    assert result.notes, "the degenerate slices gave no note"
    notes = "\n".join(json.loads(render_json(result))["notes"])  # (its keys name arguments)
    for text in (render_text(result), render_markdown(result), render_html(result), notes):
        assert "no unpaired contrast (Welch interval)" in text
        assert not CODE.search(text), CODE.search(text)

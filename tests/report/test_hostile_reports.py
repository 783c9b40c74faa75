"""Hostile arm, slice and case names through every Markdown and terminal writer.

The rows are written as a CSV here and compared with ``evaldelta.comparison.compare``; the
Markdown of ``compare`` and ``gate`` must be safe to paste into a pull-request comment,
and the text, rich and gate text reports must carry no control sequence from the data.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.gating import evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report import render_markdown, render_text
from evaldelta.report.terminal import print_terminal
from evaldelta.report.verdict import render_verdict_markdown, render_verdict_text
from tests.rows import paired, write_rows

SAFE_SLICE = "safe-slice/v1.2 (prod)"
SAFE_ARM = "cand_v2 (safe)"
SLICES = [
    "x|y",
    "<img src=x onerror=alert(1)>",
    "<!-- hidden -->",
    "line\n# injected heading",
    "\x1b]0;title\x07osc\x1b[2Jcsi",
    "[s](javascript:alert(1))",
    "@team",
    "*b* _i_ ~~d~~ `c`",
    SAFE_SLICE,
]
BASELINE = "<b>base</b>|x @team"
HOSTILE_ARM = "[a](javascript:alert(2))\x1b[31m\x07"
ARMS = [BASELINE, SAFE_ARM, HOSTILE_ARM]


def hostile_comparison(path: Path) -> Comparison:
    """Write the hostile rows to ``path`` (a CSV) and compare them."""
    rows: list[tuple[object, ...]] = []
    for k, name in enumerate(SLICES):
        for i in range(12):
            case = f"{name}|<i>{i}</i>@dev\x1b[5m"
            for j, arm in enumerate(ARMS):
                rows.append((case, name, arm, (i + j * (k % 3) + (j == 2 and i < 3)) % 2))
        rows.append((f"only\x1b[1m-{k}", name, SAFE_ARM, 1))  # one case in one arm only
    write_rows(path, rows, "case_id,slice,arm,score", eol="\r\n")  # csv.writer's ending
    return compare([path], baseline=BASELINE)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Comparison:
    return hostile_comparison(tmp_path_factory.mktemp("hostile") / "rows.csv")


def _gate_markdown(result: Comparison) -> str:
    policy = parse_policy("[defaults]\nmax_regression = 0.05\nmin_cases = 10\n", "gate.toml")
    return render_verdict_markdown(evaluate(policy, result))


def _cells(row: str) -> int:
    """Cells in a table row: its unescaped pipes (a backslash escapes the next character)."""
    pipes, escaped = 0, False
    for ch in row:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            pipes += 1
    return pipes - 1


OUR_HEADINGS = ("### evaldelta: ", "### evaldelta gate: ", "### evaldelta plan: ")


def _check_markdown(md: str, *, headings: int) -> None:
    ours = ("<details><summary>", "</summary>", "</details>")
    stripped = md
    for tag in ours:
        stripped = stripped.replace(tag, "")
    assert "<" not in stripped  # no raw HTML from the data (only our own <details>)
    assert "](" not in md and "](javascript:" not in md
    assert re.search(r"(?<![\w@])@[A-Za-z0-9]", md) is None  # no @mention GitHub would link
    assert re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", md) is None
    lines = md.splitlines()
    assert [x for x in lines if x.startswith("#")] == [
        x for x in lines if x.startswith(OUR_HEADINGS)
    ]
    assert sum(x.startswith(OUR_HEADINGS) for x in lines) == headings
    columns = None
    for line in lines:
        if not line.startswith("|"):
            columns = None
            continue
        if re.fullmatch(r"\|(-+:?\|)+", line):  # the delimiter row fixes the column count
            columns = line.count("|") - 1
        if columns is not None:
            assert _cells(line) == columns, line
    tables = [x for x in lines if x.startswith("|")]
    headers = [i for i, x in enumerate(lines) if re.fullmatch(r"\|(-+:?\|)+", x)]
    for i in headers:  # the header row above each delimiter has the same count
        assert _cells(lines[i - 1]) == lines[i].count("|") - 1
    assert tables


def test_compare_markdown_is_safe_to_paste(hostile: Comparison) -> None:
    md = render_markdown(hostile)
    _check_markdown(md, headings=len(hostile.candidates))
    # every hostile slice is named (the one-arm-only list covers them all), escaped
    assert "x\\|y" in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    assert "line \\# injected heading" in md and "@\u200dteam" in md
    assert "\\[s\\]\\(javascript:alert(1))" in md and "&lt;!-- hidden --&gt;" in md
    assert "osccsi" in md  # the OSC title and the screen clear are gone, the text kept
    # safe names round-trip unchanged (the candidate in a code span)
    assert SAFE_SLICE in md and f"`{SAFE_ARM}`" in md


def test_gate_markdown_is_safe_to_paste(hostile: Comparison) -> None:
    md = _gate_markdown(hostile)
    _check_markdown(md, headings=1)
    assert md.count("<details><summary>") == 1
    assert SAFE_SLICE in md


def _terminal(result: Comparison, *, force: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=force, no_color=True, width=200)
    print_terminal(result, console)
    return buf.getvalue()


DATA_CONTROLS = ("\x1b]", "\x07", "\x1b[2J", "\x1b[31m", "\x1b[5m", "\r")


def test_text_reports_carry_no_control_sequence(hostile: Comparison) -> None:
    policy = parse_policy("[defaults]\nmax_regression = 0.05\n", "gate.toml")
    for out in (render_text(hostile), render_verdict_text(evaluate(policy, hostile))):
        assert re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", out) is None
        assert "line # injected heading" in out  # the newline became a space
        assert SAFE_SLICE in out and "[a](javascript:alert(2))" in out


def test_rich_terminal_carries_no_control_sequence_from_data(hostile: Comparison) -> None:
    plain = _terminal(hostile, force=False)  # rich writes no codes of its own here
    assert re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", plain) is None
    assert "osccsi" in plain and "baseline <b>base</b>|x @team" in plain
    styled = _terminal(hostile, force=True)  # rich's own bold is fine; the data's codes not
    for seq in DATA_CONTROLS:
        assert seq not in styled, repr(seq)


def test_the_hostile_rows_load_as_written(hostile: Comparison) -> None:
    # the fixture really carries the payloads (a loader that cleaned them would make the
    # checks above vacuous)
    assert hostile.baseline == BASELINE
    assert any("\x1b[31m" in c for c in hostile.candidates)
    slices = set(hostile.slicing().slices)
    assert "line\n# injected heading" in slices and "x|y" in slices


def test_markdown_cell_counter_counts_escapes() -> None:
    assert _cells("| a | b\\|c | d |") == 3
    assert _cells("| a\\\\| b |") == 2


def test_a_safe_slice_name_round_trips_in_a_table_cell(tmp_path: Path) -> None:
    # with a second slice beside it: one slice alone has no row of its own (issue 24.1)
    rows = paired([(i % 2, 1) for i in range(12)], arms=("a", "b"), slice=SAFE_SLICE)
    rows += paired([(1, 1)] * 12, arms=("a", "b"), slice="other", case="d{i}")
    path = write_rows(tmp_path / "plain.csv", rows, "case_id,slice,arm,score")
    md = render_markdown(compare([path], baseline="a"))
    _check_markdown(md, headings=1)
    assert f"| {SAFE_SLICE} |" in md


def test_plan_reports_escape_the_pilot_names(hostile: Comparison) -> None:
    from evaldelta.planning.plan import plan_from_comparison
    from evaldelta.report.plan import render_plan_markdown, render_plan_text

    plan = plan_from_comparison(hostile, effect=0.1)
    text = render_plan_text(plan)
    assert re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", text) is None
    assert "line # injected heading" in text and "osccsi" in text
    md = render_plan_markdown(plan)
    _check_markdown(md, headings=len(plan.pairs))
    assert f"`{SAFE_ARM}` vs" in md and f"| {SAFE_SLICE} |" in md


def test_three_arm_markdown_escapes_arm_and_slice_names(tmp_path: Path) -> None:
    import pandas as pd

    from evaldelta.demo import data_path

    with data_path("seed004.csv") as source:
        frame = pd.read_csv(source)
    arms = {"always_cheap": "@cheap|<i>", "cascade": "cascade", "always_strong": "[s](x:y)"}
    frame["arm"] = frame["arm"].map(arms)
    frame["slice"] = frame["slice"].replace({"extraction": "<b>extraction</b>\n# x"})
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    result = compare([path], baseline=arms["always_strong"], three_arm=tuple(arms.values()))
    (line,) = [x for x in render_markdown(result).splitlines() if "**Three arms**" in x]
    assert "<" not in line and "](" not in line and "@c" not in line and "\\|" in line
    assert "(@\u200dcheap\\|&lt;i&gt; → `cascade` → \\[s\\]\\(x:y)): " in line
    assert "Largest gap: &lt;b&gt;extraction&lt;/b&gt; \\# x (" in line

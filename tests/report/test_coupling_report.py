"""The coupling line: shown for a pair whose run asked for --couple, in every format, and
nothing at all for a pair of runs made without it (their reports do not change)."""

from __future__ import annotations

import io

from rich.console import Console

from evaldelta.comparison import Options, build
from evaldelta.report import render_markdown, render_text
from evaldelta.report.html import render_html
from evaldelta.report.terminal import print_terminal
from tests.comparison.test_coupling import COUPLED, _values, evidence


def _comparison(pins):  # type: ignore[no-untyped-def]
    return build(evidence(_values(0), pins), Options())


def test_coupled_pair_says_so_in_every_format() -> None:
    result = _comparison(COUPLED)
    c = result.pair("v2").coupling
    assert c is not None
    text = render_text(result)
    line = next(x for x in text.splitlines() if x.startswith("Arms coupled by seed"))
    assert line.startswith("Arms coupled by seed (run seed 7): per-case correlation ")
    assert f"correlation {c.overall.correlation:.2f};" in line
    assert f"paired SE {c.overall.paired_se:.3f} vs {c.overall.independent_se:.3f} " in line
    assert (
        f"for independent draws: {round(c.overall.variance_reduction * 100)}% less variance" in line
    )
    assert "  by slice: easy r " in text and "; hard r " in text
    assert "- Arms coupled by seed (run seed 7): per-case correlation" in render_markdown(result)
    assert "Arms coupled by seed (run seed 7)" in render_html(result)
    console = Console(record=True, width=300, file=io.StringIO())
    print_terminal(result, console)
    assert "Arms coupled by seed" in console.export_text()


def test_arm_that_took_no_seed_is_flagged() -> None:
    pins = {"v1": COUPLED["v1"], "v2": {**COUPLED["v2"], "couple": False}}
    text = render_text(_comparison(pins))
    assert "! --couple was asked (run seed 7), but v2 took no seed" in text
    assert "Arms paired by case, not coupled: per-case correlation" in text
    assert "Arms coupled by seed" not in text


def test_uncoupled_runs_show_nothing() -> None:
    result = _comparison({})
    for rendered in (render_text(result), render_markdown(result), render_html(result)):
        assert "coupled" not in rendered.lower() and "correlation" not in rendered

"""The HTML report's layout at 1400 x 900 in headless Chromium.

No element may be wider than the window (no horizontal scrollbar), and the forest plot
spans the content column (at least 80% of its width). Checked on seed 004's demo report
(a plan table, a gate verdict) and on the SWE-bench Verified real data (12 slices).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaldelta.comparison import compare
from evaldelta.demo.scenarios import SCENARIOS, run_scenario, write_demo_html
from evaldelta.report.html import render_html
from tests.conftest import REAL

from .test_html_browser import CHROMIUM, Browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

WIDTH, HEIGHT = 1400, 900

MEASURE = """(() => {
  const doc = document.documentElement;
  const column = document.querySelector('section.pair').getBoundingClientRect().width;
  const forests = [...document.querySelectorAll('.plot.forest svg')]
    .map(s => s.getBoundingClientRect().width);
  const wide = [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 0.5)
    .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
  return {scroll: doc.scrollWidth, client: doc.clientWidth, column, forests,
          wide: wide.slice(0, 5), plans: document.querySelectorAll('table.plan').length};
})()"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(
        prefix="evaldelta-chromium-", ignore_cleanup_errors=True
    ) as user_dir:
        b = Browser(Path(user_dir))
        try:
            b.call(
                "Emulation.setDeviceMetricsOverride",
                session=True,
                width=WIDTH,
                height=HEIGHT,
                deviceScaleFactor=1,
                mobile=False,
            )
            yield b
        finally:
            b.close()


def _measure(browser: Browser, page: Path) -> dict[str, Any]:
    browser.load(page)
    assert browser.problems(page) == []
    assert browser.eval("window.innerWidth") == WIDTH
    result: dict[str, Any] = browser.eval(MEASURE)
    return result


def _check(m: dict[str, Any]) -> None:
    assert m["scroll"] <= WIDTH, m  # no horizontal scrollbar
    assert m["wide"] == [], m  # and no element reaches past the window
    assert m["forests"], m
    for width in m["forests"]:
        assert width >= 0.8 * m["column"], m


def test_seed_004_report_fits_1400px(browser: Browser, tmp_path: Path) -> None:
    scenario = next(s for s in SCENARIOS if s.key == "004")
    m = _measure(browser, write_demo_html(scenario, run_scenario(scenario), tmp_path))
    assert m["plans"] >= 1  # the plan table that used to overflow is on the page
    _check(m)


@pytest.mark.skipif(not REAL.exists(), reason="../shared/data/real is not beside the repo")
def test_swebench_verified_report_fits_1400px(browser: Browser, tmp_path: Path) -> None:
    name = "swebench_verified_bash_only"
    result = compare(
        [REAL / name / f"{name}.csv"],
        baseline="Claude 4 Sonnet (20250514)",
        candidates=["Claude 4.5 Sonnet (20250929)"],
    )
    page = tmp_path / "verified.html"
    page.write_text(render_html(result), encoding="utf-8")
    m = _measure(browser, page)
    assert m["plans"] >= 1
    _check(m)

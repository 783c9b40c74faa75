"""Adding a report section is one module and one line (issue 25, item 2).

A toy section, defined here, is registered in ``report/sections`` with one line (the fixture
restores the lists after the test) and shows in the text, terminal, Markdown and HTML of a
real comparison; a toy per-pair section shows once per compared pair.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from markupsafe import escape
from rich.console import Console, RenderableType
from rich.text import Text

import evaldelta
from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.report import render_markdown, render_text, sections
from evaldelta.report.html import render_html
from evaldelta.report.sections import PairContext, PairSection, Report, Section
from evaldelta.report.sections.footer import FOOTER
from evaldelta.report.terminal import print_terminal

SEED = Path(evaldelta.__file__).parent / "data" / "seed001.csv"


@dataclass(frozen=True)
class ToyView:
    arms: int
    baseline: str


class Toy(Section[ToyView]):
    """Counts the compared arms: one view, four renderings."""

    name = "toy"

    def view(self, report: Report) -> ToyView:
        c = report.comparison
        return ToyView(len(c.candidates) + 1, c.baseline)

    def text(self, view: ToyView) -> list[str]:
        return [f"Toy: {view.arms} arms, baseline {view.baseline}", ""]

    def terminal(self, view: ToyView) -> list[RenderableType]:
        return [Text(f"Toy: {view.arms} arms, baseline {view.baseline}")]

    def markdown(self, view: ToyView) -> list[str]:
        return [f"**Toy:** {view.arms} arms, baseline {view.baseline}", ""]

    def html(self, view: ToyView) -> str:
        line = f"Toy: {view.arms} arms, baseline {escape(view.baseline)}"
        return f'<section id="toy"><p>{line}</p></section>\n'


class ToyPair(PairSection[str]):
    """Names each pair, in the text report only (the other formats get nothing)."""

    name = "toy_pair"
    formats = frozenset(("text",))

    def view(self, pair: PairContext) -> str:
        return f"Toy pair: {pair.pair.candidate} vs {pair.pair.baseline}"

    def text(self, view: str) -> list[str]:
        return [view]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The section lists, copied: what a test registers is gone after it."""
    monkeypatch.setattr(sections, "SECTIONS", list(sections.SECTIONS))
    monkeypatch.setattr(sections, "PAIR_SECTIONS", list(sections.PAIR_SECTIONS))
    yield


@pytest.fixture(scope="module")
def seed001() -> Comparison:
    return compare([str(SEED)], baseline="A")


def _terminal(comparison: Comparison) -> str:
    out = io.StringIO()
    print_terminal(comparison, Console(file=out, width=160, color_system=None))
    return out.getvalue()


def test_a_toy_section_shows_in_every_format(registry: None, seed001: Comparison) -> None:
    sections.SECTIONS.insert(sections.SECTIONS.index(FOOTER), Toy())  # the one line

    assert "Toy: 2 arms, baseline A\n" in render_text(seed001)
    assert "Toy: 2 arms, baseline A\n" in _terminal(seed001)
    assert "**Toy:** 2 arms, baseline A\n" in render_markdown(seed001)
    html = render_html(seed001)
    toy = html.index('<section id="toy"><p>Toy: 2 arms, baseline A</p></section>')
    assert html.index('<section class="pair"') < toy < html.index("<footer>")


def test_a_toy_pair_section_shows_once_per_pair(registry: None, seed001: Comparison) -> None:
    sections.PAIR_SECTIONS.append(ToyPair())  # the one line

    text = render_text(seed001)
    pairs = sum(len(s.pairs) for m in seed001.metrics for s in m.slicings)
    assert text.count("Toy pair: B vs A") == pairs
    assert "Toy pair" not in render_markdown(seed001)


def test_the_registry_is_restored(seed001: Comparison) -> None:
    assert not any(isinstance(s, Toy) for s in sections.SECTIONS)
    assert "Toy" not in render_text(seed001)

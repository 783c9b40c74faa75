"""The compared pairs: walked once, here, and every per-pair section rendered inside.

Per metric, slicing column and candidate, in the comparison's order, one
:class:`PairContext`; each format then renders ``PAIR_SECTIONS`` (``sections/__init__.py``)
for each context. The Markdown comment shows the first slicing column only (a PR comment
stays short); the HTML wraps each pair in its own ``<section>``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from evaldelta.comparison.ordering import SliceOrder, ordered_slices
from evaldelta.report._facts import one_slice
from evaldelta.report._format import fmt_pct
from evaldelta.report._sequential import interval_head
from evaldelta.report.sections._base import Format, Report, Section

if TYPE_CHECKING:
    from rich.console import RenderableType

    from evaldelta.comparison.model import (
        ArmSlice,
        Comparison,
        MetricResult,
        PairComparison,
        SliceDelta,
    )
    from evaldelta.gating import Verdict
    from evaldelta.report._html_views import PairView

__all__ = ["PAIRS", "PairContext", "contexts"]


@dataclass(frozen=True)
class PairContext:
    """One compared pair, and what every per-pair section reads from it."""

    report: Report
    metric: MetricResult
    by: str
    arms: tuple[ArmSlice, ...]
    pair: PairComparison
    index: int  # the pair's number in the report (HTML ids, PNG names)
    first_slicing: bool  # under the metric's first slicing column

    @property
    def comparison(self) -> Comparison:
        """The whole comparison the pair is part of."""
        return self.report.comparison

    @property
    def verdict(self) -> Verdict | None:
        """The gate's verdict, when a policy ran."""
        return self.report.verdict

    @property
    def binary(self) -> bool:
        """A pass/fail metric (rates in points), not a score."""
        return self.metric.kind == "binary"

    @property
    def single(self) -> bool:
        """Binary, one attempt per case (counts, McNemar) rather than repeats or scores."""
        return self.binary and not self.metric.repeated

    @property
    def conf(self) -> str:
        """The confidence level as the reports print it (``95%``)."""
        return fmt_pct(self.comparison.confidence)

    @property
    def sequential(self) -> bool:
        """Every interval is an anytime-valid confidence sequence (``report/_sequential.py``)."""
        return self.comparison.sequential is not None

    @property
    def interval_head(self) -> str:
        """The interval column's head: ``95% interval``, or ``anytime 95% CS`` (sequential)."""
        return interval_head(self.comparison)

    @property
    def alpha(self) -> float:
        """One minus the confidence level."""
        return 1.0 - self.comparison.confidence

    @property
    def only(self) -> SliceDelta | None:
        """The one slice, when there is one (its row would repeat the all-cases row)."""
        return one_slice(self.pair)

    @functools.cached_property
    def order(self) -> SliceOrder:
        """The slices in the one order every format's table follows."""
        return ordered_slices(self.pair, self.arms)

    @functools.cached_property
    def html(self) -> PairView:
        """The HTML's formatted numbers for this pair (built once, for all its pieces)."""
        from evaldelta.report._html_views import pair_view

        c = self.comparison
        return pair_view(c, self.metric, self.by, self.arms, self.pair, self.index, self.verdict)


def contexts(report: Report) -> tuple[PairContext, ...]:
    """Every (metric, slicing column, pair) in report order: the one pair walk."""
    out: list[PairContext] = []
    for metric in report.comparison.metrics:
        for k, slicing in enumerate(metric.slicings):
            for pair in slicing.pairs:
                ctx = PairContext(report, metric, slicing.by, slicing.arms, pair, len(out), k == 0)
                out.append(ctx)
    return tuple(out)


@dataclass(frozen=True)
class PairsView:
    contexts: tuple[PairContext, ...]


class _Pairs(Section[PairsView]):
    name = "pairs"

    def view(self, report: Report) -> PairsView:
        return PairsView(contexts(report))

    def _each(self, fmt: Format, ctx: PairContext) -> list[Any]:
        from evaldelta.report import sections

        out: list[Any] = []
        for s in sections.PAIR_SECTIONS:
            if fmt in s.formats:
                out.extend(s.render(fmt, s.view(ctx)) or [])
        return out

    def text(self, view: PairsView) -> list[str]:
        return [x for ctx in view.contexts for x in [*self._each("text", ctx), ""]]

    def terminal(self, view: PairsView) -> list[RenderableType]:
        return [x for ctx in view.contexts for x in [*self._each("terminal", ctx), Text("")]]

    def markdown(self, view: PairsView) -> list[str]:
        shown = [ctx for ctx in view.contexts if ctx.first_slicing]
        return [x for ctx in shown for x in [*self._each("markdown", ctx), ""]]

    def html(self, view: PairsView) -> str:
        from evaldelta.report import sections

        out = []
        for ctx in view.contexts:
            out.append(f'<section class="pair" id="pair-{ctx.index}">\n')
            for s in sections.PAIR_SECTIONS:
                if "html" in s.formats:
                    out.append(s.render("html", s.view(ctx)) or "")
            out.append("</section>\n")
        return "".join(out) + "\n"


PAIRS = _Pairs()

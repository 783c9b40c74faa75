"""Plots for the HTML report and for slides, drawn with matplotlib (SVG inline, PNG on request).

Two figures per pair (baseline against one candidate), and a third for graded or repeated data:

- the **forest plot**: each slice's paired delta with its interval, worst first, the slice's
  case count and traffic weight beside it, the zero line and the gate margin drawn;
- the **rates plot**: each arm's pooled rate (its own mix) beside its fixed-mix
  (standardized) rates, with intervals;
- the **share sweep** (issue 13): the standardized delta and its interval band as one
  slice's share of the mix sweeps from 0 to 100%, today's share and the break-even marked;
- the **delta histogram** (graded or repeated paired data): the binned per-case deltas of all
  cases, and of the worst slices as small multiples, the exact zero deltas as their own grey
  bar at zero (capped, with its count written on it, when it would flatten the other bars).

SVG output is deterministic (fixed ``svg.hashsalt``, no date metadata) and keeps text as text
(``svg.fonttype = "none"``). Every slice row of the forest plot is one SVG group with the id
``forest-<k>-mark-<i>`` (``<k>`` numbers the plot within the page), so a browser test can
count one mark per slice. Slice and arm names are data: matplotlib writes them as escaped XML
text, and ``$`` is escaped so a name is never parsed as mathtext.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from evaldelta.report._format import fmt_pct

if TYPE_CHECKING:
    from evaldelta.report._mixes import SweepPanel

__all__ = [
    "ForestRow",
    "HistogramPanel",
    "RateRow",
    "figure_png",
    "figure_svg",
    "forest_clipped",
    "forest_figure",
    "forest_limits",
    "histogram_figure",
    "plain_label",
    "rates_figure",
    "sweep_figure",
]

BASELINE_COLOUR = "#5b6770"
CANDIDATE_COLOUR = "#1f6fb2"
WORSE_COLOUR = "#c0392b"
BETTER_COLOUR = "#1e8449"
NEUTRAL_COLOUR = "#34495e"
MARGIN_COLOUR = "#d35400"

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "evaldelta",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "text.usetex": False,
}


@dataclass(frozen=True)
class ForestRow:
    """One slice of the forest plot, in display units (points for rates, score units else)."""

    label: str
    estimate: float
    low: float
    high: float
    n: int
    traffic: float | None
    margin: float | None = None  # the gate's bound on the delta (e.g. -15), when a policy ran
    tone: str = "unclear"  # "worse" | "better" | "unclear": report._facts.direction's rule
    evidence: bool = True  # enough pairs to set the axis (comparison.ordering.MIN_RANKED_N)


@dataclass(frozen=True)
class RateRow:
    """One arm's rate under one mix (pooled or standardized), with its interval."""

    mix: str
    arm: str
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class HistogramPanel:
    """One panel of the delta histogram, in display units (points for rates)."""

    label: str
    n: int
    zero: int
    edges: tuple[float, ...]
    counts: tuple[int, ...]


def plain_label(text: str) -> str:
    """A data label as matplotlib shows it: no control bytes, and out of mathtext (``$``)."""
    from evaldelta.report._escape import strip_controls

    return strip_controls(text).replace("$", r"\$")


@contextmanager
def _style() -> Iterator[None]:
    with plt.rc_context(_RC):  # type: ignore[arg-type]
        yield


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


# The forest plot spans the report's content column (1272 px at most): 12.8 in is 1229 px at
# the browser's 96 px per inch; the HTML scales it to the column from there. The slice
# labels get the room their longest label needs (DejaVu Sans at 9 pt averages about 0.075 in
# a character), at most a third of the width; longer labels are shortened with an ellipsis.
FOREST_WIDTH = 12.8
FOREST_SIDE = 1.3  # inches right of the axes for "n=... · traffic"
_CHAR_INCHES = 0.075
_MAX_LABEL = int(FOREST_WIDTH / 3 / _CHAR_INCHES)


def _short(label: str) -> str:
    return label if len(label) <= _MAX_LABEL else label[: _MAX_LABEL - 1] + "…"


def _label_room(labels: Sequence[str]) -> float:
    longest = max((len(label) for label in labels), default=0)
    return min(max(1.0, 0.25 + _CHAR_INCHES * longest), FOREST_WIDTH / 3 + 0.25)


def forest_limits(
    rows: Sequence[ForestRow], overall: ForestRow | None = None
) -> tuple[float, float] | None:
    """The forest plot's x range: the intervals of the slices with evidence, and all cases.

    A slice of one or two pairs has an interval of +-80 points (SWE-bench Verified) that
    would squeeze the informative ones into a sliver (issue 24.9): so the axis is set by the
    rows marked ``evidence`` (all rows when none is), all cases, zero and the gate margins;
    intervals beyond it are cut at the edge and marked (:func:`forest_clipped`).
    """
    finite = [r for r in rows if _finite(r.low, r.high)]
    base = [r for r in finite if r.evidence] or finite
    xs = [v for r in base for v in (r.low, r.high)]
    if overall is not None and _finite(overall.low, overall.high):
        xs += [overall.low, overall.high]
    xs += [r.margin for r in rows if r.margin is not None and math.isfinite(r.margin)]
    if not xs:
        return None
    lo, hi = min([*xs, 0.0]), max([*xs, 0.0])
    pad = (hi - lo) * 0.06 or 1.0
    return lo - pad, hi + pad


def forest_clipped(rows: Sequence[ForestRow], overall: ForestRow | None = None) -> list[str]:
    """The labels of the rows whose interval runs past :func:`forest_limits`."""
    limits = forest_limits(rows, overall)
    if limits is None:
        return []
    lo, hi = limits
    return [r.label for r in rows if _finite(r.low, r.high) and (r.low < lo or r.high > hi)]


def _forest_row(
    ax: Any, row: ForestRow, y: int, ids: tuple[int, int], limits: tuple[float, float]
) -> None:
    """One slice's interval and point, cut at the axis with an arrowhead where it runs past.

    SVG ids ``forest-<k>-mark-<i>`` (the interval), ``-point-<i>`` and ``-clip-<i>``.
    """
    k, i = ids
    colour = {"worse": WORSE_COLOUR, "better": BETTER_COLOUR}.get(row.tone, NEUTRAL_COLOUR)
    lo, hi = limits
    left, right = max(row.low, lo), min(row.high, hi)
    (line,) = ax.plot([left, right], [y, y], color=colour, lw=1.6)
    line.set_gid(f"forest-{k}-mark-{i}")
    if lo <= row.estimate <= hi:
        (point,) = ax.plot([row.estimate], [y], "o", color=colour, ms=4.5)
        point.set_gid(f"forest-{k}-point-{i}")
    for edge, cut, marker in ((lo, row.low < lo, "<"), (hi, row.high > hi, ">")):
        if cut:
            (arrow,) = ax.plot([edge], [y], marker, color=colour, ms=6)
            arrow.set_gid(f"forest-{k}-clip-{i}")


def forest_figure(
    rows: Sequence[ForestRow],
    *,
    unit: str,
    plot_id: int = 0,
    overall: ForestRow | None = None,
) -> Figure:
    """The forest plot of per-slice deltas, rows in the given order (worst first, top down).

    ``overall`` (all cases) is drawn below the slices as a diamond; it is not a slice mark.
    Each row's gate margin, when given, is a short orange tick; when every row shares one
    margin it is one dashed line across the plot instead.
    """
    with _style():
        n_rows = len(rows) + (1 if overall is not None else 0)
        height = 1.0 + 0.28 * max(n_rows, 1)
        fig = Figure(figsize=(FOREST_WIDTH, height))
        names = [_short(r.label) for r in rows] + ([_short(overall.label)] if overall else [])
        left = _label_room(names)
        width = FOREST_WIDTH - left - FOREST_SIDE
        ax = fig.add_axes(
            (left / FOREST_WIDTH, 0.7 / height, width / FOREST_WIDTH, 1 - 1.0 / height)
        )
        labels: list[str] = []
        limits = forest_limits(rows, overall) or (-1.0, 1.0)
        for i, row in enumerate(rows):
            y = n_rows - 1 - i
            labels.append(_short(row.label))
            if _finite(row.estimate, row.low, row.high):
                _forest_row(ax, row, y, (plot_id, i), limits)
            else:
                (line,) = ax.plot([0], [y], "x", color="#999999", ms=4)
                line.set_gid(f"forest-{plot_id}-mark-{i}")
            side = f"n={row.n}" + (f" · {fmt_pct(row.traffic)}" if row.traffic is not None else "")
            ax.text(1.02, y, side, transform=ax.get_yaxis_transform(), va="center", fontsize=8)
        if overall is not None and _finite(overall.estimate, overall.low, overall.high):
            ax.plot([overall.low, overall.high], [0, 0], color="black", lw=2.2)
            ax.plot([overall.estimate], [0], "D", color="black", ms=5.5)
            labels.append(_short(overall.label))
            ax.text(
                1.02, 0, f"n={overall.n}", transform=ax.get_yaxis_transform(), va="center",
                fontsize=8,
            )  # fmt: skip
        elif overall is not None:
            labels.append(_short(overall.label))
        ax.set_yticks(range(n_rows - 1, -1, -1), [plain_label(lab) for lab in labels])
        ax.axvline(0, color="black", lw=0.8)
        margins = {r.margin for r in rows if r.margin is not None and math.isfinite(r.margin)}
        if len(margins) == 1:
            m = margins.pop()
            ax.axvline(m, color=MARGIN_COLOUR, lw=1, ls="--", label=f"gate margin {m:+g}")
            ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=7, frameon=False)
        else:
            for i, row in enumerate(rows):
                if row.margin is not None and math.isfinite(row.margin):
                    y = n_rows - 1 - i
                    ax.plot([row.margin] * 2, [y - 0.35, y + 0.35], color=MARGIN_COLOUR, lw=1.2)
        ax.set_xlim(*limits)
        ax.set_ylim(-0.7, n_rows - 0.3)
        ax.set_xlabel(f"candidate - baseline ({unit})")
        ax.grid(axis="x", color="#e5e5e5", lw=0.6)
        ax.set_axisbelow(True)
        return fig


def rates_figure(rows: Sequence[RateRow], *, arms: Sequence[str]) -> Figure:
    """Each arm's rate under each mix (pooled first), with intervals, one colour per arm."""
    with _style():
        mixes = list(dict.fromkeys(r.mix for r in rows))
        height = 1.1 + 0.55 * max(len(mixes), 1)
        fig = Figure(figsize=(7.2, height))
        ax = fig.add_axes((0.30, 0.7 / height, 0.62, 1 - 1.1 / height))
        palette = [BASELINE_COLOUR, CANDIDATE_COLOUR, "#8e44ad", "#16a085", "#b7950b"]
        offsets = _offsets(len(arms))
        for k, arm in enumerate(arms):
            colour = palette[k % len(palette)]
            first = True
            for row in rows:
                if row.arm != arm or not _finite(row.estimate):
                    continue
                y = len(mixes) - 1 - mixes.index(row.mix) + offsets[k]
                if _finite(row.low, row.high):
                    ax.plot([row.low, row.high], [y, y], color=colour, lw=1.6)
                ax.plot(
                    [row.estimate], [y], "o", color=colour, ms=4.5,
                    label=plain_label(arm) if first else None,
                )  # fmt: skip
                first = False
        ax.set_yticks(range(len(mixes) - 1, -1, -1), [plain_label(m) for m in mixes])
        ax.set_ylim(-0.6, len(mixes) - 0.4)
        ax.set_xlabel("rate or mean (interval)")
        ax.grid(axis="x", color="#e5e5e5", lw=0.6)
        fig.legend(loc="upper center", ncol=len(arms), fontsize=8, frameon=False)
        return fig


ZERO_COLOUR = "#95a5a6"
ZERO_CAP = 3.0  # the zero bar is capped at this many times the tallest bin (count written)


def _histogram_panel(ax: Any, panel: HistogramPanel, *, small: bool) -> None:
    edges, counts = panel.edges, panel.counts
    tallest = max(counts, default=0)
    lo = min(edges[0], 0.0) if edges else -1.0
    hi = max(edges[-1], 0.0) if edges else 1.0
    ax.axvline(0, color="#bbbbbb", lw=0.6, ls=":", zorder=0)
    if counts:
        ax.stairs(counts, edges, fill=True, color=CANDIDATE_COLOUR, alpha=0.85, lw=0, zorder=1)
    cap = tallest * ZERO_CAP if tallest else panel.zero
    shown = min(panel.zero, cap)
    if panel.zero:
        width = (hi - lo) / 45 or 0.05
        ax.bar([0.0], [shown], width=width, color=ZERO_COLOUR, lw=0, zorder=2)
        label = f"{panel.zero:,} at 0" + (" (capped)" if shown < panel.zero else "")
        ax.text(0.0, shown, label, ha="center", va="bottom", fontsize=6 if small else 7)
    pad = (hi - lo) * 0.04
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(0, max(tallest, shown, 1) * 1.22)
    ax.set_title(
        plain_label(f"{panel.label} (n={panel.n:,})"), fontsize=7 if small else 8, loc="left"
    )
    ax.tick_params(labelsize=6 if small else 7)
    ax.xaxis.set_major_locator(MaxNLocator(3 if small else 8))
    ax.yaxis.set_major_locator(MaxNLocator(2 if small else 4, integer=True))


def histogram_figure(
    overall: HistogramPanel, slices: Sequence[HistogramPanel], *, unit: str
) -> Figure:
    """All cases on top, then one small panel per given slice (four to a row)."""
    with _style():
        cols = 4
        rows = math.ceil(len(slices) / cols)
        height = 2.15 + 1.35 * rows  # inches: 0.3 title, 1.1 plot, 0.75 label gap, then rows
        fig = Figure(figsize=(7.2, height))
        top = fig.add_axes((0.08, 1 - 1.4 / height, 0.88, 1.1 / height))
        _histogram_panel(top, overall, small=False)
        top.set_xlabel(f"per-case delta, candidate - baseline ({unit})", fontsize=7)
        top.set_ylabel("cases", fontsize=7)
        for i, panel in enumerate(slices):
            r, c = divmod(i, cols)
            bottom = 1 - (2.15 + 1.35 * r + 0.95) / height
            ax = fig.add_axes((0.08 + c * 0.235, bottom, 0.19, 0.85 / height))
            _histogram_panel(ax, panel, small=True)
        return fig


def _offsets(k: int) -> list[float]:
    if k <= 1:
        return [0.0]
    step = 0.5 / (k - 1)
    return [0.25 - i * step for i in range(k)]


_XML_HEAD = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_INDENT = re.compile(r"\n[ \t]+")


def figure_svg(fig: Figure, *, title: str | None = None) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog, no doctype, no date)."""
    with _style():
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = _XML_HEAD.sub("", buf.getvalue(), count=1)
    svg = _INDENT.sub("\n", svg)  # matplotlib indents every element; the page need not
    svg = svg.replace("<svg ", '<svg role="img" ', 1)
    if title is not None:
        from markupsafe import escape

        head = re.search(r"<svg[^>]*>", svg)
        if head is not None:
            cut = head.end()
            from evaldelta.report._escape import strip_controls

            svg = f"{svg[:cut]}<title>{escape(strip_controls(title))}</title>{svg[cut:]}"
    return svg


def figure_png(fig: Figure, path: Path, *, dpi: int = 160) -> Path:
    """Write the figure as a PNG (for slides); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _style():
        fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
    return path


SWEEP_COLOUR = "#8e44ad"


def sweep_figure(panels: Sequence[SweepPanel], *, unit: str, plot_id: int = 0) -> Figure:
    """The standardized delta and its interval band as one slice's share sweeps 0 to 100%.

    One panel per slice (``panels`` from :func:`evaldelta.report._mixes.sweep_panels`, in
    display units): today's share is a dotted grey line (SVG id
    ``sweep-<k>-today-<i>``) with a dot on the curve, the break-even share, where the delta
    changes sign, a purple line (``sweep-<k>-flip-<i>``); zero and the gate's margin (when a
    standardized rule ran) are horizontal lines.
    """
    with _style():
        cols = max(1, min(len(panels), 4))
        fig = Figure(figsize=(FOREST_WIDTH, 2.9))
        width = 0.92 / cols
        for i, p in enumerate(panels):
            ax = fig.add_axes((0.05 + i * width, 0.2, width - 0.05, 0.62))
            xs = [s * 100 for s, _, _, _ in p.curve]
            ax.fill_between(
                xs, [lo for _, _, lo, _ in p.curve], [hi for _, _, _, hi in p.curve],
                color=CANDIDATE_COLOUR, alpha=0.18, lw=0, label="interval",
            )  # fmt: skip
            ax.plot(xs, [d for _, d, _, _ in p.curve], color=CANDIDATE_COLOUR, lw=1.6)
            ax.axhline(0, color="black", lw=0.8)
            if p.margin is not None and math.isfinite(p.margin):
                line = ax.axhline(p.margin, color=MARGIN_COLOUR, lw=1, ls="--")
                line.set_gid(f"sweep-{plot_id}-margin-{i}")
                ax.text(
                    99, p.margin, f"gate margin {p.margin:+g} ", ha="right", va="bottom",
                    fontsize=7, color=MARGIN_COLOUR,
                )  # fmt: skip
            today = ax.axvline(p.today * 100, color=BASELINE_COLOUR, lw=1.2, ls=":")
            today.set_gid(f"sweep-{plot_id}-today-{i}")
            ax.plot([p.today * 100], [p.today_delta], "o", color=BASELINE_COLOUR, ms=4)
            ax.text(
                p.today * 100, 1.02, f" today {fmt_pct(p.today, 1)}",
                transform=ax.get_xaxis_transform(), fontsize=7, color=BASELINE_COLOUR,
            )  # fmt: skip
            if p.flip is not None:
                flip = ax.axvline(p.flip * 100, color=SWEEP_COLOUR, lw=1.2)
                flip.set_gid(f"sweep-{plot_id}-flip-{i}")
                ax.text(
                    p.flip * 100, 0.04, f" break-even {fmt_pct(p.flip, 1)}",
                    transform=ax.get_xaxis_transform(), fontsize=7, color=SWEEP_COLOUR,
                )  # fmt: skip
            ax.set_xlim(0, 100)
            ax.set_title(plain_label(p.label), fontsize=8, loc="left", pad=14)
            ax.set_xlabel(plain_label(f"share of the {p.mix} mix (%)"), fontsize=7)
            if i == 0:
                ax.set_ylabel(f"standardized delta ({unit})", fontsize=7)
            ax.tick_params(labelsize=7)
            ax.grid(color="#eeeeee", lw=0.6)
            ax.set_axisbelow(True)
        return fig

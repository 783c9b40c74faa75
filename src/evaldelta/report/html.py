"""The self-contained HTML report: one file, no request leaves the page.

Built from a :class:`~evaldelta.model.Comparison` (and a gate
:class:`~evaldelta.gating.Verdict` when a policy ran):

- view models (``_html_views.py``) format every number; model and case text stays raw;
- matplotlib draws the forest, rates and delta-histogram plots as SVG (``plots.py``),
  inlined as markup;
- Jinja2 renders ``templates/report.html.j2`` with ``autoescape=True``: every piece of text
  from the data (slice names, case ids, arm names, outputs) is escaped where it is written,
  after its escape sequences and control bytes are dropped (``finalize``:
  :func:`~evaldelta.report._escape.html_text`).
  The SVG is the only markup marked safe; matplotlib escapes the text it writes into it.

The page carries a strict Content-Security-Policy (``default-src 'none'``; inline styles;
``img-src data:``; the one inline script allowed by its sha256 hash), so even an escaping bug
could neither load nor run anything. The script only filters the moved-case table by slice;
it reads ``dataset`` values and toggles ``hidden``, never ``innerHTML`` or ``eval``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from evaldelta.gating import Verdict
from evaldelta.model import Comparison
from evaldelta.report import plots
from evaldelta.report._escape import html_text
from evaldelta.report._facts import is_loud, ordered_slices
from evaldelta.report._format import fmt_pct
from evaldelta.report._html_views import (
    PairView,
    arm_summaries,
    forest_rows,
    margins_for,
    pair_view,
    rate_rows,
)
from evaldelta.report._pins import pins_view
from evaldelta.report._repeats import repeats_sentence
from evaldelta.report._samples import samples_views
from evaldelta.report.verdict import (
    _basis_note,
    _headline,
    _outcome_word,
    _where,
    rule_break_even_sentences,
    rule_numbers,
    rule_why,
)

__all__ = ["CSP", "FILTER_SCRIPT", "render_html", "write_pngs"]

FILTER_SCRIPT = """
document.querySelectorAll("select[data-filter]").forEach(function (sel) {
  sel.addEventListener("change", function () {
    var table = document.getElementById(sel.getAttribute("data-filter"));
    if (!table) { return; }
    table.querySelectorAll("tbody tr[data-slice]").forEach(function (row) {
      row.hidden = sel.value !== "" && row.getAttribute("data-slice") !== sel.value;
    });
  });
});
"""


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


CSP = (
    "default-src 'none'; "
    "style-src 'unsafe-inline'; "
    "img-src data:; "
    f"script-src '{_script_hash(FILTER_SCRIPT)}'; "
    "base-uri 'none'; form-action 'none'"
)


def _finalize(value: Any) -> Any:
    """Every value the template writes: text from the data loses its control bytes."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return html_text(value)
    return value


_ENV = Environment(
    loader=PackageLoader("evaldelta.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    finalize=_finalize,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def _sections(
    comparison: Comparison, verdict: Verdict | None
) -> list[tuple[PairView, list[plots.ForestRow], plots.ForestRow, list[plots.RateRow]]]:
    """Every (metric, slicing column, pair) with its view and plot rows, in report order."""
    out = []
    index = 0
    for metric in comparison.metrics:
        binary = metric.kind == "binary"
        for slicing in metric.slicings:
            for pair in slicing.pairs:
                view = pair_view(comparison, metric, slicing.by, slicing.arms, pair, index, verdict)
                one = len(pair.slices) == 1  # its row would repeat the all-cases row
                order = ordered_slices(pair, slicing.arms)
                ordered = [] if one else list(order.slices)
                few = {d.slice for d in order.slices[order.ranked :]}
                margins = margins_for(verdict, metric.metric, slicing.by, pair.candidate)
                rows = forest_rows(ordered, binary, margins, 1.0 - comparison.confidence, few)
                overall = forest_rows([pair.overall], binary, {}, 1.0 - comparison.confidence)[0]
                _mix_section(view, pair, binary, comparison.confidence, verdict, slicing.arms)
                out.append((view, rows, overall, rate_rows(pair, slicing.arms)))
                index += 1
    return out


def _mix_section(
    view: PairView,
    pair: Any,
    binary: bool,
    confidence: float,
    verdict: Verdict | None,
    arms: Sequence[Any] = (),
) -> None:
    """Mix sensitivity (issue 13): the mixes side by side, break-even, the sweep panels."""
    from evaldelta.report._facts import break_even_sentences
    from evaldelta.report._mixes import mix_rows, sweep_caption, sweep_panels, sweep_shown

    if len(pair.slices) == 1:  # every mix gives the one slice all the weight
        return
    view.mixes = mix_rows(pair, binary, verdict)
    view.mix_gate = any(r.gate for r in view.mixes)
    view.mix_break_even = [
        (s.mix, break_even_sentences(s, pair.candidate)) for s in pair.standardized
    ]
    view.mix_break_even = [(m, t) for m, t in view.mix_break_even if t]
    view.sweep = sweep_panels(pair, binary, confidence, verdict, arms=arms)
    view.sweep_captions = [sweep_caption(p) for p in view.sweep]
    view.sweep_shown = sweep_shown(pair, view.sweep) if view.sweep else ""


def _forest_note(rows: list[plots.ForestRow], overall: plots.ForestRow) -> str:
    """What the forest plot's axis is set by, and which intervals run past it (cut, marked)."""
    cut = plots.forest_clipped(rows, overall)
    if not cut:
        return ""
    from evaldelta.report._facts import MIN_RANKED_N

    one = len(cut) == 1
    noun, whose = (
        ("interval runs", "its full interval is")
        if one
        else ("intervals run", "their full intervals are")
    )
    return (
        f"The axis is set by the slices with at least {MIN_RANKED_N} pairs and all cases; "
        f"{len(cut)} {noun} past it, cut at the edge and marked with an arrowhead: "
        f"{', '.join(cut)} ({whose} in the table)"
    )


def _verdict_view(verdict: Verdict) -> dict[str, Any]:
    binary = verdict.kind == "binary"
    order = {"fail": 0, "inconclusive": 1, "pass": 2}
    rules = []
    shares = [f"{r.candidate}: {t}" for r in verdict.rules for t in rule_break_even_sentences(r)]
    for r in sorted(verdict.rules, key=lambda r: order.get(r.outcome, 3)):
        est, ci, bound, n = rule_numbers(r, binary)
        rules.append(
            {
                "outcome": r.outcome,
                "word": _outcome_word(r),
                "rule": r.rule,
                "candidate": r.candidate,
                "where": _where(r),
                "estimate": est,
                "ci": ci,
                "bound": bound,
                "n": n,
                "why": rule_why(r),
            }
        )
    return {
        "decision": verdict.decision,
        "headline": _headline(verdict),
        "basis": _basis_note(verdict),
        "policy": verdict.policy,
        "metric": verdict.metric,
        "by": verdict.by,
        "rules": rules,
        "break_even": shares,
    }


def render_html(
    comparison: Comparison, verdict: Verdict | None = None, *, title: str | None = None
) -> str:
    """The whole report as one self-contained HTML page (inline CSS, SVG and script)."""
    sections = []
    for view, rows, overall, rates in _sections(comparison, verdict):
        forest = plots.forest_figure(rows, unit=view.unit, plot_id=view.index, overall=overall)
        view.forest_svg = plots.figure_svg(
            forest, title=f"Per-slice deltas, {view.candidate} - {view.baseline}"
        )
        view.forest_note = _forest_note(rows, overall)
        rates_fig = plots.rates_figure(rates, arms=(view.baseline, view.candidate))
        view.rates_svg = plots.figure_svg(rates_fig, title="Pooled and fixed-mix rates per arm")
        if view.sweep:
            sweep = plots.sweep_figure(view.sweep, unit=view.unit, plot_id=view.index)
            view.sweep_svg = plots.figure_svg(
                sweep,
                title="Standardized delta as one slice's share sweeps: "
                + "; ".join(view.sweep_captions),
            )
        if view.histogram is not None:
            hist = plots.histogram_figure(*view.histogram, unit=view.unit)
            view.histogram_svg = plots.figure_svg(
                hist, title=f"Per-case deltas, {view.candidate} - {view.baseline}"
            )
        sections.append(view)
    checks = [m for m in comparison.metrics if m.metric.startswith("check.")]
    summaries = (
        [
            (m.metric, arm_summaries(m))
            for m in comparison.metrics
            if not m.metric.startswith("check.")
        ]
        if len(comparison.candidates) > 1
        else []
    )
    three = None
    if comparison.three_arm is not None:
        from evaldelta.report._three_arm import three_arm_figure, three_arm_view

        three = three_arm_view(comparison.three_arm, fmt_pct(comparison.confidence))
        three.svg = plots.figure_svg(
            three_arm_figure(comparison.three_arm), title="Three arms: mean per slice"
        )
    template = _ENV.get_template("report.html.j2")
    return template.render(
        title=title or f"evaldelta: {', '.join(comparison.candidates)} vs {comparison.baseline}",
        csp=CSP,
        script=Markup(FILTER_SCRIPT),  # a constant; its hash is in the CSP
        comparison=comparison,
        confidence=fmt_pct(comparison.confidence),
        verdict=_verdict_view(verdict) if verdict is not None else None,
        sections=sections,
        svg=Markup,  # the template marks only the matplotlib SVG as safe
        checks=[(m.metric, arm_summaries(m)) for m in checks],
        leakage=_leakage_views(comparison),
        pins=pins_view(comparison),
        upstream=_upstream(comparison),
        repeats=repeats_sentence(comparison),
        loud_notes=[n for n in comparison.notes if is_loud(n)],
        summaries=summaries,
        three=three,
        samples=samples_views(comparison),
    )


def _leakage_views(comparison: Comparison) -> list[dict[str, Any]]:
    """The checks section's rubric leakage tables, one per candidate."""
    from evaldelta.report._leakage import leakage_rows, rule_text, trim_output

    return [
        {
            "leak": leak,
            "rule": rule_text(leak),
            "rows": leakage_rows(leak),
            "examples": [
                (c.criterion, e, trim_output(e.failing_output), trim_output(e.passing_output))
                for c in leak.flagged
                for e in c.examples
            ],
        }
        for leak in comparison.rubric_leakage
    ]


def _upstream(comparison: Comparison) -> list[Any]:
    from evaldelta.report._upstream import upstream_view

    return upstream_view(comparison)


def write_pngs(
    comparison: Comparison, directory: Path, verdict: Verdict | None = None
) -> Sequence[Path]:
    """Write each pair's forest plot and rates plot as PNG (for slides); return the paths.

    Names: ``forest-<k>.png`` and ``rates-<k>.png``, ``<k>`` numbering the pairs in the
    order the report shows them (metric, slicing column, candidate).
    """
    written = []
    for view, rows, overall, rates in _sections(comparison, verdict):
        forest = plots.forest_figure(rows, unit=view.unit, plot_id=view.index, overall=overall)
        forest.suptitle(
            plots.plain_label(f"{view.candidate} - {view.baseline} · {view.metric} · by {view.by}")
        )
        written.append(plots.figure_png(forest, directory / f"forest-{view.index}.png"))
        rates_fig = plots.rates_figure(rates, arms=(view.baseline, view.candidate))
        written.append(plots.figure_png(rates_fig, directory / f"rates-{view.index}.png"))
    return written

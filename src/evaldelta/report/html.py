"""The self-contained HTML report: one file, no request leaves the page.

Built from a :class:`~evaldelta.comparison.model.Comparison` (and a gate
:class:`~evaldelta.gating.Verdict` when a policy ran):

- view models (``_html_views.py``) format every number; model and case text stays raw;
- matplotlib draws the forest, rates and delta-histogram plots as SVG (``plots.py``),
  inlined as markup;
- the page is the report's sections (``report/sections``) one after another: each section's
  piece, ``templates/sections/<name>.html.j2``, rendered by Jinja2 with ``autoescape=True``
  (``sections/_html.py``): every piece of text from the data (slice names, case ids, arm
  names, outputs) is escaped where it is written, after its escape sequences and control
  bytes are dropped (``finalize``: :func:`~evaldelta.report._escape.html_text`).
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

from evaldelta.comparison.model import Comparison
from evaldelta.gating import Verdict
from evaldelta.report.sections import Report, render

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


def render_html(
    comparison: Comparison, verdict: Verdict | None = None, *, title: str | None = None
) -> str:
    """The whole report as one self-contained HTML page (inline CSS, SVG and script)."""
    return "".join(render("html", Report(comparison, verdict, title)))


def write_pngs(
    comparison: Comparison, directory: Path, verdict: Verdict | None = None
) -> Sequence[Path]:
    """Write each pair's forest plot and rates plot as PNG (for slides); return the paths.

    Names: ``forest-<k>.png`` and ``rates-<k>.png``, ``<k>`` numbering the pairs in the
    order the report shows them (metric, slicing column, candidate).
    """
    from evaldelta.report import plots
    from evaldelta.report._html_views import rate_rows
    from evaldelta.report.sections.pairs import contexts
    from evaldelta.report.sections.slices import forest

    written = []
    for ctx in contexts(Report(comparison, verdict)):
        rows, overall = forest(ctx)
        k, b, c = ctx.index, ctx.pair.baseline, ctx.pair.candidate
        unit = "points" if ctx.binary else "score units"
        fig = plots.forest_figure(rows, unit=unit, plot_id=k, overall=overall)
        fig.suptitle(plots.plain_label(f"{c} - {b} · {ctx.metric.metric} · by {ctx.by}"))
        written.append(plots.figure_png(fig, directory / f"forest-{k}.png"))
        rates_fig = plots.rates_figure(rate_rows(ctx.pair, ctx.arms), arms=(b, c))
        written.append(plots.figure_png(rates_fig, directory / f"rates-{k}.png"))
    return written

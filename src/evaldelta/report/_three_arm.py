"""The three-arm section (always-cheap, cascade, always-strong) of every report.

Text: a quality table (each arm's mean, the cheap-to-strong gap and what the cascade
recovered, largest gap first) and a routing table (escalation, the divergent subset, cost
per case), then one sentence. HTML: the same tables (strings only; the template escapes
them) and a dot plot of the three means per slice. Markdown: one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaldelta.comparison.model import ThreeArmSlice, ThreeArmSummary
from evaldelta.report._format import fmt, fmt_ci, fmt_pct, fmt_signed

__all__ = [
    "ThreeArmView",
    "three_arm_figure",
    "three_arm_lines",
    "three_arm_markdown",
    "three_arm_sentence",
    "three_arm_view",
]

ALL_LABEL = "all cases"


def _cost_ratio(s: ThreeArmSlice) -> float | None:
    """The cascade's cost as a share of always-strong's (None without cost)."""
    if s.cost is None:
        return None
    strong = s.cost[2].total_usd
    return s.cost[1].total_usd / strong if strong else math.nan


def _same(text: str) -> str:
    return text


def three_arm_sentence(t: ThreeArmSummary, name: Callable[[str], str] = _same) -> str:
    """The answer: how much of the cheap-to-strong gap the cascade recovered, at what cost.

    ``name`` escapes the arm name for the caller's format (Markdown).
    """
    o = t.overall
    share = "" if not math.isfinite(o.recovered_share) else f" ({fmt_pct(o.recovered_share)})"
    ratio = _cost_ratio(o)
    cost = f" at {fmt_pct(ratio)} of {name(t.strong)}'s cost" if ratio is not None else ""
    esc = ""
    if o.escalation_rate is not None:
        esc = (
            f", escalating {fmt_pct(o.escalation_rate)} of its attempts "
            f"({o.escalated_attempts} of {o.cascade_attempts})"
        )
    return (
        f"The cascade recovered {fmt(o.recovered.estimate)} of the {fmt(o.gap.estimate)} gap"
        f"{share}{cost}{esc}."
    )


def _share(s: ThreeArmSlice) -> str:
    text = fmt_pct(s.recovered_share)
    ci = s.gap.ci
    if math.isfinite(s.recovered_share) and not (ci.low > 0 or ci.high < 0):
        text += "*"  # the gap's interval contains zero: the share is not meaningful
    return text


def _quality_row(s: ThreeArmSlice, name: str) -> list[str]:
    return [
        name,
        str(s.n),
        fmt(s.cheap_mean),
        fmt(s.cascade_mean),
        fmt(s.strong_mean),
        fmt_signed(s.gap.estimate),
        fmt_ci(s.gap.ci.low, s.gap.ci.high, False),
        fmt_signed(s.recovered.estimate),
        fmt_ci(s.recovered.ci.low, s.recovered.ci.high, False),
        _share(s),
    ]


def _routing_row(s: ThreeArmSlice, name: str, has_esc: bool, has_cost: bool) -> list[str]:
    row = [name]
    if has_esc:
        div = s.divergent
        row += [
            f"{fmt_pct(s.escalation_rate)} ({s.escalated_attempts}/{s.cascade_attempts})",
            str(s.divergent_n),
            fmt_signed(div.estimate, 3) if div is not None else "n/a",
            fmt_ci(div.ci.low, div.ci.high, False) if div is not None else "",
        ]
    if has_cost and s.cost is not None:
        row += [f"${fmt(c.per_case, 4)}" for c in s.cost]
        row.append(fmt_pct(_cost_ratio(s)))
    return row


def _headers(t: ThreeArmSummary) -> tuple[list[str], list[str]]:
    quality = [
        "slice",
        "n",
        t.cheap,
        t.cascade,
        t.strong,
        "gap",
        "interval",
        "recovered",
        "interval",
        "share",
    ]
    routing = ["slice"]
    if t.escalation_basis != "none":
        routing += ["escalated", "kept cheap", f"{t.cascade} - {t.strong}", "interval"]
    if t.overall.cost is not None:
        routing += [f"{t.cheap} $/case", f"{t.cascade} $/case", f"{t.strong} $/case", "cost share"]
    return quality, routing


def _basis(t: ThreeArmSummary) -> str:
    if t.escalation_basis == "escalated":
        return "escalated: the share of the cascade's attempts with escalated true"
    if t.escalation_basis == "model_used":
        return (
            f"escalated: the share of the cascade's attempts whose model_used is not "
            f"{t.cheap}'s model ({t.cheap_model})"
        )
    return "no escalated or model_used column: escalation is not reported"


def three_arm_lines(t: ThreeArmSummary, confidence: str) -> list[str]:
    """The text section: two tables (largest gap first) and the answer sentence."""
    from evaldelta.report.sections._lines import table as _table

    roles = "roles given" if t.roles_from == "given" else "roles from the run's cascade pins"
    lines = [
        f"Three arms · {t.cheap} -> {t.cascade} -> {t.strong} · metric: {t.metric} · "
        f"by {t.by} · {confidence} paired intervals ({roles})",
        "",
        three_arm_sentence(t),
        "",
        f"Per slice, largest gap first: gap = {t.strong} - {t.cheap} (the most quality at stake "
        f"in routing), recovered = {t.cascade} - {t.cheap}, share = recovered / gap; "
        "on the n cases all three arms scored",
    ]
    quality, routing = _headers(t)
    rows = [_quality_row(s, s.slice) for s in t.slices]
    rows.append(_quality_row(t.overall, ALL_LABEL))
    lines.extend(_table(quality, rows, left=(0, 6, 8)))
    if any(r[-1].endswith("*") for r in rows):
        lines.append("  * the gap's interval contains zero: its share is not meaningful")
    has_esc, has_cost = t.escalation_basis != "none", t.overall.cost is not None
    if has_esc or has_cost:
        lines.append("")
        what = []
        if has_esc:
            what.append(
                f"kept cheap = cases where no {t.cascade} attempt escalated (the divergent "
                f"subset: the only cases where {t.cascade} and {t.strong} called different "
                f"models), with {t.cascade} - {t.strong} on them"
            )
        if has_cost:
            what.append(f"cost share = {t.cascade}'s cost / {t.strong}'s")
        lines.append(f"Routing and cost per slice, same order: {'; '.join(what)}")
        rrows = [_routing_row(s, s.slice, has_esc, has_cost) for s in t.slices]
        rrows.append(_routing_row(t.overall, ALL_LABEL, has_esc, has_cost))
        lines.extend(_table(routing, rrows, left=(0, 1, 4) if has_esc else (0,)))
        lines.append(f"  ({_basis(t)})")
    if t.overall.cost is not None:
        lines.append(
            "Cost per arm: "
            + " · ".join(
                f"{c.arm} ${fmt(c.total_usd, 2)} (${fmt(c.per_case, 4)}/case)"
                for c in t.overall.cost
            )
        )
    return lines


def three_arm_markdown(t: ThreeArmSummary) -> str:
    """One Markdown line: the sentence and the largest-gap slice (names escaped)."""
    from evaldelta.report._escape import md_code, md_text

    top = t.slices[0] if t.slices else None
    where = ""
    if top is not None and math.isfinite(top.gap.estimate):
        where = (
            f" Largest gap: {md_text(top.slice)} ({fmt_signed(top.gap.estimate)}, "
            f"{md_text(t.strong)} − {md_text(t.cheap)})."
        )
    roles = f"{md_code(t.cheap)} → {md_code(t.cascade)} → {md_code(t.strong)}"
    return f"- **Three arms** ({roles}): {three_arm_sentence(t, md_text)}{where}"


@dataclass
class ThreeArmView:
    """Strings for the HTML section (the template escapes every one)."""

    title: str
    sentence: str
    basis: str
    quality_header: list[str]
    quality_rows: list[list[str]]
    routing_header: list[str]
    routing_rows: list[list[str]]
    starred: bool
    svg: str = ""
    cost_lines: list[str] = field(default_factory=list)


def three_arm_view(t: ThreeArmSummary, confidence: str) -> ThreeArmView:
    """The HTML section's strings (the plot is added by the caller)."""
    quality, routing = _headers(t)
    has_esc, has_cost = t.escalation_basis != "none", t.overall.cost is not None
    rows = [_quality_row(s, s.slice) for s in (*t.slices, t.overall)]
    rows[-1][0] = ALL_LABEL
    rrows = (
        [_routing_row(s, s.slice, has_esc, has_cost) for s in (*t.slices, t.overall)]
        if has_esc or has_cost
        else []
    )
    if rrows:
        rrows[-1][0] = ALL_LABEL
    cost_lines = [
        f"{c.arm}: ${fmt(c.total_usd, 2)} total, ${fmt(c.per_case, 4)} per case"
        for c in (t.overall.cost or ())
    ]
    return ThreeArmView(
        title=f"{t.cheap} → {t.cascade} → {t.strong} · {t.metric} · by {t.by} · "
        f"{confidence} paired intervals",
        sentence=three_arm_sentence(t),
        basis=_basis(t),
        quality_header=quality,
        quality_rows=rows,
        routing_header=routing if rrows else [],
        routing_rows=rrows,
        starred=any(r[-1].endswith("*") for r in rows),
        cost_lines=cost_lines,
    )


def three_arm_figure(t: ThreeArmSummary) -> Any:
    """A dot plot: each slice's three means on one line (largest gap at the top)."""
    from matplotlib.figure import Figure

    from evaldelta.report import plots

    slices = [*t.slices, t.overall]
    names = [*(s.slice for s in t.slices), ALL_LABEL]
    with plots._style():
        height = 1.1 + 0.42 * len(slices)
        fig = Figure(figsize=(7.2, height))
        ax = fig.add_axes((0.30, 0.7 / height, 0.62, 1 - 1.1 / height))
        colours = (plots.BASELINE_COLOUR, plots.CANDIDATE_COLOUR, "#8e44ad")
        arms = (t.cheap, t.cascade, t.strong)
        for y, s in zip(range(len(slices) - 1, -1, -1), slices, strict=True):
            means = (s.cheap_mean, s.cascade_mean, s.strong_mean)
            finite = [m for m in means if math.isfinite(m)]
            if len(finite) >= 2:
                ax.plot([min(finite), max(finite)], [y, y], color="#cccccc", lw=2, zorder=1)
            for k, m in enumerate(means):
                if math.isfinite(m):
                    label = plots.plain_label(arms[k]) if y == len(slices) - 1 else None
                    ax.plot([m], [y], "o", color=colours[k], ms=5, zorder=2, label=label)
        ax.set_yticks(range(len(slices) - 1, -1, -1), [plots.plain_label(n) for n in names])
        ax.set_ylim(-0.6, len(slices) - 0.4)
        ax.set_xlabel(f"mean {plots.plain_label(t.metric)} on cases all three arms scored")
        ax.grid(axis="x", color="#e5e5e5", lw=0.6)
        fig.legend(loc="upper center", ncol=3, fontsize=8, frameon=False)
        return fig

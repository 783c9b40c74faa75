"""Renderers for ``evaldelta plan`` and ``evaldelta sample``: text, Markdown and JSON.

Text leads with the answer (the paired n needed), and labels every number: paired or
unpaired, the method, and the units (points for pass/fail data, score units otherwise).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from evaldelta.comparison.model import to_jsonable
from evaldelta.report._escape import md_code, md_text, term_text
from evaldelta.report._format import fmt, fmt_pct

if TYPE_CHECKING:  # types only: planning.plan imports scipy, which `sample` does not need
    from evaldelta.planning.plan import Allocation, PairPlan, Plan, SlicePlan
    from evaldelta.planning.sampling import SampleResult

__all__ = [
    "render_plan_json",
    "render_plan_markdown",
    "render_plan_text",
    "render_sample_json",
    "render_sample_text",
]

METHODS = {
    "paired t (noncentral t)": "paired t, exact noncentral t",
    "exact mcnemar (connor 1987 beside)": "exact McNemar test (its own power, enumerated)",
}


def _effect(x: float | None, binary: bool, places: int = 3) -> str:
    """An effect: points for binary data (0.05 -> +5.0 pts), score units otherwise."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if binary:
        return f"{'+' if x >= 0 else '-'}{fmt(abs(x) * 100, places - 2)} pts"
    return f"{'+' if x >= 0 else '-'}{fmt(abs(x), places)}"


def _mde(x: float | None, binary: bool, places: int = 3) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "n/a"
    body = _effect(abs(x), binary, places)[1:]
    return f"±{body}" if x > 0 else f"-{body}"


def _count(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "n/a"
    return f"{int(x):,}"


def _spread(s: SlicePlan, short: bool = False) -> str:
    """The observed spread: sd of per-case deltas, or the discordance split."""
    if s.kind == "binary" and s.p_only_candidate is not None and s.p_only_baseline is not None:
        if short:
            return (
                f"{fmt_pct(s.discordance, 1)} ({fmt_pct(s.p_only_candidate, 1)} + "
                f"{fmt_pct(s.p_only_baseline, 1)})"
            )
        return (
            f"discordance {fmt_pct(s.discordance, 1)} (only candidate "
            f"{fmt_pct(s.p_only_candidate, 1)}, only baseline {fmt_pct(s.p_only_baseline, 1)})"
        )
    return f"sd {fmt(s.sd, 3)}" if short else f"paired sd of per-case deltas {fmt(s.sd, 3)}"


def _design(plan: Plan) -> str:
    return f"power {fmt_pct(plan.power)}, alpha {plan.alpha:g} ({plan.alternative})" + (
        f"; effect {_effect(plan.effect, plan.kind == 'binary')}"
        if plan.effect is not None
        else "; no --effect given: minimum detectable effects only"
    )


def _headline(s: SlicePlan, binary: bool) -> list[str]:
    method = METHODS.get(s.method, s.method)
    given = s.n_now is None
    label = "" if given else f"All cases (n = {s.n_now:,} pairs): "
    basis = "at" if given else "holding the observed"
    out = []
    if s.effect is not None:
        need = s.n_required
        if need is not None and math.isfinite(need):
            more = ""
            if s.n_now is not None:
                extra = int(need) - s.n_now
                more = (
                    f" ({extra:,} more than the pilot's {s.n_now:,})"
                    if extra > 0
                    else f" (the pilot's {s.n_now:,} already suffice)"
                )
            out.append(
                f"{label}to detect {_effect(s.effect, binary)}: {_count(need)} paired cases{more}."
            )
        else:
            out.append(
                f"{label}the paired n to detect {_effect(s.effect, binary)} is undefined "
                "(n/a); see the notes."
            )
        out.append(f"  Method: {method}, {basis} {_spread(s)}.")
        if s.n_normal is not None and math.isfinite(s.n_normal):
            out.append(
                f"  Connor (1987)'s normal approximation says {math.ceil(s.n_normal):,} pairs; "
                "the exact test has less power there than asked, so it is not the answer."
            )
        if s.unpaired_n_per_arm is not None:
            what = "same sd" if given else "the arms' pooled sd"
            out.append(
                f"  Unpaired contrast: {_count(s.unpaired_n_per_arm)} per arm, "
                f"{_count(2 * s.unpaired_n_per_arm)} cases in all "
                f"(two-sample t, equal arms, {what} {fmt(s.unpaired_sd, 3)})."
            )
    if not given:
        lead = "  " if s.effect is not None else label
        out.append(
            f"{lead}Minimum detectable effect now: {_mde(s.mde, binary)}, by {method}"
            + (f", at {_spread(s)}." if s.effect is None else ".")
        )
    return out


def _table(pair: PairPlan, binary: bool) -> list[str]:
    spread = "discordance (cand. + base.)" if binary else "sd of deltas"
    head = ("slice", "n now", "observed", spread, "MDE now", "paired n", "unpaired n/arm")
    rows = [head]
    for s in pair.slices:
        rows.append(
            (
                s.slice,
                _count(s.n_now),
                _effect(s.observed_delta, binary),
                _spread(s, short=True),
                _mde(s.mde, binary),
                _count(s.n_required),
                _count(s.unpaired_n_per_arm),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def _allocation_text(a: Allocation, plan: Plan) -> list[str]:
    conf = fmt_pct(a.confidence)
    binary = plan.kind == "binary"
    out = [
        f"Allocation of {a.total:,} cases (budget {a.budget:,}): {a.method}; expected "
        f"{conf} half-widths of each slice's paired delta, z * sd / sqrt(n):"
    ]
    head = ("slice", "traffic", "sd", "floor", "n now", "n", "half-width now", "after")
    rows = [head]
    for s in a.slices:
        rows.append(
            (
                s.slice,
                fmt_pct(s.weight, 1),
                fmt(s.sd, 3),
                f"{s.floor:,}",
                _count(s.n_now),
                f"{s.n:,}" + (" (all)" if s.taken_whole else ""),
                _mde(s.halfwidth_now, binary, 4),
                _mde(s.halfwidth_after, binary, 4),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        out.append("  " + "  ".join(cells).rstrip())
    now = a.standardized_halfwidth_now
    out.append(
        f"  Standardized (traffic mix) delta, {conf} half-width: "
        + (f"{_mde(now, binary, 4)} now -> " if now is not None else "")
        + f"{_mde(a.standardized_halfwidth_after, binary, 4)} after"
    )
    return out


def render_plan_text(plan: Plan) -> str:
    """The plan as plain text: the answer first, then the per-slice table and allocation."""
    binary = plan.kind == "binary"
    out: list[str] = []
    for pair in plan.pairs:
        title = "evaldelta plan"
        if pair.candidate is not None:
            title += f": {pair.candidate} vs {pair.baseline}, {plan.metric}"
            title += f" ({'pass/fail' if binary else 'graded'}) by {plan.by}"
        if plan.inputs:
            title += f"; pilot {', '.join(plan.inputs)}"
        out.append(title)
        out.append(_design(plan) + ("; binary effects in points (0.05 = 5 pts)" if binary else ""))
        out.append("")
        out.extend(_headline(pair.overall, binary))
        if pair.slices:
            out.append("")
            out.append("Per slice (paired; n/a = undefined, see notes):")
            out.extend(_table(pair, binary))
        out.append("")
    if plan.allocation is not None:
        out.extend(_allocation_text(plan.allocation, plan))
        out.append("")
    notes = [*plan.notes, *(plan.allocation.notes if plan.allocation else ())]
    for pair in plan.pairs:
        for s in (pair.overall, *pair.slices):
            notes.extend(s.notes)
    if notes:
        out.append("Notes (undefined results are n/a, never 0):")
        out.extend(f"  - {n}" for n in dict.fromkeys(notes))
    return "\n".join(term_text(line) for line in out).rstrip() + "\n"


def render_plan_markdown(plan: Plan) -> str:
    """A compact Markdown table per candidate (for a pull-request comment)."""
    binary = plan.kind == "binary"
    out: list[str] = []
    for pair in plan.pairs:
        name = (
            f"{md_code(pair.candidate)} vs {md_code(pair.baseline or '')}"
            if pair.candidate
            else "given inputs"
        )
        out.append(f"### evaldelta plan: {name}")
        out.append("")
        out.append(md_text(_design(plan)))
        out.append("")
        out.append("| slice | n now | spread | MDE now | paired n | unpaired n/arm | method |")
        out.append("|---|---:|---|---:|---:|---:|---|")
        for s in (pair.overall, *pair.slices):
            out.append(
                f"| {md_text(s.slice)} | {_count(s.n_now)} | {md_text(_spread(s))} | "
                f"{_mde(s.mde, binary)} | "
                f"{_count(s.n_required)} | {_count(s.unpaired_n_per_arm)} | "
                f"{md_text(METHODS.get(s.method, s.method))} |"
            )
        out.append("")
    if plan.allocation is not None:
        a = plan.allocation
        out.append(f"**Allocation** of {a.total:,} cases: {md_text(a.method)}")
        out.append("")
        out.append("| slice | traffic | sd | n now | n | half-width now | after |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for r in a.slices:
            out.append(
                f"| {md_text(r.slice)} | {fmt_pct(r.weight, 1)} | {fmt(r.sd, 3)} | "
                f"{_count(r.n_now)} | "
                f"{r.n:,} | {_mde(r.halfwidth_now, binary)} | {_mde(r.halfwidth_after, binary)} |"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_plan_json(plan: Plan) -> str:
    """The plan as JSON (``schema_version`` inside); undefined numbers become null."""
    return json.dumps(to_jsonable(plan), indent=2, allow_nan=False) + "\n"


def render_sample_text(result: SampleResult) -> str:
    """The sample report: counts, shares and weights per slice, and what was taken whole."""
    unit = result.unit
    what = f"{result.sampled:,} of {result.population:,} {unit}s"
    if unit == "case":  # a log with several arms: whole cases, every arm's rows of each
        what += (
            f" ({result.rows_sampled:,} of {result.rows_population:,} rows: the {result.arms} "
            "arms' rows of each sampled case)"
        )
    out = [
        f"Sampled {what} from {result.input} "
        f"by {result.by} (seed {result.seed}, floor {result.floor:,}"
        + (f", total {result.total:,}" if result.total is not None else "")
        + f") -> {result.output}",
        f"Traffic shares (N_k / N) -> {result.mix_file}; each row's sample_weight = N_k / n_k"
        + (", counted in cases." if unit == "case" else "."),
    ]
    if result.since is not None:
        out.append(
            f"Rows with {result.time_column} on or after {result.since}: "
            f"{result.population:,} kept; {result.excluded_before_since:,} earlier and "
            f"{result.excluded_no_time:,} without a time left out."
        )
    for band in result.bands:
        out.append(f"Band column {band.name} from {band.column}: {', '.join(band.labels())}.")
    out.append("")
    head = ("slice", "population N_k", "share", "sampled n_k", "weight N_k/n_k", "")
    rows = [head]
    for s in result.strata:
        rows.append(
            (
                s.slice,
                f"{s.population:,}",
                fmt_pct(s.share, 1),
                f"{s.sampled:,}",
                fmt(s.weight, 3),
                "taken whole" if s.taken_whole else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        out.append("  " + "  ".join(cells).rstrip())
    if result.notes:
        out.append("")
        out.append("Notes:")
        out.extend(f"  - {n}" for n in result.notes)
    return "\n".join(term_text(line) for line in out).rstrip() + "\n"


def render_sample_json(result: SampleResult) -> str:
    """The sample report as JSON; undefined numbers become null."""
    return json.dumps(to_jsonable(result), indent=2, allow_nan=False) + "\n"

"""A compact Markdown summary for a pull-request comment."""

from __future__ import annotations

import math

from evaldelta.model import Comparison, SliceDelta
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct

__all__ = ["render_markdown"]


def _key(d: SliceDelta) -> float:
    res = d.main
    return res.estimate if res is not None and math.isfinite(res.estimate) else math.inf


def _pin_warning(comparison: Comparison) -> list[str]:
    if not comparison.pin_differences:
        return []
    from evaldelta.report._pins import fmt_pin

    shown = "; ".join(
        f"`{d.key}` (" + ", ".join(f"{a} {fmt_pin(v)}" for a, v in d.values.items()) + ")"
        for d in comparison.pin_differences
    )
    return [
        f"> ⚠️ **The arms differ beyond the release under test:** {shown}. "
        "Every difference below mixes the two changes.",
        "",
    ]


def render_markdown(comparison: Comparison) -> str:
    """Per metric and candidate: worst slices, overall, standardized vs pooled, evidence."""
    out: list[str] = _pin_warning(comparison)
    conf = fmt_pct(comparison.confidence)
    for metric in comparison.metrics:
        binary = metric.kind == "binary"
        slicing = metric.slicings[0]
        for pair in slicing.pairs:
            b, c = pair.baseline, pair.candidate
            out.append(f"### evaldelta: `{c}` vs `{b}` · {metric.metric} · by {slicing.by}")
            out.append("")
            if not pair.paired_available:
                out.append(f"> **No paired analysis:** `{b}` and `{c}` share no cases.")
                out.append("")
            out.append(f"| slice | {c} − {b} | {conf} interval | p (Holm) | n |")
            out.append("|---|---:|---|---:|---:|")
            for d in sorted(pair.slices, key=_key)[:3]:
                res = d.main
                if res is None:
                    continue
                out.append(
                    f"| {d.slice} | {fmt_delta(res.estimate, binary)} | "
                    f"{fmt_ci(res.ci.low, res.ci.high, binary)} | {fmt_p(d.pvalue_holm)} | "
                    f"{d.n_pairs or ''} |"
                )
            o = pair.overall.main
            if o is not None:
                out.append(
                    f"| **all cases** | {fmt_delta(o.estimate, binary)} | "
                    f"{fmt_ci(o.ci.low, o.ci.high, binary)} | {fmt_p(o.pvalue)} | "
                    f"{pair.overall.n_pairs or ''} |"
                )
            out.append("")
            for s in pair.standardized:
                out.append(
                    f"- Standardized ({s.mix}): {fmt_delta(s.delta.estimate, binary)} "
                    f"{fmt_ci(s.delta.ci.low, s.delta.ci.high, binary)}"
                )
            out.append(
                f"- Pooled (each arm on its own mix): {fmt(pair.pooled.baseline)} → "
                f"{fmt(pair.pooled.candidate)} ({fmt_delta(pair.pooled.delta, binary)})"
            )
            if pair.simpson is not None and pair.simpson.kind != "none":
                word = "Simpson reversal" if pair.simpson.kind == "reversal" else "mix shift"
                out.append(f"- ⚠️ **{word}**: pooled and standardized differences disagree in sign")
            ov = pair.overall
            if ov.informative is not None:
                out.append(
                    f"- Informative pairs: {ov.informative}/{ov.n_pairs} "
                    f"({fmt_pct(ov.informative_share)})"
                )
            out.append("")
    if comparison.three_arm is not None:
        from evaldelta.report._three_arm import three_arm_markdown

        out.append(three_arm_markdown(comparison.three_arm))
        out.append("")
    return "\n".join(out).rstrip() + "\n"

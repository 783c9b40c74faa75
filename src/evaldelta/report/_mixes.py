"""Mix sensitivity in every report: the named mixes side by side, and the share sweep.

Issue 13 (seed 000's open question): production weighting assumes a stationary mix, and
shipping can move it. Every format shows one row per mix (the standardized delta, its
interval, a verdict word and, with a gate policy, the standardized rule's outcome under that
mix) and says in words how far a slice's share would have to move to change the answer
(:func:`~evaldelta.report._facts.break_even_sentences`). HTML adds, per slice, the delta and
its interval band as that slice's share sweeps from 0 to 100%, evaluated by
:func:`evaldelta.stats.share_sweep` (the statistics, not this module, compute the curve).

Which slices get a panel is chosen by relevance, and said (issue 24.9: the first four in
list order left out seed 004's extraction, the slice its story is about): the worst slice
(the first of the reports' one order), the slice nearest its break-even, then the largest
weight x delta (the slices that move the standardized delta most).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaldelta import stats
from evaldelta.comparison.model import ArmSlice, PairComparison, Standardized
from evaldelta.report._facts import ordered_slices, sign_flip
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_pct

if TYPE_CHECKING:
    from evaldelta.gating import Verdict

__all__ = [
    "MixRow",
    "SweepPanel",
    "gate_outcomes",
    "headline_standardized",
    "mix_rows",
    "sweep_caption",
    "sweep_choice",
    "sweep_panels",
    "sweep_shown",
    "verdict_word",
]

Name = Callable[[str], str]
SWEEP_POINTS = 101  # shares 0%, 1%, ..., 100%
SWEEP_PANELS = 4  # slices drawn, nearest break-even first


def _same(text: str) -> str:
    return text


def headline_standardized(pair: PairComparison) -> Standardized:
    """The mix a headline quotes: the traffic mix when there is one, else the chosen mix."""
    traffic = [s for s in pair.standardized if s.mix == "traffic"]
    return traffic[0] if traffic else pair.standardized[0]


def verdict_word(std: Standardized, candidate: str, name: Name = _same) -> str:
    """``v2 ahead``, ``v2 behind`` or ``interval includes zero`` (``Standardized.verdict``)."""
    if std.verdict == "ahead":
        return f"{name(candidate)} ahead"
    if std.verdict == "behind":
        return f"{name(candidate)} behind"
    if std.verdict == "includes_zero":
        return "interval includes zero"
    return "undefined"


@dataclass(frozen=True)
class MixRow:
    """One mix, formatted: each arm's standardized rate, the delta, interval and verdict."""

    mix: str
    baseline: str
    candidate: str
    delta: str
    ci: str
    verdict: str
    gate: str  # the standardized rule's outcome under this mix ("" without a policy)


def gate_outcomes(verdict: Verdict | None, candidate: str) -> dict[str, str]:
    """The standardized rule's outcome per mix for ``candidate`` (empty without a rule)."""
    if verdict is None:
        return {}
    out = {}
    for r in verdict.rules:
        if r.rule == "standardized_margin" and r.candidate == candidate and r.mix is not None:
            lean = f" (leaning {r.leaning})" if r.leaning else ""
            out[r.mix] = f"{r.outcome}{lean}"
    return out


def mix_rows(
    pair: PairComparison, binary: bool, verdict: Verdict | None = None, name: Name = _same
) -> list[MixRow]:
    """One row per standardized result, in the comparison's order."""
    gate = gate_outcomes(verdict, pair.candidate)
    rows = []
    for s in pair.standardized:
        rb, rc = s.per_arm.get(pair.baseline), s.per_arm.get(pair.candidate)
        rows.append(
            MixRow(
                mix=name(s.mix),
                baseline=fmt(rb.estimate) if rb is not None else "n/a",
                candidate=fmt(rc.estimate) if rc is not None else "n/a",
                delta=fmt_delta(s.delta.estimate, binary),
                ci=fmt_ci(s.delta.ci.low, s.delta.ci.high, binary),
                verdict=verdict_word(s, pair.candidate, name),
                gate=gate.get(s.mix, ""),
            )
        )
    return rows


@dataclass(frozen=True)
class SweepPanel:
    """One slice swept from 0 to 100% of a mix, in display units (points for rates).

    ``curve`` holds ``(share, delta, low, high)``; ``today`` is the slice's share in the mix,
    ``flip`` the share at which the delta changes sign (None: none in [0, 1]), ``sure`` the
    shares at which an end of the interval crosses zero.
    """

    label: str
    mix: str
    today: float
    today_delta: float
    flip: float | None
    sure: tuple[float, ...]
    curve: tuple[tuple[float, float, float, float], ...]
    margin: float | None = None  # the gate's -margin on this mix's delta, when a rule ran
    why: tuple[str, ...] = ()  # why the slice was chosen: worst slice, nearest break-even, ...


WORST = "worst slice"
NEAREST = "nearest break-even"
LARGEST = "largest weight x delta"
NEXT = "next largest weight x delta"


def sweep_choice(
    pair: PairComparison, arms: Sequence[ArmSlice], limit: int = SWEEP_PANELS
) -> list[tuple[stats.BreakEven, tuple[str, ...]]]:
    """The slices to sweep, by relevance, each with why it was chosen (module docstring).

    The worst slice (first of :func:`~evaldelta.report._facts.ordered_slices` among the
    mix's slices), the one nearest its break-even (when any share flips the sign), then by
    ``|w_k d_k|``, the slice's weight times its delta: its pull on the standardized delta.
    """
    std = headline_standardized(pair)
    by_name = {b.slice: b for b in std.break_even}
    if not by_name:
        return []
    weights = std.delta.weights
    reasons: dict[str, list[str]] = {}
    worst = next((d.slice for d in ordered_slices(pair, arms).slices if d.slice in by_name), None)
    if worst is not None:
        reasons.setdefault(worst, []).append(WORST)

    def distance(b: stats.BreakEven) -> float:
        flip = sign_flip(b)
        return abs(flip - b.share) if flip is not None else math.inf

    nearest = min(std.break_even, key=lambda b: (distance(b), b.slice))
    if math.isfinite(distance(nearest)):
        reasons.setdefault(nearest.slice, []).append(NEAREST)

    def pull(name: str) -> float:
        return abs(weights.get(name, 0.0) * std.slice_deltas.get(name, 0.0))

    by_pull = sorted(by_name, key=lambda k: (-pull(k), k))
    if by_pull and pull(by_pull[0]) > 0:
        reasons.setdefault(by_pull[0], []).append(LARGEST)
    chosen = list(reasons)[:limit]
    chosen += [k for k in by_pull if k not in chosen][: max(0, limit - len(chosen))]
    return [(by_name[k], tuple(reasons.get(k, [NEXT]))) for k in chosen]


def sweep_panels(
    pair: PairComparison,
    binary: bool,
    confidence: float,
    verdict: Verdict | None = None,
    limit: int = SWEEP_PANELS,
    arms: Sequence[ArmSlice] = (),
) -> list[SweepPanel]:
    """The headline mix's most relevant slices, swept (:func:`sweep_choice` chooses)."""
    std = headline_standardized(pair)
    est, ses = std.slice_deltas, std.slice_ses
    if not std.break_even or not est:
        return []
    scale = 100.0 if binary else 1.0
    weights = {k: std.delta.weights[k] for k in est if k in std.delta.weights}
    margin = None
    if verdict is not None:
        margin = next(
            (
                r.bound * scale
                for r in verdict.rules
                if r.rule == "standardized_margin"
                and r.candidate == pair.candidate
                and r.mix == std.mix
                and r.bound is not None
            ),
            None,
        )

    shares = [i / (SWEEP_POINTS - 1) for i in range(SWEEP_POINTS)]
    out = []
    for b, why in sweep_choice(pair, arms, limit):
        flip = sign_flip(b)
        points = sorted({*shares, b.share, *([flip] if flip is not None else [])})
        curve = stats.share_sweep(
            est, ses, weights, b.slice, points, confidence=confidence, df=std.mix_df
        )
        out.append(
            SweepPanel(
                label=b.slice,
                mix=std.mix,
                today=b.share,
                today_delta=b.delta * scale,
                flip=flip,
                sure=b.interval_flips,
                curve=tuple((s, d * scale, lo * scale, hi * scale) for s, d, lo, hi in curve),
                margin=margin,
                why=why,
            )
        )
    return out


def sweep_caption(panel: SweepPanel) -> str:
    """What a panel marks, in words (the figure's accessible title and the caption)."""
    flip = f"break-even {fmt_pct(panel.flip, 1)}" if panel.flip is not None else "no break-even"
    why = f" ({', '.join(panel.why)})" if panel.why else ""
    return f"{panel.label}{why}: today {fmt_pct(panel.today, 1)} of the {panel.mix} mix; {flip}"


def sweep_shown(pair: PairComparison, panels: Sequence[SweepPanel]) -> str:
    """Which slices the sweep shows, why, and which it leaves out (said under the figure)."""
    std = headline_standardized(pair)
    shown = [p.label for p in panels]
    left = sorted(b.slice for b in std.break_even if b.slice not in shown)
    words = {WORST: "the worst slice", NEAREST: "the slice nearest its break-even"}
    used = [words[w] for w in (WORST, NEAREST) if any(w in p.why for p in panels)]
    used.append("the largest weight x delta (the pull on the standardized delta)")
    out = (
        f"{len(shown)} of {len(std.break_even)} slices drawn, by relevance: {', then '.join(used)}"
    )
    if left:
        out += f"; not drawn: {', '.join(left)}"
    return out

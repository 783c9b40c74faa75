"""Mix sensitivity in every report: the named mixes side by side, and the share sweep.

Issue 13 (seed 000's open question): production weighting assumes a stationary mix, and
shipping can move it. Every format shows one row per mix (the standardized delta, its
interval, a verdict word and, with a gate policy, the standardized rule's outcome under that
mix) and says in words how far a slice's share would have to move to change the answer
(:func:`~evaldelta.report._facts.break_even_sentences`). HTML adds, per slice, the delta and
its interval band as that slice's share sweeps from 0 to 100%: the sweeps the Comparison
holds (``PairComparison.share_sweeps``, computed and chosen by relevance in
:mod:`evaldelta.comparison._settle`); this module scales them to display units and says
which slices they are, and why. The gate's rules are found by what they bound
(``Rule.margin_on``), never by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaldelta.comparison._settle import NEAREST, WORST
from evaldelta.comparison.model import PairComparison, Standardized
from evaldelta.comparison.ordering import headline_standardized
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_pct

if TYPE_CHECKING:
    from evaldelta.gating import Verdict

__all__ = [
    "MixRow",
    "SweepPanel",
    "gate_outcomes",
    "mix_rows",
    "sweep_caption",
    "sweep_panels",
    "sweep_shown",
    "verdict_word",
]

Name = Callable[[str], str]


def _same(text: str) -> str:
    return text


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


def _on_mix(kind: str) -> bool:
    """Whether results of this rule kind bound a mix's standardized delta."""
    from evaldelta.gating.rules import rule_of  # the reports load the gate only with a verdict

    rule = rule_of(kind)
    return rule is not None and rule.margin_on == "mix"


def gate_outcomes(verdict: Verdict | None, candidate: str) -> dict[str, str]:
    """The standardized rule's outcome per mix for ``candidate`` (empty without a rule)."""
    if verdict is None:
        return {}
    out = {}
    for r in verdict.rules:
        if _on_mix(r.rule) and r.candidate == candidate and r.mix is not None:
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


def sweep_panels(
    pair: PairComparison, binary: bool, verdict: Verdict | None = None
) -> list[SweepPanel]:
    """The sweeps the Comparison holds for this pair, in display units, with the gate's margin."""
    scale = 100.0 if binary else 1.0
    out = []
    for sw in pair.share_sweeps:
        margin = None
        if verdict is not None:
            margin = next(
                (
                    r.bound * scale
                    for r in verdict.rules
                    if _on_mix(r.rule)
                    and r.candidate == pair.candidate
                    and r.mix == sw.mix
                    and r.bound is not None
                ),
                None,
            )
        out.append(
            SweepPanel(
                label=sw.slice,
                mix=sw.mix,
                today=sw.share,
                today_delta=sw.delta * scale,
                flip=sw.sign_flip,
                sure=sw.interval_flips,
                curve=tuple(
                    (p.share, p.delta * scale, p.low * scale, p.high * scale) for p in sw.curve
                ),
                margin=margin,
                why=sw.why,
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

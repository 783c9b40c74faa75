"""Phase two of a comparison: :class:`~evaldelta.engine.evidence.Evidence` -> Comparison.

Pure: every number comes from the evidence (phase one, :mod:`evaldelta.engine.evidence`)
and the statistics in :mod:`evaldelta.stats`; nothing here reads a file or runs a query,
so a comparison can be built, and tested, from hand-made evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evaldelta import __version__, stats
from evaldelta.comparison._mixes import NamedMix
from evaldelta.comparison._notes import Notes
from evaldelta.comparison._reliability import identical_notes, reliability
from evaldelta.comparison._slicing import SlicingBuilder
from evaldelta.comparison._three_arm import three_arm_summary
from evaldelta.comparison.leakage import leakage_from_metrics
from evaldelta.comparison.model import SCHEMA_VERSION, Comparison, MetricResult, RepeatReduction
from evaldelta.comparison.pins import undeclared_differences
from evaldelta.comparison.upstream import upstream_checks
from evaldelta.evidence import ALL, Evidence, MetricEvidence, SlicingEvidence

__all__ = ["MANY_SLICES", "Options", "build"]

MANY_SLICES = 50


@dataclass(frozen=True)
class Options:
    """How to summarize: interval method and level, the mix(es), the traffic weights.

    ``mixes`` are the named mixes side by side (:mod:`evaldelta.comparison._mixes`); without
    them, ``mix`` and ``mix_weights`` give the one mix (``None`` weights: the data's own).
    """

    confidence: float = 0.95
    interval: str = "newcombe"
    mix: str = "actual"  # "actual", "equal" or "file:NAME"
    mix_weights: Mapping[str, float] | None = None  # None with "actual": the data's own mix
    traffic: Mapping[str, float] | None = None
    traffic_label: str | None = None
    allowed_pin_differences: Sequence[str] = ()
    expected_changes: Sequence[str] = ()  # upstream kinds the arms declare (--expect-change)
    allowed_upstream_changes: Sequence[str] = ()  # upstream kinds a policy allows
    mixes: tuple[NamedMix, ...] = ()
    reducer_chosen_by: str = "default"  # "--reduce" | "the logs' own" | "default"
    by_given: bool = True  # the slicing columns were named (--by), not the default slice
    pass_k: int | None = None  # pass@k and pass^k's k (--k); None: the arms' common repeats

    def named(self) -> tuple[NamedMix, ...]:
        """The mixes to standardize on, in order (the first is the chosen mix)."""
        if self.mixes:
            return self.mixes
        if self.mix_weights is None:
            return (NamedMix(self.mix, "actual"),)
        kind: Literal["equal", "file"] = "equal" if self.mix == "equal" else "file"
        return (NamedMix(self.mix, kind, dict(self.mix_weights)),)


def build(evidence: Evidence, options: Options) -> Comparison:
    """The comparison the evidence supports, under ``options``."""
    notes = Notes(skip=(stats.ReliabilityWarning,) if evidence.order is not None else ())
    notes.items.extend(_missing_slicing(evidence, options.by_given))
    notes.items.extend(_many_slices(evidence))
    if evidence.trimmed:
        notes.items.append(
            f"{evidence.trimmed:,} rows had spaces around their case id or arm; they were "
            "trimmed, so 'a ' and 'a' are one arm"
        )
    traffic = dict(options.traffic) if options.traffic is not None else None
    traffic_label = options.traffic_label
    results = []
    for m in evidence.metrics:
        if traffic is None and m.sample_weight_totals:
            traffic, traffic_label = dict(m.sample_weight_totals), "sample_weight"
        results.append(_metric(evidence, m, options, traffic, notes))
    arms = evidence.arms
    summary = (
        three_arm_summary(evidence.three_arm, confidence=options.confidence, notes=notes)
        if evidence.three_arm is not None
        else None
    )
    repeats = reliability(evidence.repeats, arms, options.confidence, options.pass_k)
    notes.items.extend(identical_notes(repeats))
    built = Comparison(
        schema_version=SCHEMA_VERSION,
        evaldelta_version=__version__,
        inputs=evidence.inputs,
        baseline=evidence.baseline,
        baseline_reason=evidence.baseline_reason,
        candidates=evidence.candidates,
        arms_present=evidence.present,
        confidence=options.confidence,
        interval=options.interval,
        mix=options.named()[0].name,
        traffic=traffic_label,
        metrics=tuple(results),
        notes=notes.folded(),
        pins={a: dict(p) for a, p in evidence.pins.items()},
        pin_differences=undeclared_differences(
            evidence.pins, arms, options.allowed_pin_differences
        ),
        three_arm=summary,
        imports=evidence.imports,
        rubric_leakage=leakage_from_metrics(results, evidence.baseline, evidence.candidates),
        upstream=upstream_checks(
            evidence.upstream,
            evidence.pins,
            options.expected_changes,
            options.allowed_upstream_changes,
        ),
        mixes=tuple(m.name for m in options.named()),
        repeats=_repeats(evidence, options),
        samples=tuple(s for m in evidence.metrics for s in m.samples),
        reliability=repeats,
    )
    if evidence.order is None:
        return built
    from evaldelta.comparison.sequential import anytime

    return anytime(built, evidence.arrivals, evidence.order)


def _repeats(evidence: Evidence, options: Options) -> RepeatReduction | None:
    """How repeats were reduced, when it is not the plain case mean that every tool shares."""
    tools = {r.path: r.reducer for r in evidence.imports if r.reducer}
    if evidence.reducer == "mean" and all(v == "mean" for v in tools.values()):
        return None
    return RepeatReduction(evidence.reducer, options.reducer_chosen_by, tools)


def _metric(
    evidence: Evidence,
    m: MetricEvidence,
    options: Options,
    traffic: dict[str, float] | None,
    notes: Notes,
) -> MetricResult:
    slicings = []
    for index, ev in enumerate(m.slicings):
        first = index == 0
        slicings.append(
            SlicingBuilder(
                evidence=ev,
                metric=m.metric,
                arms=evidence.arms,
                binary_single=m.binary and not ev.repeated,
                binary=m.binary,
                confidence=options.confidence,
                interval=options.interval,
                mixes=_slicing_mixes(options.named(), ev, first),
                traffic=traffic if first else None,
                notes=notes,
                critical=m.critical,
                critical_selector=evidence.critical_selector,
                pins=evidence.pins,
            ).build()
        )
    repeated = any(ev.repeated for ev in m.slicings)
    low, high = evidence.observed.get(m.metric, (None, None))
    return MetricResult(
        metric=m.metric,
        kind="binary" if m.binary else "graded",
        repeated=repeated,
        unit="case mean of repeats" if repeated else "attempt",
        slicings=tuple(slicings),
        observed_low=low,
        observed_high=high,
        scale=evidence.scale,
    )


def _slicing_mixes(
    mixes: tuple[NamedMix, ...], ev: SlicingEvidence, first: bool
) -> tuple[tuple[str, dict[str, float] | None], ...]:
    """``(name, weights)`` of each mix on one slicing column (``None``: the data's own mix).

    A mix file weights the first slicing column's slices, so a later column keeps only the
    ``actual`` and ``equal`` mixes (``actual`` alone when there are none).
    """
    slices = sorted({a.slice for a in ev.arm_stats if a.slice != ALL})
    out: list[tuple[str, dict[str, float] | None]] = []
    for m in mixes:
        if m.kind == "equal":
            out.append((m.name, dict.fromkeys(slices, 1.0)))
        elif m.kind == "actual":
            out.append((m.name, None))
        elif first:
            out.append((m.name, dict(m.weights or {})))
    return tuple(out) if out else (("actual", None),)


def _missing_slicing(evidence: Evidence, given: bool) -> list[str]:
    """A note for a slicing column the rows lack: every case is then one slice, ``all``.

    Issue 24.1: said without a word, the report showed a one-slice table beside its total.
    The note names the columns that look like slicing columns. Asked for with ``--by``, it
    starts with the option (so every format leads with it and the CLI repeats it on
    stderr); met by the default, it is an ordinary note.
    """
    out = []
    for column in evidence.missing_by:
        looks = evidence.slice_lookalikes
        like = (
            f"columns that look like slicing columns: {', '.join(looks)} (--by {looks[0]})"
            if looks
            else "no column looks like a slicing column either"
        )
        if given:
            out.append(
                f"--by {column}: the rows have no {column!r} column, so every case is in one "
                f"slice, 'all', and there is no per-slice breakdown; {like}"
            )
        elif looks:
            out.append(
                f"The rows have no {column!r} column (the default --by {column}), so every "
                f"case is in one slice, 'all'; {like}"
            )
        else:
            out.append(
                f"The rows have no {column!r} column: every case is in one slice, 'all' "
                "(name a slicing column with --by COLUMN to see the results per slice)"
            )
    return out


def _many_slices(evidence: Evidence) -> list[str]:
    """A note for each slicing column that cuts the cases into very many or one-case slices.

    ``--by case_id`` makes one slice per case: every slice's interval is as wide as it can
    be and the report runs to thousands of lines, which is almost never what was meant.
    """
    out = []
    for column in evidence.by:
        k, single = evidence.slice_sizes[column]
        if k > MANY_SLICES or (k > 5 and single > k / 2):
            out.append(
                f"--by {column} cuts the cases into {k:,} slices ({single:,} of them one case "
                "each); per-slice intervals on so few cases are too wide to decide anything "
                "(did you mean a slicing column fixed before the outcomes, such as a task?)"
            )
    return out

"""What phase two reads: the evidence of a comparison, as plain typed values.

DESIGN.md draws a comparison in two phases. Phase one (:func:`evaldelta.engine.evidence.gather`)
runs every query and returns an :class:`Evidence`; phase two (:mod:`evaldelta.comparison`)
turns it into a :class:`~evaldelta.comparison.model.Comparison`. The types of that hand-over
live here, apart from the engine, so that phase two (and a test that builds evidence by hand)
loads no backend: this module imports no Ibis, DuckDB or pyarrow, only the standard library,
the row seam's plain types (pins, the import report) and :mod:`evaldelta.stats`; the
Comparison's model imports this, not the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaldelta.errors import BadValueError, Location
from evaldelta.sources._pins import PinValue
from evaldelta.sources._report import ImportReport
from evaldelta.stats._reducers import Reducer

__all__ = [
    "ALL",
    "OUTPUT_CHARS",
    "ArmSliceStats",
    "ArrivedCase",
    "CaseArrivals",
    "CriticalSelector",
    "CriticalStats",
    "DeltaBins",
    "Escalation",
    "Evidence",
    "MetricEvidence",
    "Moments",
    "PairEvidence",
    "PairSliceStats",
    "RepeatEvidence",
    "RepeatSpreadMoments",
    "Request",
    "SampleRow",
    "SampleSideBySide",
    "SampleState",
    "SlicingEvidence",
    "ThreeArmEvidence",
    "ThreeArmStats",
    "UpstreamCounts",
    "UpstreamKind",
    "check_summarizable",
]

OUTPUT_CHARS = 4000  # longest stored output carried per moved case (row-level, bounded)
SampleState = Literal["right", "wrong", "partly"]


@dataclass(frozen=True)
class SampleRow:
    """One paired case of a side-by-side: each arm's case mean and output.

    ``baseline_state`` / ``candidate_state`` are ``right`` (every scored attempt passed),
    ``wrong`` (none did) or ``partly`` (some epochs passed). Outputs are untrusted text.
    """

    case_id: str
    slice: str
    baseline: float
    candidate: float
    baseline_state: SampleState
    candidate_state: SampleState
    baseline_output: str | None = None
    candidate_output: str | None = None


@dataclass(frozen=True)
class SampleSideBySide:
    """Every paired sample of one pass/fail metric, which arm got it right and which wrong.

    Built for imported Inspect AI logs (inspect_ai #1327): ``counts`` maps
    ``"BASELINE_STATE/CANDIDATE_STATE"`` to the number of paired cases, over all of them;
    ``rows`` lists up to ``limit`` of them, the cases the candidate lost first, then those it
    won, those both got wrong, partly, and right.
    """

    metric: str
    by: str
    baseline: str
    candidate: str
    paired: int
    counts: Mapping[str, int]
    rows: tuple[SampleRow, ...]
    limit: int


UpstreamKind = Literal["prompt", "payload", "retrieval"]
ALL = "__all__"  # the slice name of a whole arm or pair (every case), beside the slices


@dataclass(frozen=True)
class Moments:
    """Count, sum and sum of squares of case-level values."""

    n: int
    total: float
    sumsq: float

    @property
    def mean(self) -> float:
        """The mean, or NaN when there are no values (reported, never 0)."""
        return self.total / self.n if self.n else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation (ddof=1); NaN below two values."""
        if self.n < 2:
            return math.nan
        var = (self.sumsq - self.total * self.total / self.n) / (self.n - 1)
        return math.sqrt(max(var, 0.0))


@dataclass(frozen=True)
class ArmSliceStats:
    """What one arm did in one slice (``slice == ALL`` for the whole arm)."""

    arm: str
    slice: str
    cases: int
    attempts: int
    reviewed: int
    scores: Moments
    max_scored_per_case: int
    cost_usd: float | None
    attempt_total: float = 0.0
    clusters: tuple[tuple[int, float], ...] | None = None
    with_pass: int = 0  # cases whose mean score is above 0 (pass/fail: passed at least once)
    with_fail: int = 0  # cases whose mean score is below 1 (pass/fail: failed at least once)

    @property
    def unlabeled(self) -> int:
        """Attempts with no score yet."""
        return self.attempts - self.reviewed

    @property
    def attempt_mean(self) -> float:
        """Mean over scored attempts (every run counts once), for contrast with case means."""
        return self.attempt_total / self.reviewed if self.reviewed else math.nan


@dataclass(frozen=True)
class PairSliceStats:
    """Candidate minus baseline on the cases both arms scored, in one slice."""

    baseline: str
    candidate: str
    slice: str
    delta: Moments
    nonzero: int
    base: Moments
    cand: Moments
    both_pass: int
    only_baseline: int
    only_candidate: int
    both_fail: int
    only_in_baseline: int
    only_in_candidate: int
    unscored_in_one: int
    clusters: tuple[tuple[int, float], ...] | None = field(default=None)


@dataclass(frozen=True)
class CriticalSelector:
    """Which cases are critical, and what counts as a passing attempt.

    ``pass_threshold`` None means score >= 1 (binary metrics); a graded metric needs one.
    ``regression_cases`` are ids from a regression set: critical where the rows have them,
    and flagged ``regression``; unlike ``cases``, an id the data lacks is no error here (the
    gate reports it as not run).
    ``origin`` maps ``cases`` / ``column`` / ``tag`` / ``pass_threshold`` to where the value
    came from (a policy file line), so errors about them can name it.
    """

    cases: tuple[str, ...] = ()
    column: str | None = None
    tag: str | None = None
    pass_threshold: float | None = None
    origin: Mapping[str, Location] = field(default_factory=dict, compare=False)
    regression_cases: tuple[str, ...] = ()

    def describe(self) -> str:
        """A short description: ``ids R1, R2; column 'critical'; tag 'critical'``."""
        parts = []
        if self.cases:
            shown = ", ".join(self.cases[:5]) + (", ..." if len(self.cases) > 5 else "")
            parts.append(f"ids {shown}")
        if self.column is not None:
            parts.append(f"column {self.column!r}")
        if self.tag is not None:
            parts.append(f"tag {self.tag!r}")
        if self.regression_cases:
            n = len(self.regression_cases)
            parts.append(f"regression set ({n} case{'' if n == 1 else 's'})")
        return "; ".join(parts)


@dataclass(frozen=True)
class CriticalStats:
    """One critical case in one arm: attempts, scored attempts and passing attempts."""

    case_id: str
    arm: str
    slices: Mapping[str, str]
    flagged_by: tuple[str, ...]
    attempts: int
    scored: int
    passes: int


@dataclass(frozen=True)
class DeltaBins:
    """One slice's paired deltas: ``len(counts)`` fixed-width bins and the zero count."""

    slice: str
    n: int
    zero: int
    edges: tuple[float, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class Escalation:
    """How escalation is read: ``escalated``, or ``model_used`` != the cheap model."""

    basis: Literal["escalated", "model_used"]
    cheap_model: str | None
    cheap_models_seen: int  # distinct model_used values of the cheap arm (1 is expected)


@dataclass(frozen=True)
class ThreeArmStats:
    """Sums over one slice (``slice == ALL`` for every case) of the three-arm pivot.

    ``n`` counts cases all three arms scored; the means and the two delta moments (strong -
    cheap, cascade - cheap) are over those. ``kept`` are the cases cascade and strong both
    scored where no cascade attempt escalated; ``divergent`` is cascade - strong on them.
    """

    slice: str
    n: int
    cheap_total: float
    cascade_total: float
    strong_total: float
    gap: Moments
    recovered: Moments
    cascade_attempts: int
    escalation_known: int | None
    escalated_attempts: int | None
    escalated_cases: int | None
    divergent: Moments | None
    cases: tuple[int, int, int]
    cost_usd: tuple[float, float, float] | None


@dataclass(frozen=True)
class UpstreamCounts:
    """One kind of upstream input, compared between the baseline and one candidate."""

    baseline: str
    candidate: str
    kind: UpstreamKind
    paired: int
    compared: int
    differing: int
    # (case_id, baseline hash, candidate hash, baseline text, candidate text)
    examples: tuple[tuple[str, str | None, str | None, str | None, str | None], ...] = field(
        default=()
    )


@dataclass(frozen=True)
class Request:
    """What the comparison asks of the data (arms, slicings, what the report lists)."""

    baseline: str | None = None
    candidates: Sequence[str] | None = None
    by: tuple[str, ...] = ("slice",)
    scale: tuple[float, float] | None = None
    list_limit: int | None = 50
    critical: CriticalSelector | None = None
    three_arm: Sequence[str] | None = None
    reducer: Reducer | None = None  # repeats per case: None or the mean is the case mean
    order: str | None = None  # a sequential comparison: the order column (its arrivals)


@dataclass(frozen=True)
class PairEvidence:
    """The baseline against one candidate, on one slicing column.

    ``slices`` end with the overall row (slice ``ALL``); ``listing`` holds the bounded
    one-arm-only and moved-case lists (:func:`evaldelta.engine.list_cases`); ``outputs``
    each listed moved case's stored output per arm, keyed ``(case_id, arm)``.
    """

    candidate: str
    slices: tuple[PairSliceStats, ...]
    histograms: Mapping[str, DeltaBins]
    listing: Mapping[str, list[dict[str, Any]]]
    outputs: Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class SlicingEvidence:
    """One slicing column of one metric: per-(arm, slice) sums and each pair's tables."""

    by: str
    arm_stats: tuple[ArmSliceStats, ...]
    pairs: tuple[PairEvidence, ...]

    @property
    def repeated(self) -> bool:
        """Some case has more than one scored attempt in some arm."""
        return any(a.max_scored_per_case > 1 for a in self.arm_stats)


@dataclass(frozen=True)
class MetricEvidence:
    """One metric: whether it is pass/fail, its slicings, weights and critical cases."""

    metric: str
    binary: bool  # every score is 0 or 1 (with or without repeats)
    slicings: tuple[SlicingEvidence, ...]
    sample_weight_totals: Mapping[str, float] | None = None  # per slice of the first column
    critical: tuple[list[CriticalStats], float] | None = None
    samples: tuple[SampleSideBySide, ...] = ()  # Inspect AI logs, pass/fail: every sample


@dataclass(frozen=True)
class ThreeArmEvidence:
    """The three-arm (cheap, cascade, strong) sums per slice, and how escalation is read."""

    roles: tuple[str, str, str]  # (cheap, cascade, strong)
    roles_from: Literal["given", "pins"]
    metric: str
    by: str
    escalation: Escalation | None
    rows: tuple[ThreeArmStats, ...]  # the overall row last


@dataclass(frozen=True)
class ArrivedCase:
    """One arm's reduced value on one case, and when the case arrived (the order column).

    ``order`` is the smallest value of the order column over the case's rows in the arm (a
    number, or a timestamp in seconds): a case arrives with its first attempt.
    """

    case_id: str
    slice: str
    order: float
    value: float


@dataclass(frozen=True)
class CaseArrivals:
    """One metric and slicing column: each compared arm's scored cases in arrival order."""

    metric: str
    by: str
    arms: Mapping[str, tuple[ArrivedCase, ...]]


@dataclass(frozen=True)
class RepeatSpreadMoments:
    """A graded metric's spread across repeats in one (arm, slice), as sums over cases.

    Over the ``cases`` with at least 2 scored attempts: ``sd_total`` and ``sd_sumsq`` sum
    each case's standard deviation (ddof = 1) and its square; ``within_ss`` sums
    ``(n_i - 1) s_i^2`` and ``within_df`` sums ``n_i - 1``; ``short`` counts the others.
    """

    cases: int
    short: int
    sd_total: float
    sd_sumsq: float
    within_ss: float
    within_df: int


@dataclass(frozen=True)
class RepeatEvidence:
    """One metric's repeats on one slicing column, as counts of cases (no case leaves).

    ``cells``: arm -> slice -> ``(attempts, passes)`` -> cases (pass/fail metrics; a case's
    scored attempts and those at 1); ``pairs``: candidate -> slice -> ``(baseline attempts,
    baseline passes, candidate attempts, candidate passes)`` -> shared cases; ``spread``:
    arm -> slice -> moments (graded metrics); ``identical``: arm -> ``(cases with 2 or more
    stored outputs, those whose outputs are all byte-identical)``, when rows carry outputs.
    """

    metric: str
    by: str
    binary: bool
    cells: Mapping[str, Mapping[str, Mapping[tuple[int, int], int]]] = field(default_factory=dict)
    pairs: Mapping[str, Mapping[str, Mapping[tuple[int, int, int, int], int]]] = field(
        default_factory=dict
    )
    spread: Mapping[str, Mapping[str, RepeatSpreadMoments]] = field(default_factory=dict)
    identical: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence:
    """Everything a comparison reads from the data, as plain values."""

    inputs: tuple[str, ...]
    arms: tuple[str, ...]  # baseline first, then the candidates
    present: tuple[str, ...]
    baseline_reason: str
    by: tuple[str, ...]
    slice_names: tuple[str, ...]  # of the first slicing column, over the compared arms
    slice_sizes: Mapping[str, tuple[int, int]]  # column -> (slices, one-case slices)
    trimmed: int
    observed: Mapping[str, tuple[float | None, float | None]]
    metrics: tuple[MetricEvidence, ...]
    pins: Mapping[str, Mapping[str, PinValue]]
    imports: tuple[ImportReport, ...] = ()
    three_arm: ThreeArmEvidence | None = None
    critical_selector: str = ""
    scale: tuple[float, float] | None = None
    upstream: tuple[UpstreamCounts, ...] = ()  # per pair and kind: prompt/payload/retrieval
    reducer: str = "mean"  # how each case's repeats were reduced (stats._reducers names)
    # slicing columns no source has (every case in one slice, "all"), and the columns that
    # look like slicing columns, to name in the note that says so (engine/_lookalike.py)
    missing_by: tuple[str, ...] = ()
    slice_lookalikes: tuple[str, ...] = ()
    # a sequential comparison (``--sequential``): the order column, and each metric's cases
    # in the order they arrived (comparison/sequential.py reads the intervals off them)
    order: str | None = None
    arrivals: tuple[CaseArrivals, ...] = ()
    # repeated attempts (2 or more on some case): per metric, on the first slicing column
    repeats: tuple[RepeatEvidence, ...] = ()

    @property
    def baseline(self) -> str:
        """The baseline arm."""
        return self.arms[0]

    @property
    def candidates(self) -> tuple[str, ...]:
        """The candidate arms, in order."""
        return self.arms[1:]


def check_summarizable(
    arm_stats: Sequence[ArmSliceStats], arms: Sequence[str], metric: str
) -> None:
    """Refuse data that cannot be summarized, with the reason, before any later query fails."""
    overall = [a for a in arm_stats if a.slice == ALL]
    if not any(a.scores.n for a in overall):
        attempts = sum(a.attempts for a in overall)
        raise BadValueError(
            f"no attempt of the compared arms ({', '.join(arms)}) has a "
            f"{metric!r} value: all {attempts} are unlabeled; score them first "
            "(evaldelta score), or name another --metric"
        )
    for a in overall:
        if not (math.isfinite(a.scores.total) and math.isfinite(a.scores.sumsq)):
            raise BadValueError(
                f"the {metric!r} values of arm {a.arm!r} are too large to summarize: their "
                "sum of squares overflows a float; rescale the metric"
            )

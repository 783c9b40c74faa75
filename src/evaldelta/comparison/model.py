"""The Comparison: everything compare computed, as typed, versioned, frozen objects.

Numbers are never rounded here; rounding happens only in ``report/``. The JSON form
(``to_jsonable``) is validated by ``schema/comparison.schema.json`` in the tests.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from evaldelta.comparison._coupling import Coupling, SliceCoupling
from evaldelta.comparison._leakage_model import (
    STYLE_FLAG,
    CriterionLeakage,
    LeakageExample,
    RubricLeakage,
)
from evaldelta.comparison._planning_model import ShareSweep, SlicePlan, SweepPoint
from evaldelta.comparison._reliability_model import (
    ArmReliability,
    ArmSpread,
    IdenticalRepeats,
    MetricReliability,
    PassHatDelta,
    Reliability,
)
from evaldelta.comparison._sequential_model import Look, Sequential
from evaldelta.comparison._three_arm_model import ThreeArmCost, ThreeArmSlice, ThreeArmSummary
from evaldelta.evidence import SampleSideBySide
from evaldelta.sources._pins import PinValue
from evaldelta.sources._report import ImportIssue, ImportReport
from evaldelta.stats import (
    BreakEven,
    ConfidenceInterval,
    Estimate,
    FixedMix,
    PairedResult,
    SimpsonResult,
    UnpairedResult,
)

__all__ = [
    "SCHEMA_VERSION",
    "STYLE_FLAG",
    "USUAL_SCALES",
    "ArmReliability",
    "ArmSlice",
    "ArmSpread",
    "CaseRef",
    "Comparison",
    "Cost",
    "Coupling",
    "CriterionLeakage",
    "CriticalCase",
    "CriticalEvidence",
    "DeltaHistogram",
    "IdenticalRepeats",
    "ImportIssue",
    "ImportReport",
    "LeakageExample",
    "Look",
    "MetricReliability",
    "MetricResult",
    "MovedCase",
    "NotInComparison",
    "PairComparison",
    "PassHatDelta",
    "PinDifference",
    "PinValue",
    "Pooled",
    "Reliability",
    "RepeatReduction",
    "RubricLeakage",
    "Sequential",
    "ShareSweep",
    "SliceCoupling",
    "SliceDelta",
    "SlicePlan",
    "SlicingResult",
    "Standardized",
    "SweepPoint",
    "ThreeArmCost",
    "ThreeArmSlice",
    "ThreeArmSummary",
    "TwoByTwo",
    "UpstreamCheck",
    "UpstreamExample",
    "anytime_types",
    "json_left_out",
    "to_jsonable",
]

SCHEMA_VERSION = "1.0"
_T = TypeVar("_T")
ALL_CASES = "(all cases)"
# the scales graded scores usually come on, narrowest first: a score range is read as the
# first that holds it (report/_facts.scale_phrase; plan's check of --effect)
USUAL_SCALES = ((0.0, 1.0), (1.0, 5.0), (0.0, 5.0), (1.0, 10.0), (0.0, 10.0), (0.0, 100.0))


@dataclass(frozen=True)
class ArmSlice:
    """One arm in one slice: counts, and the rate (binary) or mean of case means (graded)."""

    arm: str
    slice: str
    cases: int
    attempts: int
    reviewed: int
    unlabeled: int
    scored_cases: int
    estimate: Estimate
    sd: float
    attempt_mean: float
    traffic_share: float | None = None
    cost_usd: float | None = None
    clustered_se: float | None = None
    clustered_ci: ConfidenceInterval | None = None


@dataclass(frozen=True)
class TwoByTwo:
    """Paired binary outcomes: the two concordant and the two discordant cells."""

    both_pass: int
    only_baseline: int
    only_candidate: int
    both_fail: int


@dataclass(frozen=True)
class DeltaHistogram:
    """The per-case paired deltas (candidate minus baseline) of one slice, binned.

    ``counts[i]`` counts the non-zero deltas in ``[edges[i], edges[i + 1])`` (the last bin
    is closed): fixed-width bins over the range of the non-zero deltas, at most 40. Deltas
    exactly zero are counted in ``zero``, never in a bin; ``n = zero + sum(counts)``.
    Filled for graded or repeated paired data (binary single-attempt data has the 2x2 table).
    """

    n: int
    zero: int
    edges: tuple[float, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class SliceDelta:
    """Candidate minus baseline in one slice (or over all cases).

    ``paired`` is the analysis on shared cases; when the arms share no case in the slice it
    is None and ``unpaired`` carries the analysis. Otherwise ``unpaired`` is the Welch
    contrast on the same shared cases, shown only so the reader sees what pairing bought.
    """

    slice: str
    basis: Literal["paired", "unpaired", "none"]
    n_pairs: int
    baseline_mean: float
    candidate_mean: float
    paired: PairedResult | None
    unpaired: UnpairedResult | None
    pvalue_holm: float | None
    table: TwoByTwo | None
    informative: int | None
    informative_share: float | None
    only_in_baseline: int
    only_in_candidate: int
    unscored_in_one: int
    weight: float | None = None
    traffic_share: float | None = None
    clustered_se: float | None = None
    clustered_ci: ConfidenceInterval | None = None
    histogram: DeltaHistogram | None = None
    # binary paired data: the interval by the other method ("wald" or "newcombe"), shown
    # beside the chosen one so a reader can see how much the method matters
    alternative_ci: ConfidenceInterval | None = None
    alternative_interval: Literal["wald", "newcombe"] | None = None
    # a paired slice with an interval: what sample would settle it against zero (the
    # reports' plan rows where the interval contains zero; :mod:`evaldelta.comparison._settle`)
    plan: SlicePlan | None = None

    @property
    def main(self) -> PairedResult | UnpairedResult | None:
        """The result the slice is judged on: paired when possible, else unpaired."""
        return self.paired if self.paired is not None else self.unpaired


@dataclass(frozen=True)
class Standardized:
    """A fixed-mix (directly standardized) result under one named mix."""

    mix: str
    weights: Mapping[str, float]
    per_arm: Mapping[str, FixedMix]
    delta: FixedMix
    delta_basis: Literal["paired", "unpaired"]
    dropped_slices: tuple[str, ...]
    dropped_weight: float
    # per slice of the delta: the shares at which it would flip the delta or its interval
    break_even: tuple[BreakEven, ...] = ()
    # the inputs of ``delta``: each used slice's delta and its SE inside the mix, so a
    # reader (the gate, a sensitivity plot) can move one slice's share without the data
    slice_deltas: Mapping[str, float] = field(default_factory=dict)
    slice_ses: Mapping[str, float] = field(default_factory=dict)
    # the Satterthwaite df of the fixed-mix t interval those inputs make (None: normal), held
    # as a share moves (stats.break_even, stats.share_sweep)
    mix_df: float | None = None
    # "ahead" / "behind": the delta's interval lies above / below zero; "includes_zero";
    # "undefined" when the delta or its interval is not finite
    verdict: Literal["ahead", "behind", "includes_zero", "undefined"] = "undefined"
    # the mix is the paired cases' own (every slice weighted by its share of the pairs): the
    # standardized delta is then the all-cases paired delta and ``delta`` carries its
    # interval, and each arm's rate is its rate on the shared cases (issue 24, item 5)
    same_as_overall: bool = False
    # pass/fail pairs: the discordant pairs of the used slices, and how many they are worth
    # once weighted (stats.effective_discordant); below stats.MIN_DISCORDANT the reports say
    # what the interval rests on
    discordant: int | None = None
    effective_discordant: float | None = None


@dataclass(frozen=True)
class Pooled:
    """Each arm on its own mix: the number a single scalar per run reports."""

    baseline: float
    candidate: float
    delta: float
    baseline_attempt_mean: float
    candidate_attempt_mean: float


@dataclass(frozen=True)
class CaseRef:
    """A case named in a listing."""

    case_id: str
    slice: str


@dataclass(frozen=True)
class MovedCase:
    """A case whose score differs between the arms (a discordant pair).

    ``baseline_output`` / ``candidate_output`` carry each arm's stored ``output`` text (its
    lowest repeat, cut at :data:`OUTPUT_CHARS` characters) when the rows have an ``output``
    column; None otherwise. The text is untrusted: renderers escape it.
    """

    case_id: str
    slice: str
    baseline: float
    candidate: float
    delta: float
    baseline_output: str | None = None
    candidate_output: str | None = None


@dataclass(frozen=True)
class Cost:
    """Total and per-case cost of each arm, from ``cost_usd``."""

    baseline_usd: float
    candidate_usd: float
    baseline_per_case: float
    candidate_per_case: float
    ratio: float


@dataclass(frozen=True)
class CriticalCase:
    """One critical case: each arm's attempts, scored attempts and passing attempts.

    ``flagged_by`` says why the case is critical: ``id`` (named), ``column`` (a truthy flag
    column), ``tag`` (a tag in ``tags``) and/or ``regression`` (in a regression set).
    """

    case_id: str
    slice: str
    flagged_by: tuple[str, ...]
    baseline_attempts: int
    baseline_scored: int
    baseline_passes: int
    candidate_attempts: int
    candidate_scored: int
    candidate_passes: int


@dataclass(frozen=True)
class CriticalEvidence:
    """Row-level evidence on the critical cases (an attempt passes when score >= threshold)."""

    selector: str
    pass_threshold: float
    cases: tuple[CriticalCase, ...]


class NotInComparison(KeyError):
    """A metric, slicing, candidate or slice the Comparison does not hold; says what it holds."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _one(kind: str, name: str, found: Mapping[str, _T]) -> _T:
    """``found[name]``, or :class:`NotInComparison` naming what there is."""
    if name in found:
        return found[name]
    held = ", ".join(repr(k) for k in found) or "none"
    raise NotInComparison(f"no {kind} {name!r} in this comparison; it has: {held}")


@dataclass(frozen=True)
class PairComparison:
    """Baseline against one candidate, under one slicing column.

    ``only_in_baseline`` / ``only_in_candidate`` list cases present in one arm only, up to
    the comparison's list limit; ``overall.only_in_baseline`` (and each slice's) counts
    them all. ``discordant`` likewise lists up to the limit of ``discordant_total``.
    """

    baseline: str
    candidate: str
    shared_cases: int
    paired_available: bool
    overall: SliceDelta
    slices: tuple[SliceDelta, ...]
    standardized: tuple[Standardized, ...]
    pooled: Pooled
    simpson: SimpsonResult | None
    only_in_baseline: tuple[CaseRef, ...]
    only_in_candidate: tuple[CaseRef, ...]
    discordant_total: int
    discordant: tuple[MovedCase, ...]
    cost: Cost | None = None
    critical: CriticalEvidence | None = None
    # the headline mix's most relevant slices, each swept from 0 to 100% of the mix
    share_sweeps: tuple[ShareSweep, ...] = ()
    # how the arms' per-case outcomes moved together (run --couple: coupled by seed)
    coupling: Coupling | None = None

    def slice(self, name: str) -> SliceDelta:
        """The delta in slice ``name`` (:data:`ALL_CASES` is the overall row)."""
        found = {d.slice: d for d in self.slices}
        found.setdefault(self.overall.slice, self.overall)
        return _one("slice", name, found)


@dataclass(frozen=True)
class SlicingResult:
    """Everything under one slicing column (``--by``)."""

    by: str
    slices: tuple[str, ...]
    arms: tuple[ArmSlice, ...]
    pairs: tuple[PairComparison, ...]


@dataclass(frozen=True)
class MetricResult:
    """One metric (score column), analysed on its own.

    ``observed_low``/``observed_high`` are the range of its scores; with no declared
    ``scale``, the report says what scale they look like (0-1, 1-5, 0-100).
    """

    metric: str
    kind: str  # "binary" | "graded" (a Literal once synthetic.py passes one)
    repeated: bool
    unit: str
    slicings: tuple[SlicingResult, ...]
    observed_low: float | None = None  # the lowest and highest finite score in the rows
    observed_high: float | None = None
    scale: tuple[float, float] | None = None  # declared with --scale; None: not declared

    def scale_range(self) -> tuple[float, float, str] | None:
        """The scale scores lie on, and how it is known: ``(low, high, how)``.

        ``how`` is ``pass/fail`` (0 to 1), ``declared`` (``--scale``) or ``inferred``: the
        first usual scale (:data:`USUAL_SCALES`) that holds every observed score. None when
        no usual scale holds them (or no score was seen).
        """
        if self.kind == "binary":
            return 0.0, 1.0, "pass/fail"
        if self.scale is not None:
            return self.scale[0], self.scale[1], "declared"
        low, high = self.observed_low, self.observed_high
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
            return None
        for a, b in USUAL_SCALES:
            if a <= low and high <= b:
                return a, b, "inferred"
        return None


@dataclass(frozen=True)
class PinDifference:
    """A pin that differs between compared arms beyond what the arms declare (a confound)."""

    key: str
    values: Mapping[str, PinValue]


@dataclass(frozen=True)
class UpstreamExample:
    """One paired case whose upstream input differs: each arm's hash and, if stored, text."""

    case_id: str
    baseline_hash: str | None
    candidate_hash: str | None
    baseline_text: str | None = None
    candidate_text: str | None = None


@dataclass(frozen=True)
class UpstreamCheck:
    """One kind of upstream input (``prompt``, ``payload``, ``retrieval``) between two arms.

    ``paired`` cases were attempted by both arms, ``compared`` of them carry the hash for
    both, ``differing`` of those saw a different hash set. ``declared`` lists what the arms
    declare as their difference (``model``, ``prompt``, ``payload``, ``retrieval``; from the
    pins, ``--expect-change`` or the policy); ``expected_by`` says who declared this kind
    (``pins``, ``expect_change``, ``policy``; empty: nobody, so a difference is a confound:
    :mod:`evaldelta.comparison.upstream`).
    """

    baseline: str
    candidate: str
    kind: str
    paired: int
    compared: int
    differing: int
    declared: tuple[str, ...]
    expected_by: str
    examples: tuple[UpstreamExample, ...] = ()

    @property
    def confounded(self) -> bool:
        """Some paired case saw a different input of a kind the arms do not declare."""
        return self.differing > 0 and not self.expected_by


@dataclass(frozen=True)
class RepeatReduction:
    """How each case's repeated attempts became one value, beside how their tools reduce them.

    ``reducer`` is the one used (``mean``: the case mean, the default; the others are
    :mod:`evaldelta.stats._reducers`); ``chosen_by`` says why (``--reduce``, the logs' own
    reducer, or the default); ``tools`` maps each input whose tool records a reducer of its
    own (an Inspect AI log's epochs reducer) to it, so a report can say when its figures
    reduce otherwise than the tool's.
    """

    reducer: str
    chosen_by: str  # "--reduce" | "the logs' own" | "default"
    tools: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Comparison:
    """The result artifact of ``evaldelta compare``.

    ``inputs`` are the sources as a person would name them: relative to the current folder
    when they lie under it, a bundled data file by its name. ``pins`` maps each compared arm
    to its recorded configuration (flat ``dotted.key -> value``), filled when a source is a
    run store (``evaldelta run``); empty otherwise. ``pin_differences`` are the pins that
    differ between the compared arms beyond the declared arm difference (model, template,
    provider, routing: :mod:`evaldelta.comparison.pins`), which compare reports loudly.
    ``upstream`` compares, per arm pair, the hashes of each attempt's rendered prompt,
    request payload and retrieved documents (:mod:`evaldelta.sources.hashes`), when rows carry them.
    ``baseline_reason`` says how the baseline was chosen (``--baseline``, or the first
    input's first arm: :func:`evaldelta.engine.evidence._arm_order`). ``imports`` say, for each
    source read by an importer (an Inspect AI log, ...), what
    was mapped and what could not be (errored samples, unknown score values, ...).
    ``rubric_leakage`` screens the ``check.<id>`` metrics, one rubric per candidate, for
    criteria whose failures sit in one arm (:mod:`evaldelta.comparison.leakage`); empty without
    them.
    """

    schema_version: str
    evaldelta_version: str
    inputs: tuple[str, ...]
    baseline: str
    candidates: tuple[str, ...]
    arms_present: tuple[str, ...]
    confidence: float
    interval: str
    mix: str
    traffic: str | None
    metrics: tuple[MetricResult, ...]
    notes: tuple[str, ...] = field(default=())
    pins: Mapping[str, Mapping[str, PinValue]] = field(default_factory=dict)
    pin_differences: tuple[PinDifference, ...] = field(default=())
    three_arm: ThreeArmSummary | None = None
    imports: tuple[ImportReport, ...] = field(default=())
    baseline_reason: str = ""
    rubric_leakage: tuple[RubricLeakage, ...] = field(default=())  # check.<id> metrics only
    upstream: tuple[UpstreamCheck, ...] = field(default=())
    mixes: tuple[str, ...] = field(default=())  # every named mix (``mix`` is the first)
    repeats: RepeatReduction | None = None  # set when a reducer or a tool's reducer applies
    # every paired sample, right and wrong per arm (imported Inspect AI logs, pass/fail)
    samples: tuple[SampleSideBySide, ...] = field(default=())
    # set when every interval is a confidence sequence in the order of a column (--sequential)
    sequential: Sequential | None = None
    # with repeated attempts: pass@k, pass^k and the paired pass^k delta, or the spread
    reliability: Reliability | None = None

    def slicing(self, metric: str | None = None, by: str | None = None) -> SlicingResult:
        """One metric's results under one slicing column (defaults: the first of each)."""
        found = {m.metric: m for m in self.metrics}
        chosen: MetricResult = _one("metric", metric, found) if metric else self.metrics[0]
        if by is None:
            return chosen.slicings[0]
        return _one("slicing", by, {s.by: s for s in chosen.slicings})

    def pair(
        self, candidate: str, metric: str | None = None, by: str | None = None
    ) -> PairComparison:
        """The baseline against ``candidate`` (defaults: the first metric and slicing)."""
        pairs = {p.candidate: p for p in self.slicing(metric, by).pairs}
        return _one("candidate", candidate, pairs)


@functools.cache
def anytime_types() -> tuple[type, ...]:
    """The anytime-valid result types (imported on first use: they load numpy)."""
    from evaldelta.stats import AnytimeEstimate, AnytimeResult

    return (AnytimeResult, AnytimeEstimate)


def json_left_out(tp: type) -> frozenset[str]:
    """Fields a result type holds for the code but not for a reader.

    An anytime result's per-case ``values`` in arrival order (as many as the cases:
    unbounded), from which its confidence sequence was read.
    """
    return frozenset({"values"}) if issubclass(tp, anytime_types()) else frozenset()


def to_jsonable(obj: Any) -> Any:
    """Turn a result tree into JSON-ready values: NaN and infinities become null.

    An anytime-valid result (a confidence sequence: :class:`~evaldelta.stats.AnytimeResult`,
    :class:`~evaldelta.stats.AnytimeEstimate`) is marked ``"anytime": true`` and carries its
    range (``low_end``, ``high_end``) but not its per-case ``values`` (:func:`json_left_out`).
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        left_out = json_left_out(type(obj))
        out = {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in dataclasses.fields(obj)
            if f.name not in left_out
        }
        if isinstance(obj, SimpsonResult):
            out["kind"] = obj.kind
        if left_out:  # an anytime result
            out["anytime"] = True
        return out
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj

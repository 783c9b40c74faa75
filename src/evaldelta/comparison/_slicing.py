"""One slicing column of one metric: per-arm summaries, per-pair slice deltas, mixes.

Pure: :class:`SlicingBuilder` reads a :class:`~evaldelta.engine.evidence.SlicingEvidence`
and runs no query. :mod:`evaldelta.comparison._build` calls it once per (metric, slicing
column).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evaldelta import stats
from evaldelta.comparison._coupling import pair_coupling
from evaldelta.comparison._notes import Notes
from evaldelta.comparison._settle import with_plans
from evaldelta.comparison._standardized import Standardizer, normalize
from evaldelta.comparison.model import (
    ALL_CASES,
    ArmSlice,
    CaseRef,
    Cost,
    CriticalCase,
    CriticalEvidence,
    DeltaHistogram,
    MovedCase,
    PairComparison,
    Pooled,
    SliceDelta,
    SlicingResult,
    TwoByTwo,
)
from evaldelta.evidence import (
    ALL,
    ArmSliceStats,
    CriticalStats,
    DeltaBins,
    PairEvidence,
    PairSliceStats,
    SlicingEvidence,
    check_summarizable,
)
from evaldelta.sources._pins import PinValue

__all__ = ["SlicingBuilder"]
Interval = Literal["wald", "newcombe"]


@dataclass
class SlicingBuilder:
    """Build the :class:`~evaldelta.comparison.model.SlicingResult` of one slicing's evidence."""

    evidence: SlicingEvidence
    metric: str
    arms: tuple[str, ...]  # baseline first
    binary_single: bool
    confidence: float
    interval: str
    mixes: tuple[tuple[str, dict[str, float] | None], ...]  # (name, weights); None: actual
    traffic: dict[str, float] | None
    notes: Notes
    critical: tuple[list[CriticalStats], float] | None = None
    critical_selector: str = ""
    binary: bool = False  # every score is 0 or 1 (with or without repeats)
    pins: Mapping[str, Mapping[str, PinValue]] = field(default_factory=dict)  # per arm

    @property
    def by(self) -> str:
        """The slicing column."""
        return self.evidence.by

    @property
    def arm_stats(self) -> tuple[ArmSliceStats, ...]:
        """Per-(arm, slice) sums, the overall rows included."""
        return self.evidence.arm_stats

    def build(self) -> SlicingResult:
        """Check the evidence is summarizable, then summarize every arm and pair."""
        check_summarizable(self.arm_stats, self.arms, self.metric)
        slices = tuple(sorted({a.slice for a in self.arm_stats if a.slice != ALL}))
        actual = self._actual_weights()
        mixes = [(name, actual if w is None else w) for name, w in self.mixes]
        traffic_share = normalize(self.traffic) if self.traffic else None
        arms = tuple(self._arm_slice(a, traffic_share) for a in self.arm_stats)
        pairs = tuple(
            with_plans(self._pair(p, mixes, traffic_share), arms, self.confidence)
            for p in self.evidence.pairs
        )
        return SlicingResult(by=self.by, slices=slices, arms=arms, pairs=pairs)

    # -- per arm --------------------------------------------------------------------------
    def _actual_weights(self) -> dict[str, float]:
        """The eval set's own slice mix: scored cases of all compared arms together."""
        out: dict[str, float] = {}
        for a in self.arm_stats:
            if a.slice != ALL:
                out[a.slice] = out.get(a.slice, 0.0) + a.scores.n
        return out

    def _estimate(self, a: ArmSliceStats) -> stats.Estimate:
        if self.binary_single:
            return stats.proportion(round(a.scores.total), a.scores.n, self.confidence)
        if self.binary and a.scores.n:  # pass/fail with repeats: a rate, inside [0, 1]
            mean = min(1.0, max(0.0, a.scores.mean))
            attempts = max(a.reviewed, a.scores.n)
            return stats.proportion_of_means(
                a.scores.n,
                mean,
                a.scores.sd,
                attempts,
                self.confidence,
                minority_cases=min(a.with_pass, a.with_fail),
            )
        return stats.mean_t(a.scores.n, a.scores.mean, a.scores.sd, self.confidence)

    def _arm_slice(self, a: ArmSliceStats, traffic: dict[str, float] | None) -> ArmSlice:
        label = ALL_CASES if a.slice == ALL else a.slice
        with self.notes.capture(f"{self.metric}, arm {a.arm}, slice {label}"):
            est = self._estimate(a)
            cse, cci = self._clustered(a.clusters, a.scores.sumsq, rate=self.binary)
        return ArmSlice(
            arm=a.arm,
            slice=label,
            cases=a.cases,
            attempts=a.attempts,
            reviewed=a.reviewed,
            unlabeled=a.unlabeled,
            scored_cases=a.scores.n,
            estimate=est,
            sd=a.scores.sd,
            attempt_mean=a.attempt_mean,
            traffic_share=(traffic.get(a.slice) if traffic and a.slice != ALL else None),
            cost_usd=a.cost_usd,
            clustered_se=cse,
            clustered_ci=cci,
        )

    def _clustered(
        self, clusters: tuple[tuple[int, float], ...] | None, sumsq: float, rate: bool = False
    ) -> tuple[float | None, stats.ConfidenceInterval | None]:
        """CR2 clustered SE and its t interval on Bell-McCaffrey df (Imbens and Kolesar 2016).

        A pass rate (``rate``) takes Korn and Graubard's interval on the same variance, which
        stays in [0, 1] and holds near 0 and 1 (:func:`evaldelta.stats.clustered_proportion`).
        """
        if not clusters:
            return None, None
        make = stats.clustered_proportion if rate else stats.clustered_mean
        est = make([c[0] for c in clusters], [c[1] for c in clusters], sumsq, self.confidence)
        return est.se, est.ci

    # -- per pair -------------------------------------------------------------------------
    def _pair(
        self,
        ev: PairEvidence,
        named: list[tuple[str, dict[str, float]]],
        traffic: dict[str, float] | None,
    ) -> PairComparison:
        base, cand = self.arms[0], ev.candidate
        by_arm = {(a.arm, a.slice): a for a in self.arm_stats}
        pair_stats = ev.slices
        hists = ev.histograms
        norm_w = normalize(named[0][1])  # each slice's weight in the chosen (first) mix
        deltas: list[SliceDelta] = []
        overall: SliceDelta | None = None
        for p in pair_stats:
            delta = self._slice_delta(
                p, by_arm[(base, p.slice)], by_arm[(cand, p.slice)], norm_w, traffic
            )
            delta = _replace(delta, histogram=_histogram(hists.get(p.slice)))
            if p.slice == ALL:
                overall = delta
            else:
                deltas.append(delta)
        if overall is None:  # pragma: no cover - reduce_slices always returns ALL
            raise RuntimeError("the engine returned no overall row for the pair")
        deltas = _with_holm(deltas)
        paired_available = overall.n_pairs > 0
        mixes = list(named)
        if self.traffic:
            mixes.append(("traffic", self.traffic))
        shared = {p.slice: p for p in pair_stats if p.slice != ALL}
        mixer = Standardizer(
            metric=self.metric,
            confidence=self.confidence,
            binary=self.binary,
            binary_single=self.binary_single,
            notes=self.notes,
            estimate=self._estimate,
            shared_estimate=self._shared_estimate,
            sample_mixes=frozenset(name for name, w in self.mixes if w is None),
        )
        standardized = tuple(
            mixer.standardize(
                name, w, base, cand, by_arm, deltas, shared, paired_available, overall,
                pair_stats[-1],
            )
            for name, w in mixes
        )  # fmt: skip
        b_all, c_all = by_arm[(base, ALL)], by_arm[(cand, ALL)]
        with self.notes.capture(f"{self.metric}, {cand} vs {base}, mix check"):
            # the traffic mix when there is one, else the chosen mix
            simpson = self._simpson(base, cand, by_arm, self.traffic or named[0][1])
        listing = ev.listing
        return PairComparison(
            baseline=base,
            candidate=cand,
            shared_cases=overall.n_pairs,
            paired_available=paired_available,
            overall=overall,
            slices=tuple(deltas),
            standardized=standardized,
            pooled=Pooled(
                baseline=b_all.scores.mean,
                candidate=c_all.scores.mean,
                delta=c_all.scores.mean - b_all.scores.mean,
                baseline_attempt_mean=b_all.attempt_mean,
                candidate_attempt_mean=c_all.attempt_mean,
            ),
            simpson=simpson,
            only_in_baseline=tuple(
                CaseRef(str(r["case_id"]), str(r["slice"])) for r in listing["only_in_baseline"]
            ),
            only_in_candidate=tuple(
                CaseRef(str(r["case_id"]), str(r["slice"])) for r in listing["only_in_candidate"]
            ),
            discordant_total=pair_stats[-1].nonzero,
            discordant=self._moved(base, cand, listing["discordant"], ev.outputs),
            cost=_cost(b_all, c_all),
            critical=self._critical(base, cand),
            coupling=pair_coupling(pair_stats, self.pins, ALL_CASES),
        )

    def _moved(
        self,
        base: str,
        cand: str,
        rows: list[dict[str, Any]],
        outputs: Mapping[tuple[str, str], str],
    ) -> tuple[MovedCase, ...]:
        """The listed moved cases, with each arm's stored output when the rows have one."""
        return tuple(
            MovedCase(
                str(r["case_id"]),
                str(r["slice"]),
                float(r["baseline"]),
                float(r["candidate"]),
                float(r["delta"]),
                baseline_output=outputs.get((str(r["case_id"]), base)),
                candidate_output=outputs.get((str(r["case_id"]), cand)),
            )
            for r in rows
        )

    def _critical(self, base: str, cand: str) -> CriticalEvidence | None:
        """Pair the critical cases' per-arm counts (an arm with no row counts zero)."""
        if self.critical is None:
            return None
        rows, threshold = self.critical
        per: dict[str, dict[str, CriticalStats]] = {}
        for r in rows:
            per.setdefault(r.case_id, {})[r.arm] = r
        cases = []
        for case_id, arms in per.items():
            b, c = arms.get(base), arms.get(cand)
            any_row = next(iter(arms.values()))
            cases.append(
                CriticalCase(
                    case_id=case_id,
                    slice=any_row.slices[self.by],
                    flagged_by=tuple(sorted({f for a in arms.values() for f in a.flagged_by})),
                    baseline_attempts=b.attempts if b else 0,
                    baseline_scored=b.scored if b else 0,
                    baseline_passes=b.passes if b else 0,
                    candidate_attempts=c.attempts if c else 0,
                    candidate_scored=c.scored if c else 0,
                    candidate_passes=c.passes if c else 0,
                )
            )
        return CriticalEvidence(self.critical_selector, threshold, tuple(cases))

    def _slice_delta(
        self,
        p: PairSliceStats,
        b: ArmSliceStats,
        c: ArmSliceStats,
        weights: dict[str, float],
        traffic: dict[str, float] | None,
    ) -> SliceDelta:
        label = ALL_CASES if p.slice == ALL else p.slice
        alt_ci: stats.ConfidenceInterval | None = None
        alt_method: Interval | None = None
        basis: Literal["paired", "unpaired", "none"]
        paired: stats.PairedResult | None = None
        unpaired: stats.UnpairedResult | None = None
        table = None
        cse = cci = None
        with self.notes.capture(f"{self.metric}, {p.candidate} vs {p.baseline}, {label}"):
            if p.delta.n > 0:
                basis = "paired"
                paired, alt_ci, alt_method, table = self._paired(p)
                unpaired = self._welch(p.base, p.cand)
                bm, cm = p.base.mean, p.cand.mean
                cse, cci = self._clustered(p.clusters, p.delta.sumsq)
            elif b.scores.n > 0 and c.scores.n > 0:
                basis = "unpaired"
                if self.binary_single:
                    unpaired = stats.newcombe_unpaired(
                        round(b.scores.total),
                        b.scores.n,
                        round(c.scores.total),
                        c.scores.n,
                        confidence=self.confidence,
                    )
                else:
                    unpaired = self._welch(b.scores, c.scores)
                bm, cm = b.scores.mean, c.scores.mean
            else:
                basis, bm, cm = "none", b.scores.mean, c.scores.mean
        n_pairs = p.delta.n
        return SliceDelta(
            alternative_ci=alt_ci,
            alternative_interval=alt_method,
            slice=label,
            basis=basis,
            n_pairs=n_pairs,
            baseline_mean=bm,
            candidate_mean=cm,
            paired=paired,
            unpaired=unpaired,
            pvalue_holm=None,
            table=table,
            informative=p.nonzero if n_pairs else None,
            informative_share=p.nonzero / n_pairs if n_pairs else None,
            only_in_baseline=p.only_in_baseline,
            only_in_candidate=p.only_in_candidate,
            unscored_in_one=p.unscored_in_one,
            weight=weights.get(p.slice) if p.slice != ALL else None,
            traffic_share=(traffic.get(p.slice) if traffic and p.slice != ALL else None),
            clustered_se=cse,
            clustered_ci=cci,
        )

    def _paired(
        self, p: PairSliceStats
    ) -> tuple[
        stats.PairedResult, stats.ConfidenceInterval | None, Interval | None, TwoByTwo | None
    ]:
        """The paired delta; for single-attempt pass/fail, also the other interval and 2x2."""
        if not self.binary_single:
            paired = stats.paired_means_from_summary(
                p.delta.n,
                p.delta.mean,
                p.delta.sd,
                confidence=self.confidence,
                informative=p.nonzero,
                pass_fail_repeats=self.binary,
            )
            return paired, None, None, None
        cells = (p.both_pass, p.only_baseline, p.only_candidate, p.both_fail)
        paired = stats.paired_proportions(
            *cells, confidence=self.confidence, interval=self.interval
        )
        other: Interval = "wald" if self.interval == "newcombe" else "newcombe"
        with warnings.catch_warnings():
            # the other method is shown beside for contrast, not relied on
            warnings.simplefilter("ignore", stats.ReliabilityWarning)
            alt = stats.paired_proportions(*cells, confidence=self.confidence, interval=other)
        return paired, alt.ci, other, TwoByTwo(*cells)

    def _welch(self, b: Any, c: Any) -> stats.UnpairedResult:
        return stats.welch(b.mean, b.sd, b.n, c.mean, c.sd, c.n, confidence=self.confidence)

    def _shared_estimate(self, p: PairSliceStats, k: int) -> stats.Estimate:
        """Arm ``k`` (0 baseline, 1 candidate) on the slice's shared cases."""
        m = p.base if k == 0 else p.cand
        if self.binary_single:
            return stats.proportion(round(m.total), m.n, self.confidence)
        if self.binary and m.n:
            mean = min(1.0, max(0.0, m.mean))
            return stats.proportion_of_means(m.n, mean, m.sd, m.n, self.confidence)
        return stats.mean_t(m.n, m.mean, m.sd, self.confidence)

    def _simpson(
        self,
        base: str,
        cand: str,
        by_arm: dict[tuple[str, str], ArmSliceStats],
        weights: dict[str, float],
    ) -> stats.SimpsonResult | None:
        counts: dict[str, dict[str, tuple[float, int]]] = {base: {}, cand: {}}
        for (arm, s), a in by_arm.items():
            if s != ALL and arm in counts and a.scores.n > 0:
                counts[arm][s] = (a.scores.total, a.scores.n)
        if not counts[base] or not counts[cand]:
            return None
        return stats.simpson_check(
            counts, base, cand, weights=weights, graded=not self.binary_single
        )


def _with_holm(deltas: list[SliceDelta]) -> list[SliceDelta]:
    pvalues = [d.main.pvalue if d.main is not None else math.nan for d in deltas]
    adjusted = stats.holm(pvalues) if pvalues else ()
    out = []
    for d, adj in zip(deltas, adjusted, strict=True):
        out.append(_replace(d, pvalue_holm=None if math.isnan(adj) else adj))
    return out


def _replace(d: SliceDelta, **changes: Any) -> SliceDelta:
    import dataclasses

    return dataclasses.replace(d, **changes)


def _histogram(bins: DeltaBins | None) -> DeltaHistogram | None:
    if bins is None:
        return None
    return DeltaHistogram(n=bins.n, zero=bins.zero, edges=bins.edges, counts=bins.counts)


def _cost(b: ArmSliceStats, c: ArmSliceStats) -> Cost | None:
    if b.cost_usd is None or c.cost_usd is None:
        return None
    return Cost(
        baseline_usd=b.cost_usd,
        candidate_usd=c.cost_usd,
        baseline_per_case=b.cost_usd / b.cases if b.cases else math.nan,
        candidate_per_case=c.cost_usd / c.cases if c.cases else math.nan,
        ratio=c.cost_usd / b.cost_usd if b.cost_usd else math.nan,
    )

"""One slicing column of one metric: per-arm summaries, per-pair slice deltas, mixes.

Pure: :class:`SlicingBuilder` reads a :class:`~evaldelta.engine.evidence.SlicingEvidence`
and runs no query. :mod:`evaldelta.comparison._build` calls it once per (metric, slicing
column).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaldelta import stats
from evaldelta.comparison._notes import Notes
from evaldelta.engine import ALL, ArmSliceStats, CriticalStats, PairSliceStats
from evaldelta.engine._histogram import DeltaBins
from evaldelta.engine.evidence import PairEvidence, SlicingEvidence, check_summarizable
from evaldelta.model import (
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
    Standardized,
    TwoByTwo,
)

__all__ = ["SlicingBuilder"]


@dataclass
class SlicingBuilder:
    """Build the :class:`~evaldelta.model.SlicingResult` of one slicing's evidence."""

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
        traffic_share = _normalize(self.traffic) if self.traffic else None
        arms = tuple(self._arm_slice(a, traffic_share) for a in self.arm_stats)
        pairs = tuple(self._pair(p, mixes, traffic_share) for p in self.evidence.pairs)
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
            cse, cci = self._clustered(a.clusters, a.scores.sumsq)
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
        self, clusters: tuple[tuple[int, float], ...] | None, sumsq: float
    ) -> tuple[float | None, stats.ConfidenceInterval | None]:
        """CR2 clustered SE and its t interval on Bell-McCaffrey df (Imbens and Kolesar 2016)."""
        if not clusters:
            return None, None
        est = stats.clustered_mean(
            [c[0] for c in clusters], [c[1] for c in clusters], sumsq, self.confidence
        )
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
        norm_w = _normalize(named[0][1])  # each slice's weight in the chosen (first) mix
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
        standardized = tuple(
            self._standardize(name, w, base, cand, by_arm, deltas, shared, paired_available)
            for name, w in mixes
        )
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
        alt_method: str | None = None
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
    ) -> tuple[stats.PairedResult, stats.ConfidenceInterval | None, str | None, TwoByTwo | None]:
        """The paired delta; for single-attempt pass/fail, also the other interval and 2x2."""
        if not self.binary_single:
            paired = stats.paired_means_from_summary(
                p.delta.n,
                p.delta.mean,
                p.delta.sd,
                confidence=self.confidence,
                informative=p.nonzero,
            )
            return paired, None, None, None
        cells = (p.both_pass, p.only_baseline, p.only_candidate, p.both_fail)
        paired = stats.paired_proportions(
            *cells, confidence=self.confidence, interval=self.interval
        )
        other = "wald" if self.interval == "newcombe" else "newcombe"
        with warnings.catch_warnings():
            # the other method is shown beside for contrast, not relied on
            warnings.simplefilter("ignore", stats.ReliabilityWarning)
            alt = stats.paired_proportions(*cells, confidence=self.confidence, interval=other)
        return paired, alt.ci, other, TwoByTwo(*cells)

    def _welch(self, b: Any, c: Any) -> stats.UnpairedResult:
        return stats.welch(b.mean, b.sd, b.n, c.mean, c.sd, c.n, confidence=self.confidence)

    def _standardize(
        self,
        name: str,
        weights: dict[str, float],
        base: str,
        cand: str,
        by_arm: dict[tuple[str, str], ArmSliceStats],
        deltas: list[SliceDelta],
        shared: dict[str, PairSliceStats],
        paired: bool,
    ) -> Standardized:
        """Each arm's fixed-mix rate and the fixed-mix delta, over the same cases.

        With shared cases the per-arm rates are taken on the cases both arms scored, the
        cases the paired delta is computed on, so ``rate(candidate) - rate(baseline)`` is the
        delta shown beside them; without any, on each arm's own cases (unpaired). A slice's
        standard error is never 0 for a finite sample: for pass/fail data it is the
        half-width of its Wilson (rate) or Newcombe (paired delta) interval over ``z``, the
        variance a score interval implies (MOVER: Zou and Donner 2008, Statistics in
        Medicine 27:1693-1702), which stays positive at rates of 0 and 1 and when no pair
        is discordant.
        """
        common = [
            s
            for s in weights
            if (base, s) in by_arm
            and (cand, s) in by_arm
            and by_arm[(base, s)].scores.n > 0
            and by_arm[(cand, s)].scores.n > 0
        ]
        if paired:
            common = [s for s in common if s in shared and shared[s].delta.n > 0]
        per_arm = {}
        z = stats.z_critical(self.confidence) if self.binary else 1.0
        with self.notes.capture(f"{self.metric}, {cand} vs {base}, {name} mix"):
            for k, arm in enumerate((base, cand)):
                if paired:
                    ests = {s: self._shared_estimate(shared[s], k) for s in common}
                else:
                    ests = {s: self._estimate(by_arm[(arm, s)]) for s in common}
                per_arm[arm] = stats.fixed_mix(
                    {s: e.estimate for s, e in ests.items()},
                    {s: self._mix_se(e, z) for s, e in ests.items()},
                    weights,
                    confidence=self.confidence,
                    bounds=(0.0, 1.0) if self.binary else None,
                )
            usable = [d for d in deltas if d.slice in common and d.main is not None]
            if paired:
                usable = [d for d in usable if d.paired is not None]
            delta = stats.fixed_mix(
                {d.slice: d.main.estimate for d in usable if d.main is not None},
                {d.slice: self._mix_se(d.main, z) for d in usable if d.main is not None},
                weights,
                confidence=self.confidence,
                bounds=(-1.0, 1.0) if self.binary else None,
            )
        est = {d.slice: d.main.estimate for d in usable if d.main is not None}
        ses = {d.slice: self._mix_se(d.main, z) for d in usable if d.main is not None}
        used = set(delta.used_slices)
        return Standardized(
            mix=name,
            weights=dict(delta.weights) if delta.weights else _normalize(weights),
            per_arm=per_arm,
            delta=delta,
            delta_basis="paired" if paired else "unpaired",
            dropped_slices=delta.dropped_slices,
            dropped_weight=delta.dropped_weight,
            break_even=self._break_even(delta, est, ses),
            slice_deltas={k: v for k, v in est.items() if k in used},
            slice_ses={k: v for k, v in ses.items() if k in used},
            verdict=_verdict(delta),
        )

    def _break_even(
        self, delta: stats.FixedMix, est: dict[str, float], ses: dict[str, float]
    ) -> tuple[stats.BreakEven, ...]:
        """Each used slice's break-even shares, on the same estimates and SEs as the delta."""
        names = [s for s in delta.used_slices if s in est]
        if len(names) < 2 or not all(math.isfinite(ses[s]) for s in names):
            return ()
        weights = {s: delta.weights[s] for s in names}
        return tuple(
            stats.break_even(est, ses, weights, s, confidence=self.confidence) for s in names
        )

    def _shared_estimate(self, p: PairSliceStats, k: int) -> stats.Estimate:
        """Arm ``k`` (0 baseline, 1 candidate) on the slice's shared cases."""
        m = p.base if k == 0 else p.cand
        if self.binary_single:
            return stats.proportion(round(m.total), m.n, self.confidence)
        if self.binary and m.n:
            mean = min(1.0, max(0.0, m.mean))
            return stats.proportion_of_means(m.n, mean, m.sd, m.n, self.confidence)
        return stats.mean_t(m.n, m.mean, m.sd, self.confidence)

    def _mix_se(self, est: Any, z: float) -> float:
        """A slice's standard error inside a fixed mix (see :meth:`_standardize`)."""
        if not self.binary:
            return float(est.se)
        width = est.ci.high - est.ci.low
        return width / (2.0 * z) if width == width else float("nan")

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


def _verdict(delta: stats.FixedMix) -> str:
    """Which side of zero the fixed-mix delta's interval lies on (``Standardized.verdict``)."""
    low, high = delta.ci.low, delta.ci.high
    if not (math.isfinite(delta.estimate) and math.isfinite(low) and math.isfinite(high)):
        return "undefined"
    if low > 0:
        return "ahead"
    if high < 0:
        return "behind"
    return "includes_zero"


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


def _normalize(weights: dict[str, float] | None) -> dict[str, float]:
    if not weights:
        return {}
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()} if total > 0 else {}


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

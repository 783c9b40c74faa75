"""The fixed-mix (directly standardized) results of one pair under each mix (issue 24, item 5).

Pure: :class:`Standardizer` reads per-slice statistics the slicing builder has gathered and
runs no query.

When the mix is the sample's own (``actual``) and that is this pair's own (each used slice
weighted by its share of the shared cases, every slice with pairs used), ``sum_k w_k d_k``
*is* the all-cases paired delta, weights and all taken from the same cases, so it gets that
delta's interval and each arm its rate on the shared cases: one estimate, one interval. A
mix given in advance (a traffic file) holds its shares fixed even when they equal the
sample's: its interval is conditional on the shares and leaves out how they vary from one
sample of cases to the next (the conditional variance of a post-stratified estimate; Holt
and Smith 1979, "Post stratification", JRSS A 142:33-46), the reason the reports give for
its difference.

Under any other mix a slice's standard error is neither 0 for a clean slice nor a small
slice's score-interval half-width: pass/fail slices take pseudo-counts spread over the mix
(Price and Bonett 2004; Bonett and Price 2012 for pairs) with the papers' normal interval
(:mod:`evaldelta.stats._fixed_mix`); graded slices (and pass/fail
repeats) take their own standard error, a slice whose values all agree (SE 0) the pooled
within-slice SD of the mix, with t on Satterthwaite's df from ``n_k - 1``
(:func:`evaldelta.stats.fixed_mix`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from evaldelta import stats
from evaldelta.comparison._notes import Notes
from evaldelta.comparison.model import SliceDelta, Standardized
from evaldelta.evidence import ArmSliceStats, PairSliceStats

__all__ = ["Standardizer", "normalize"]


@dataclass
class Standardizer:
    """Standardize one pair of one slicing under a named mix (:meth:`standardize`)."""

    metric: str
    confidence: float
    binary: bool
    binary_single: bool
    notes: Notes
    estimate: Callable[[ArmSliceStats], stats.Estimate]  # an arm's slice, on its own cases
    shared_estimate: Callable[[PairSliceStats, int], stats.Estimate]  # arm k on shared cases
    # the mixes whose weights are the sample's own counts (``actual``), not fixed in advance
    sample_mixes: frozenset[str] = frozenset()

    def standardize(
        self,
        name: str,
        weights: dict[str, float],
        base: str,
        cand: str,
        by_arm: dict[tuple[str, str], ArmSliceStats],
        deltas: list[SliceDelta],
        shared: dict[str, PairSliceStats],
        paired: bool,
        overall: SliceDelta,
        overall_stats: PairSliceStats,
    ) -> Standardized:
        """Each arm's fixed-mix rate and the fixed-mix delta, over the same cases.

        With shared cases the per-arm rates are taken on the cases both arms scored, so
        ``rate(candidate) - rate(baseline)`` is the delta shown beside them; without any, on
        each arm's own cases (unpaired). Which interval each mix gets: the module docstring.
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
        own = paired and name in self.sample_mixes and _is_own_mix(weights, shared, common)
        # under the pairs' own mix the generic fixed-mix interval only feeds the break-even
        # shares (any other share is another mix); its warnings would be about an interval
        # the report does not print
        context = (
            _silenced()
            if own
            else self.notes.capture(f"{self.metric}, {cand} vs {base}, {name} mix")
        )
        with context:
            if self.binary_single:
                per_arm, delta, slices = self._binary_mix(
                    weights, base, cand, by_arm, shared, common, paired
                )
            else:
                per_arm, delta, slices = self._graded_mix(
                    weights, base, cand, by_arm, deltas, shared, common, paired
                )
        discordant = effective = None
        if self.binary_single and paired and delta.used_slices:
            used_tables = {s: _table(shared[s]) for s in delta.used_slices}
            discordant = sum(t[1] + t[2] for t in used_tables.values())
            effective = stats.effective_discordant(used_tables, dict(delta.weights))
        est = {k: v[0] for k, v in slices.items()}
        ses = {k: v[1] for k, v in slices.items()}
        fixed = delta  # the fixed-mix interval the break-even shares move (any share but today's)
        if own:
            per_arm, delta = self._own_mix(base, cand, overall, overall_stats, delta)
            discordant = overall.informative if self.binary_single else None
            effective = float(discordant) if discordant is not None else None
        used = set(delta.used_slices)
        return Standardized(
            mix=name,
            weights=dict(delta.weights) if delta.weights else normalize(weights),
            per_arm=per_arm,
            delta=delta,
            delta_basis="paired" if paired else "unpaired",
            dropped_slices=delta.dropped_slices,
            dropped_weight=delta.dropped_weight,
            break_even=self._break_even(fixed, est, ses),
            slice_deltas={k: v for k, v in est.items() if k in used},
            slice_ses={k: v for k, v in ses.items() if k in used},
            mix_df=fixed.df,
            verdict=_verdict(delta),
            same_as_overall=own,
            discordant=discordant,
            effective_discordant=effective,
        )

    def _binary_mix(
        self,
        weights: dict[str, float],
        base: str,
        cand: str,
        by_arm: dict[tuple[str, str], ArmSliceStats],
        shared: dict[str, PairSliceStats],
        common: list[str],
        paired: bool,
    ) -> tuple[dict[str, stats.FixedMix], stats.FixedMix, dict[str, tuple[float, float, float]]]:
        """Pass/fail, one attempt: Price-Bonett rates, a Bonett-Price paired delta."""
        w = {s: weights[s] for s in weights}
        counts: dict[str, dict[str, tuple[float, int]]] = {base: {}, cand: {}}
        for s in common:
            for k, arm in enumerate((base, cand)):
                if paired:
                    m = shared[s].base if k == 0 else shared[s].cand
                    counts[arm][s] = (round(m.total), m.n)
                else:
                    a = by_arm[(arm, s)]
                    counts[arm][s] = (round(a.scores.total), a.scores.n)
        per_arm = {
            arm: stats.standardized_rate(counts[arm], w, confidence=self.confidence)
            for arm in (base, cand)
        }
        if paired:
            tables = {s: _table(shared[s]) for s in common}
            delta = stats.standardized_paired_delta(tables, w, confidence=self.confidence)
            slices = stats.paired_mix_slices({s: tables[s] for s in delta.used_slices})
        else:
            delta = stats.standardized_rate_difference(
                counts[base], counts[cand], w, confidence=self.confidence
            )
            slices = stats.rate_mix_slices(counts[base], counts[cand], delta.used_slices)
        return per_arm, delta, slices

    def _graded_mix(
        self,
        weights: dict[str, float],
        base: str,
        cand: str,
        by_arm: dict[tuple[str, str], ArmSliceStats],
        deltas: list[SliceDelta],
        shared: dict[str, PairSliceStats],
        common: list[str],
        paired: bool,
    ) -> tuple[dict[str, stats.FixedMix], stats.FixedMix, dict[str, tuple[float, float, float]]]:
        """Graded scores, or pass/fail repeats: each slice's own SE, t on Satterthwaite df."""
        per_arm = {}
        for k, arm in enumerate((base, cand)):
            if paired:
                ests = {s: self.shared_estimate(shared[s], k) for s in common}
            else:
                ests = {s: self.estimate(by_arm[(arm, s)]) for s in common}
            ses = _with_pooled_se(
                {s: (e.estimate, self._mix_se(e), e.n, float(max(e.n - 1, 1)))
                 for s, e in ests.items()}
            )  # fmt: skip
            per_arm[arm] = stats.fixed_mix(
                {s: e.estimate for s, e in ests.items()},
                {s: v[1] for s, v in ses.items()},
                weights,
                confidence=self.confidence,
                bounds=(0.0, 1.0) if self.binary else None,
                dfs={s: v[2] for s, v in ses.items()},
            )
        usable = [d for d in deltas if d.slice in common and d.main is not None]
        if paired:
            usable = [d for d in usable if d.paired is not None]
        slices = _with_pooled_se(
            {d.slice: (d.main.estimate, self._mix_se(d.main), *_delta_parts(d)) for d in usable
             if d.main is not None}
        )  # fmt: skip
        delta = stats.fixed_mix(
            {k: v[0] for k, v in slices.items()},
            {k: v[1] for k, v in slices.items()},
            weights,
            confidence=self.confidence,
            bounds=(-1.0, 1.0) if self.binary else None,
            dfs={k: v[2] for k, v in slices.items()},
        )
        return per_arm, delta, slices

    def _own_mix(
        self,
        base: str,
        cand: str,
        overall: SliceDelta,
        overall_stats: PairSliceStats,
        generic: stats.FixedMix,
    ) -> tuple[dict[str, stats.FixedMix], stats.FixedMix]:
        """The pairs' own mix: the all-cases paired delta and each arm's shared-case rate."""
        import dataclasses

        res = overall.main
        if res is None:  # pragma: no cover - own mix needs pairs, which give a paired delta
            raise RuntimeError("the pairs' own mix without an all-cases paired delta")
        delta = dataclasses.replace(
            generic,
            estimate=res.estimate,
            se=res.se,
            ci=res.ci,
            method=f"the pairs' own mix: the all-cases paired delta ({res.method})",
            df=getattr(res, "df", None),
            center=None,
        )
        per_arm = {}
        for k, arm in enumerate((base, cand)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", stats.StatisticsWarning)  # said per arm already
                e = self.shared_estimate(overall_stats, k)
            per_arm[arm] = dataclasses.replace(
                delta,
                estimate=e.estimate,
                se=e.se,
                ci=e.ci,
                method=f"the pairs' own mix: the rate on the shared cases ({e.method})",
                df=None,
                center=None,
            )
        return per_arm, delta

    def _break_even(
        self, delta: stats.FixedMix, est: dict[str, float], ses: dict[str, float]
    ) -> tuple[stats.BreakEven, ...]:
        """Each used slice's break-even shares, on the same estimates and SEs as the delta."""
        names = [s for s in delta.used_slices if s in est]
        if len(names) < 2 or not all(math.isfinite(ses[s]) for s in names):
            return ()
        weights = {s: delta.weights[s] for s in names}
        return tuple(
            stats.break_even(est, ses, weights, s, confidence=self.confidence, df=delta.df)
            for s in names
        )

    def _mix_se(self, est: Any) -> float:
        """A graded (or repeated pass/fail) slice's standard error inside a fixed mix.

        Its own standard error; a pass/fail rate with repeats (Wilson at the effective n)
        takes its interval's half-width over z, which stays positive at 0% and 100%.
        """
        if self.binary and isinstance(est, stats.Estimate):
            width = est.ci.high - est.ci.low
            z = stats.z_critical(self.confidence)
            return width / (2.0 * z) if width == width else float("nan")
        return float(est.se)


def _table(p: PairSliceStats) -> tuple[int, int, int, int]:
    """A slice's 2x2 table: (both pass, only baseline, only candidate, both fail)."""
    return (p.both_pass, p.only_baseline, p.only_candidate, p.both_fail)


@contextmanager
def _silenced() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.StatisticsWarning)
        yield


def _is_own_mix(
    weights: dict[str, float], shared: dict[str, PairSliceStats], used: list[str]
) -> bool:
    """Whether ``weights`` over ``used`` are the pairs' own mix (issue 24, item 5).

    True when every slice with shared cases is used and each used slice's renormalized
    weight is its share of the shared cases: then ``sum_k w_k d_k`` is the all-cases delta.
    """
    pairs = {s: p.delta.n for s, p in shared.items() if p.delta.n > 0}
    if not used or set(used) != set(pairs):
        return False
    w_total = sum(weights[s] for s in used)
    n_total = sum(pairs.values())
    return w_total > 0 and all(
        math.isclose(weights[s] / w_total, pairs[s] / n_total, rel_tol=1e-9, abs_tol=1e-12)
        for s in used
    )


def _delta_parts(d: SliceDelta) -> tuple[int, float]:
    """A slice delta's cases (for the pooled spread; 0: none) and the df of its SE."""
    res = d.main
    if d.basis == "paired":
        return d.n_pairs, float(max(d.n_pairs - 1, 1))
    df = getattr(res, "df", None)
    return 0, float(df) if df is not None and math.isfinite(df) and df > 0 else math.inf


def _with_pooled_se(
    slices: dict[str, tuple[float, float, int, float]],
) -> dict[str, tuple[float, float, float]]:
    """``(estimate, se, df)`` per slice; a slice whose values all agree borrows a spread.

    ``slices`` holds ``(estimate, se, n, df)``. A slice with ``n >= 2`` cases whose SE is 0
    (every value equal) is given the pooled within-slice SD of the others, ``sqrt(sum
    (n_k - 1) s_k^2 / sum (n_k - 1))``, over ``sqrt(n)``: its spread is unknown, not zero.
    """
    pooled_ss = pooled_df = 0.0
    for _, se, n, _ in slices.values():
        if n >= 2 and math.isfinite(se) and se > 0:
            pooled_ss += (n - 1) * (se * se * n)
            pooled_df += n - 1
    pooled_sd = math.sqrt(pooled_ss / pooled_df) if pooled_df > 0 else 0.0
    out = {}
    for k, (est, se, n, df) in slices.items():
        if n >= 2 and se == 0.0 and pooled_sd > 0:
            se = pooled_sd / math.sqrt(n)
        out[k] = (est, se, df)
    return out


def _verdict(
    delta: stats.FixedMix,
) -> Literal["ahead", "behind", "includes_zero", "undefined"]:
    """Which side of zero the fixed-mix delta's interval lies on (``Standardized.verdict``)."""
    low, high = delta.ci.low, delta.ci.high
    if not (math.isfinite(delta.estimate) and math.isfinite(low) and math.isfinite(high)):
        return "undefined"
    if low > 0:
        return "ahead"
    if high < 0:
        return "behind"
    return "includes_zero"


def normalize(weights: dict[str, float] | None) -> dict[str, float]:
    if not weights:
        return {}
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()} if total > 0 else {}

"""Every figure a seed states, beside the bundled data's (issue 24.10).

The demo's data is built to reproduce the seeds (tools/generate_demo_data.py). Where a
seed's figures cannot all hold together, or a figure is not what its sentence calls it, the
demo must not disagree in silence: each scenario's ledger prints the seed's figure, the
data's at the seed's own precision, and why they differ when they do. Seed 004 is the one
with such figures: its divergent-subset extraction delta (-0.87; the data gives -1.02), its
extraction paired sd (1.1; the seed's overall sd of 0.17 leaves no room for it), and its
sample sizes (77 and about 300 rows, which are the unpaired figures; paired, 40 and 154).

The data's figures are computed from the comparison the demo just ran (and, for the few a
comparison does not carry, from the bundled rows), never written in by hand; a test checks
that every ledger entry either matches or says why not.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaldelta import stats
from evaldelta.comparison.model import ALL_CASES, Comparison, PairComparison, SliceDelta
from evaldelta.report._format import fmt

__all__ = ["SeedFigure", "ledger", "ledger_lines"]


@dataclass(frozen=True)
class SeedFigure:
    """One figure as the seed states it and as the bundled data gives it."""

    what: str
    seed: str
    data: str
    same: bool
    why: str = ""  # why they differ: every figure that differs carries its reason


def _at(value: float, text: str) -> str:
    """``value`` as the seed writes ``text``: its decimals, separators, ``%`` or ``$``.

    Rounded half-up, as the reports round.
    """
    bare = text.replace(",", "").replace("$", "").rstrip("%")
    places = len(bare.split(".")[1]) if "." in bare else 0
    shown = fmt(value, places)
    if "," in text:
        shown = f"{float(shown):,.{places}f}"
    return f"${shown}" if text.startswith("$") else (f"{shown}%" if text.endswith("%") else shown)


def _fig(
    what: str, seed: str, value: float, why: str = "", *, about: float | None = None
) -> SeedFigure:
    """A figure compared at the seed's precision.

    ``about``: the seed writes an approximate figure ("about $6"); the data's is shown with
    two decimals and is the same when within ``about`` of it.
    """
    scale = 100.0 if seed.endswith("%") else 1.0
    data = _at(value * scale, seed)
    same = data == seed
    if about is not None:
        number = float(seed.replace(",", "").replace("$", "").rstrip("%"))
        same = math.isclose(value * scale, number, abs_tol=about)
        data = f"about {_at(value * scale, seed.replace(seed.lstrip('$'), '0.00'))}"
    return SeedFigure(what, seed, data, same, "" if same else why)


def _pair(result: Comparison, candidate: str) -> PairComparison:
    return result.pair(candidate)


def _slice(pair: PairComparison, name: str) -> SliceDelta:
    return pair.slice(name)


def _mean(result: Comparison, arm: str, slice_name: str = ALL_CASES) -> float:
    arms = result.slicing().arms
    return next(a.estimate.estimate for a in arms if a.arm == arm and a.slice == slice_name)


def _ledger_000(result: Comparison) -> list[SeedFigure]:
    pair = _pair(result, "v2")
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    opening = (
        "the seed's opening paragraph says 81.2% to 83.6%; its own worked table (855/900, "
        "560/700, ... ) gives 0.815 and 0.833, the figures the bundled data reproduces"
    )
    return [
        _fig("aggregate pass rate, v1 (the seed's opening)", "81.2%", _mean(result, "v1"), opening),
        _fig(
            "aggregate pass rate, v2 (the seed's opening)",
            "83.6%",
            _mean(result, "v2"),
            "the same opening paragraph (row above)",
        ),
        _fig("pooled v1 (its table)", "0.815", _mean(result, "v1")),
        _fig("pooled v2 (its table)", "0.833", _mean(result, "v2")),
        _fig("production-weighted v1", "0.814", traffic.per_arm["v1"].estimate),
        _fig("production-weighted v2", "0.802", traffic.per_arm["v2"].estimate),
        _fig("production-weighted v2 - v1, points", "-1.2", traffic.delta.estimate * 100),
        _fig("pooled v2 - v1, points", "1.8", pair.pooled.delta * 100),
    ]


def _ledger_001(result: Comparison) -> list[SeedFigure]:
    pair = _pair(result, "B")
    equal = pair.standardized[0]
    return [
        _fig("actual mix, A (83/100)", "0.83", _mean(result, "A")),
        _fig("actual mix, B (37/100)", "0.37", _mean(result, "B")),
        _fig("fixed (equal) mix, A", "0.55", equal.per_arm["A"].estimate),
        _fig("fixed (equal) mix, B", "0.65", equal.per_arm["B"].estimate),
    ]


def _ledger_002(result: Comparison) -> list[SeedFigure]:
    o = _pair(result, "candidate").overall
    table = o.table
    if table is None or o.paired is None or o.alternative_ci is None:  # pragma: no cover
        return []
    exact = stats.required_pairs_mcnemar(3 / 40, 1 / 40)
    return [
        _fig("pass only under the incumbent (b)", "1", table.only_baseline),
        _fig("pass only under the candidate (c)", "3", table.only_candidate),
        _fig("paired difference, points", "5", o.paired.estimate * 100),
        _fig("its Wald SE, points", "4.9", o.paired.se * 100),
        _fig("Wald 95% interval, low (about)", "-5", o.alternative_ci.low * 100),
        _fig("Wald 95% interval, high (about)", "15", o.alternative_ci.high * 100),
        _fig("exact McNemar p", "0.63", o.paired.pvalue),
        _fig(
            "paired cases for 80% power (somewhere around)",
            "300",
            exact.n,
            f"the seed leaves the exact number to a power calculation: the exact McNemar "
            f"test first reaches 80% at {exact.n} pairs (Connor's normal approximation says "
            f"{math.ceil(exact.n_normal)}, where the exact test has less power)",
        ),
    ]


def _kept_cheap_counts(rows_path: str) -> tuple[int, int]:
    """Seed 004: unescalated requests where cascade and always_strong score the same / not."""
    scores: dict[str, dict[str, str]] = {}
    escalated: set[str] = set()
    with open(rows_path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            scores.setdefault(row["case_id"], {})[row["arm"]] = row["score"]
            if row["arm"] == "cascade" and row["escalated"] == "true":
                escalated.add(row["case_id"])
    kept = [s for case, s in scores.items() if case not in escalated]
    same = sum(1 for s in kept if float(s["cascade"]) == float(s["always_strong"]))
    return same, len(kept) - same


def _ledger_004(result: Comparison, rows_path: str) -> list[SeedFigure]:
    pair = _pair(result, "cascade")
    o, ext = pair.overall, _slice(pair, "extraction")
    three = result.three_arm
    if o.paired is None or o.unpaired is None or ext.paired is None or three is None:
        return []  # pragma: no cover - the demo's comparison has them all
    ext3 = next(s for s in three.slices if s.slice == "extraction")
    same, differ = _kept_cheap_counts(rows_path)
    cheap_cost = next(c.total_usd for c in three.overall.cost or () if c.arm == "always_cheap")
    sd_ext = ext.paired.se * math.sqrt(ext.n_pairs)
    room = 0.17**2 * (5000 - 1)
    taken = ext.n_pairs * (ext.paired.estimate - o.paired.estimate) ** 2
    sd_why = (
        f"an extraction sd of 1.1 cannot hold with the overall paired sd of 0.17 the seed also "
        f"states: 0.17 over 5,000 rows leaves a sum of squares of {room:.0f}, and 150 rows at "
        f"-0.85 already take {taken:.0f} of it (an sd of 1.1 would add {1.1**2 * 149:.0f}); the "
        "data keeps the overall figures, so its extraction deltas spread little"
    )
    div_why = (
        "the seed's other extraction figures cannot give it when an unescalated request's "
        "cascade answer is the cheap model's own: the cascade's 0.45 over always_cheap (3.55 - "
        f"3.10) then comes from the {ext3.escalated_attempts} escalated requests, and the "
        f"{ext3.divergent_n} kept cheap carry the slice's whole -127.5 points, -1.02 each; "
        "-0.87 needs the cascade's cheap path to beat always_cheap on the same requests"
    )
    n_half, n_quarter = stats.required_pairs(0.5, 1.1), stats.required_pairs(0.25, 1.1)
    unpaired = (
        "the seed's '{seed} paired rows' is the unpaired figure: a two-sample design needs "
        "{unpaired} per arm at sd 1.1 (80% power, alpha 0.05), the paired one {paired} rows"
    )
    return [
        _fig("mean, always_cheap", "4.28", _mean(result, "always_cheap")),
        _fig("mean, cascade", "4.31", _mean(result, "cascade")),
        _fig("mean, always_strong", "4.34", _mean(result, "always_strong")),
        _fig("paired delta, cascade - always_strong", "-0.0286", o.paired.estimate),
        _fig("its SE", "0.0024", o.paired.se),
        _fig("t", "-11.9", o.paired.estimate / o.paired.se),
        _fig("unpaired SE (the reviewer's)", "0.018", o.unpaired.se),
        _fig("paired deltas exactly zero", "91%", 1 - (o.informative_share or 0.0)),
        _fig("unescalated rows scoring the same in both arms", "3,970", same),
        _fig("rows where the arms could diverge", "430", differ),
        _fig("extraction: paired delta", "-0.85", ext.paired.estimate),
        _fig("extraction: share of the aggregate gap", "89%",
             ext.paired.estimate * ext.n_pairs / (o.paired.estimate * o.n_pairs)),
        _fig("extraction: paired sd", "1.1", sd_ext, sd_why),
        _fig("extraction: t (its size)", "9.5", abs(ext.paired.estimate / ext.paired.se),
             "as the sd, row above"),
        _fig("extraction: always_cheap", "3.10", _mean(result, "always_cheap", "extraction")),
        _fig("extraction: always_strong", "4.40", _mean(result, "always_strong", "extraction")),
        _fig("faq_lookup: always_cheap", "4.51", _mean(result, "always_cheap", "faq_lookup")),
        _fig("faq_lookup: always_strong", "4.52", _mean(result, "always_strong", "faq_lookup")),
        _fig("escalated", "12%", three.overall.escalation_rate or 0.0),
        _fig("cascade recovered (of the 0.06 gap)", "0.03", three.overall.recovered.estimate),
        _fig("divergent subset: rows", "4,400", float(three.overall.divergent_n or 0)),
        _fig("divergent subset: delta", "-0.033",
             three.overall.divergent.estimate if three.overall.divergent else math.nan),
        _fig("divergent subset: extraction", "-0.87",
             ext3.divergent.estimate if ext3.divergent else math.nan, div_why),
        _fig("always_cheap's inference (about)", "$6", cheap_cost, about=1.0),
        _fig("paired rows to detect 0.5 (80% power)", "77", n_half.n,
             unpaired.format(seed="roughly 77", unpaired=n_half.unpaired_n_per_arm,
                             paired=n_half.n)),
        _fig("paired rows to detect 0.25", "300", n_quarter.n,
             unpaired.format(seed="about 300", unpaired=n_quarter.unpaired_n_per_arm,
                             paired=n_quarter.n)),
    ]  # fmt: skip


_LEDGERS: dict[str, Callable[[Comparison, str], list[SeedFigure]]] = {
    "000": lambda r, _: _ledger_000(r),
    "001": lambda r, _: _ledger_001(r),
    "002": lambda r, _: _ledger_002(r),
    "004": _ledger_004,
}


def ledger(key: str, result: Comparison, rows_path: str) -> list[SeedFigure]:
    """Every figure seed ``key`` states, beside the bundled data's (``rows_path``: its rows)."""
    make = _LEDGERS.get(key)
    return make(result, rows_path) if make is not None else []


def ledger_lines(key: str, figures: Sequence[SeedFigure]) -> list[str]:
    """The ledger as the demo prints it: '=' where the data gives the seed's figure."""
    if not figures:
        return []
    width = max(len(f.what) for f in figures)
    seed_w = max(len(f.seed) for f in figures)
    data_w = max(len(f.data) for f in figures)
    differ = sum(1 for f in figures if not f.same)
    out = [
        f"Seed {key}'s figures beside the bundled data's, at the seed's precision "
        f"({len(figures) - differ} the same, {differ} differ, each with why):",
        f"  {'figure'.ljust(width)}  {'seed'.rjust(seed_w)}  {'data'.rjust(data_w)}",
    ]
    for f in figures:
        mark = "=" if f.same else "differs"
        out.append(
            f"  {f.what.ljust(width)}  {f.seed.rjust(seed_w)}  {f.data.rjust(data_w)}  {mark}"
        )
        if f.why:
            out.append(f"    why: {f.why}")
    return out

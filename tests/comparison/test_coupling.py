"""The coupling figures of a pair equal numpy's, computed here from the raw per-case values.

The evidence is built by hand (as phase one would reduce it) from seeded per-case values of
two arms that share part of their randomness; numpy's ``corrcoef`` and ``var`` on the same
values are the reference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaldelta.comparison import Options, build
from evaldelta.comparison.model import ALL_CASES, to_jsonable
from evaldelta.evidence import (
    ALL,
    ArmSliceStats,
    Evidence,
    MetricEvidence,
    Moments,
    PairEvidence,
    PairSliceStats,
    SlicingEvidence,
)
from evaldelta.sources._pins import PinValue


def _moments(values: np.ndarray) -> Moments:
    return Moments(len(values), float(values.sum()), float((values * values).sum()))


def _arm(arm: str, label: str, values: np.ndarray) -> ArmSliceStats:
    return ArmSliceStats(
        arm=arm, slice=label, cases=len(values), attempts=len(values), reviewed=len(values),
        scores=_moments(values), max_scored_per_case=1, cost_usd=None,
        attempt_total=float(values.sum()),
    )  # fmt: skip


def _pair(label: str, base: np.ndarray, cand: np.ndarray) -> PairSliceStats:
    delta = cand - base
    return PairSliceStats(
        baseline="v1", candidate="v2", slice=label, delta=_moments(delta),
        nonzero=int((delta != 0).sum()), base=_moments(base), cand=_moments(cand),
        both_pass=0, only_baseline=0, only_candidate=0, both_fail=0,
        only_in_baseline=0, only_in_candidate=0, unscored_in_one=0,
    )  # fmt: skip


def _values(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Two slices of graded case values (1-5); the arms share a case effect and a draw."""
    rng = np.random.default_rng(seed)
    out = {}
    for label, n, shared in (("easy", 40, 0.9), ("hard", 25, 0.3)):
        case = rng.normal(3.0, 0.8, n)
        draw = rng.normal(0.0, 0.6, n)
        base = case + draw + rng.normal(0.0, 0.4, n)
        cand = case + 0.2 + shared * draw + rng.normal(0.0, 0.4, n)
        out[label] = (np.clip(base, 1, 5), np.clip(cand, 1, 5))
    return out


def evidence(
    values: dict[str, tuple[np.ndarray, np.ndarray]], pins: dict[str, dict[str, PinValue]]
) -> Evidence:
    arm_stats, pairs = [], []
    for label, (base, cand) in values.items():
        arm_stats += [_arm("v1", label, base), _arm("v2", label, cand)]
        pairs.append(_pair(label, base, cand))
    all_b = np.concatenate([b for b, _ in values.values()])
    all_c = np.concatenate([c for _, c in values.values()])
    arm_stats += [_arm("v1", ALL, all_b), _arm("v2", ALL, all_c)]
    pairs.append(_pair(ALL, all_b, all_c))
    pair = PairEvidence(
        candidate="v2", slices=tuple(pairs), histograms={},
        listing={"only_in_baseline": [], "only_in_candidate": [], "discordant": []},
        outputs={},
    )  # fmt: skip
    slicing = SlicingEvidence(by="slice", arm_stats=tuple(arm_stats), pairs=(pair,))
    return Evidence(
        inputs=("hand-built",), arms=("v1", "v2"), present=("v1", "v2"),
        baseline_reason="--baseline", by=("slice",), slice_names=tuple(values),
        slice_sizes={"slice": (len(values), 0)}, trimmed=0,
        observed={"score": (1.0, 5.0)},
        metrics=(MetricEvidence(metric="score", binary=False, slicings=(slicing,)),),
        pins=pins,
    )  # fmt: skip


def _reference(base: np.ndarray, cand: np.ndarray) -> tuple[float, float, float, float]:
    n = len(base)
    vb, vc, vd = (np.var(x, ddof=1) for x in (base, cand, cand - base))
    paired, independent = math.sqrt(vd / n), math.sqrt((vb + vc) / n)
    r = float(np.corrcoef(base, cand)[0, 1])
    return r, paired, independent, 1 - (paired / independent) ** 2


COUPLED: dict[str, dict[str, PinValue]] = {
    arm: {"model": arm, "couple": True, "couple_run_seed": 7} for arm in ("v1", "v2")
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_figures_equal_numpys_on_the_raw_case_values(seed: int) -> None:
    values = _values(seed)
    pair = build(evidence(values, COUPLED), Options()).pair("v2")
    coupling = pair.coupling
    assert coupling is not None
    all_b = np.concatenate([b for b, _ in values.values()])
    all_c = np.concatenate([c for _, c in values.values()])
    rows = [(coupling.overall, all_b, all_c)]
    rows += [(s, *values[s.slice]) for s in coupling.slices]
    assert [s.slice for s in coupling.slices] == ["easy", "hard"]
    assert coupling.overall.slice == ALL_CASES
    for got, base, cand in rows:
        r, paired, independent, reduction = _reference(base, cand)
        assert got.n == len(base)
        assert got.correlation == pytest.approx(r, abs=1e-9)
        assert got.paired_se == pytest.approx(paired, rel=1e-9)
        assert got.independent_se == pytest.approx(independent, rel=1e-9)
        assert got.variance_reduction == pytest.approx(reduction, abs=1e-9)
        # the paired SE is the one the paired interval uses
    assert pair.overall.main is not None
    assert coupling.overall.paired_se == pytest.approx(pair.overall.main.se, rel=1e-9)
    # the shared draw in "easy" correlates the arms more than in "hard"
    easy, hard = coupling.slices
    assert easy.correlation > hard.correlation and easy.variance_reduction > 0


def test_coupled_only_when_both_arms_pins_say_so() -> None:
    values = _values(0)
    coupled = build(evidence(values, COUPLED), Options()).pair("v2").coupling
    assert coupled is not None
    assert (coupled.requested, coupled.coupled, coupled.run_seed) == (True, True, 7)
    assert coupled.not_coupled == ()
    half = {"v1": COUPLED["v1"], "v2": {**COUPLED["v2"], "couple": False}}
    partly = build(evidence(values, half), Options())
    c = partly.pair("v2").coupling
    assert c is not None and (c.requested, c.coupled, c.not_coupled) == (True, False, ("v2",))
    assert partly.pin_differences == ()  # coupling is no confound: it moves no arm's outcomes
    other = {"v1": COUPLED["v1"], "v2": {**COUPLED["v2"], "couple_run_seed": 8}}
    apart = build(evidence(values, other), Options()).pair("v2").coupling
    assert apart is not None and (apart.coupled, apart.run_seed) == (False, None)
    plain = build(evidence(values, {}), Options()).pair("v2").coupling
    assert plain is not None and (plain.requested, plain.coupled, plain.run_seed) == (
        False,
        False,
        None,
    )
    # the figures are there either way (the reports show them for coupled pairs)
    assert plain.overall.correlation == pytest.approx(coupled.overall.correlation)


def test_undefined_figures_are_nan_and_null_in_json() -> None:
    const = np.full(10, 3.0)
    values = {"flat": (const, np.linspace(1, 5, 10)), "one": (np.array([2.0]), np.array([4.0]))}
    result = build(evidence(values, COUPLED), Options())
    flat, one = result.pair("v2").coupling.slices  # type: ignore[union-attr]
    assert math.isnan(flat.correlation)  # a constant arm has no correlation
    assert flat.variance_reduction == pytest.approx(0.0, abs=1e-12)
    assert one.n == 1 and math.isnan(one.paired_se) and math.isnan(one.independent_se)
    jsonable = to_jsonable(result)["metrics"][0]["slicings"][0]["pairs"][0]["coupling"]
    assert jsonable["slices"][0]["correlation"] is None

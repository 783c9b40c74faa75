"""The fused slice reduction (engine/_slices.py) against exact rational arithmetic.

One group-by gives every arm's and every pair's statistics per slice, and the overall row is
merged from the slice rows. The reference here is Python's ``fractions.Fraction``: every
case mean, sum and sum of squares is computed exactly from the rows and rounded once, so
the engine's numbers must match it to the rounding of a double (the engine rounds each value
to 1e-18 before its exact DECIMAL sum; that and the final float conversion are the only
errors). Whole-number data takes the plain float path (exact below 2**53), which must give
the very same numbers as the DECIMAL path.
"""

from __future__ import annotations

import random
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

import evaldelta.engine._slices as slices_mod
from evaldelta.engine import build_case_table, reduce_slices, validate
from evaldelta.evidence import ALL
from evaldelta.sources import parse_source
from evaldelta.sources._canonical import read_sources
from tests.rows import write_rows

ARMS = ("base", "cand")


COLUMNS = "case_id,arm,slice,repeat,score,cost_usd"  # the tuples _graded_rows etc. return


def _graded_rows(seed: int) -> list[tuple[str, str, str, int, str, str]]:
    """Graded scores with repeats, unscored attempts and one-arm-only cases."""
    rng = random.Random(seed)
    rows = []
    for i in range(240):
        for arm in ARMS:
            if (i % 17 == 0 and arm == "cand") or (i % 23 == 0 and arm == "base"):
                continue  # one-arm-only cases
            for rep in range(1 + i % 3):
                score = "" if rng.random() < 0.05 else repr(round(rng.uniform(-2, 3), 6))
                cost = repr(round(rng.uniform(0, 0.02), 7))
                rows.append((f"c{i}", arm, f"s{i % 5}", rep, score, cost))
    return rows


def _binary_rows(seed: int) -> list[tuple[str, str, str, int, str, str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(300):
        for arm in ARMS:
            rows.append((f"c{i}", arm, f"s{i % 4}", 0, str(int(rng.random() < 0.6)), "0.001"))
    return rows


def _reduce(path: Path, integral_values: bool | None = None):  # type: ignore[no-untyped-def]
    tables = read_sources([parse_source(str(path))], slice_columns=("slice",))
    checked = validate(tables)
    whole = checked.integral["score"] if integral_values is None else integral_values
    cases = build_case_table(tables, ARMS, "score", integral_values=whole)
    return cases, reduce_slices(cases, "slice")


def _reference(rows: list[tuple[str, str, str, int, str, str]]) -> dict[str, dict[str, object]]:
    """Per slice and ALL: each arm's (cases, n, sum, sumsq, cost) and the pair's moments."""
    scores: dict[tuple[str, str], list[Fraction]] = defaultdict(list)
    attempts: dict[tuple[str, str], int] = defaultdict(int)
    costs: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
    slice_of = {}
    for case, arm, sl, _, score, cost in rows:
        slice_of[case] = sl
        attempts[(arm, case)] += 1
        costs[(arm, case)] += Fraction(float(cost))
        if score != "":
            scores[(arm, case)].append(Fraction(float(score)))
    mean = {k: sum(v, Fraction(0)) / len(v) for k, v in scores.items() if v}
    out: dict[str, dict[str, object]] = {}
    for sl in [*sorted(set(slice_of.values())), ALL]:
        cases = [c for c in slice_of if sl in (ALL, slice_of[c])]
        ref: dict[str, object] = {}
        for arm in ARMS:
            ms = [mean[(arm, c)] for c in cases if (arm, c) in mean]
            ref[arm] = (
                sum(1 for c in cases if attempts[(arm, c)]),
                len(ms),
                sum(ms, Fraction(0)),
                sum((m * m for m in ms), Fraction(0)),
                sum((costs[(arm, c)] for c in cases), Fraction(0)),
            )
        ds = [
            mean[("cand", c)] - mean[("base", c)]
            for c in cases
            if all((a, c) in mean for a in ARMS)
        ]
        ref["pair"] = (len(ds), sum(ds, Fraction(0)), sum((d * d for d in ds), Fraction(0)))
        out[sl] = ref
    return out


def _close(got: float, want: Fraction) -> bool:
    return abs(Fraction(got) - want) <= Fraction(1, 10**12) * max(1, abs(want))


@pytest.mark.parametrize("seed", [0, 1])
def test_graded_repeats_match_exact_fractions_per_slice_and_overall(
    tmp_path: Path, seed: int
) -> None:
    rows = _graded_rows(seed)
    cases, reduced = _reduce(write_rows(tmp_path / "rows.csv", rows, COLUMNS))
    assert not cases.integral  # repeats and fractional scores: the DECIMAL path
    ref = _reference(rows)
    assert {a.slice for a in reduced.arms} == set(ref)
    for a in reduced.arms:
        n_cases, n, total, sumsq, cost = ref[a.slice][a.arm]  # type: ignore[misc]
        assert (a.cases, a.scores.n) == (n_cases, n)
        assert _close(a.scores.total, total) and _close(a.scores.sumsq, sumsq)
        assert a.cost_usd is not None and _close(a.cost_usd, cost)
    for p in reduced.pairs[1]:
        n, total, sumsq = ref[p.slice]["pair"]  # type: ignore[misc]
        assert p.delta.n == n
        assert _close(p.delta.total, total) and _close(p.delta.sumsq, sumsq)
    assert reduced.case_counts == {
        s: sum(1 for r in {(c, sl) for c, _, sl, *_ in rows} if r[1] == s)
        for s in sorted({r[2] for r in rows})
    }


def test_the_overall_row_does_not_depend_on_row_order(tmp_path: Path) -> None:
    rows = _graded_rows(3)
    _, first = _reduce(write_rows(tmp_path / "a.csv", rows, COLUMNS))
    shuffled = rows[:]
    random.Random(4).shuffle(shuffled)
    _, second = _reduce(write_rows(tmp_path / "b.csv", shuffled, COLUMNS))
    # exact sums: bit-for-bit equal, costs included (a float sum would differ by order)
    assert first.arms == second.arms
    assert first.pairs == second.pairs


def test_whole_numbers_take_the_float_path_and_give_the_same_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_rows(tmp_path / "rows.csv", _binary_rows(5), COLUMNS)
    cases, fast = _reduce(path)
    assert cases.integral
    seen: list[bool] = []
    real = slices_mod._Aggs.__init__

    def spy(self: slices_mod._Aggs, integral: bool = False) -> None:
        seen.append(integral)
        real(self, integral)

    monkeypatch.setattr(slices_mod._Aggs, "__init__", spy)
    slow_cases, slow = _reduce(path, integral_values=False)
    assert not slow_cases.integral and seen == [False]
    assert fast.arms == slow.arms and fast.pairs == slow.pairs
    overall = next(p for p in fast.pairs[1] if p.slice == ALL)
    cells = (overall.both_pass, overall.only_baseline, overall.only_candidate, overall.both_fail)
    assert sum(cells) == 300


def test_integral_needs_whole_numbers_small_enough_and_one_attempt(tmp_path: Path) -> None:
    rows = [(f"c{i}", a, "s", 0, "3", "0.1") for i in range(10) for a in ARMS]
    assert _reduce(write_rows(tmp_path / "w.csv", rows, COLUMNS))[0].integral
    frac = [(c, a, s, r, "2.5" if c == "c3" else v, k) for c, a, s, r, v, k in rows]
    assert not _reduce(write_rows(tmp_path / "f.csv", frac, COLUMNS))[0].integral
    # 20 rows x (2 x 1e8)^2 = 8e17 > 2**53: a float sum of squares could round
    big = [(c, a, s, r, "100000000", k) for c, a, s, r, _, k in rows]
    assert not _reduce(write_rows(tmp_path / "b.csv", big, COLUMNS))[0].integral
    # two attempts of a case: its mean can be fractional
    rep = [*rows, ("c0", "base", "s", 1, "4", "0.1")]
    assert not _reduce(write_rows(tmp_path / "r.csv", rep, COLUMNS))[0].integral


def test_all_scored_skips_the_scored_counts_and_gives_the_same_numbers(tmp_path: Path) -> None:
    """Without an unscored attempt, the scored counts are the attempt counts (not stored)."""
    scored = [r for r in _graded_rows(11) if r[4] != ""]
    path = write_rows(tmp_path / "scored.csv", scored, COLUMNS)
    tables = read_sources([parse_source(str(path))], slice_columns=("slice",))
    checked = validate(tables)
    assert checked.all_scored("score", ARMS)
    fast = build_case_table(tables, ARMS, "score", all_scored=True)
    slow = build_case_table(tables, ARMS, "score", all_scored=False)
    assert reduce_slices(fast, "slice") == reduce_slices(slow, "slice")
    with_unscored = write_rows(tmp_path / "graded.csv", _graded_rows(11), COLUMNS)
    assert any(r[4] == "" for r in _graded_rows(11))
    tables = read_sources([parse_source(str(with_unscored))], slice_columns=("slice",))
    assert not validate(tables).all_scored("score", ARMS)

"""``compare --sequential`` and ``gate --sequential``: rows read in the order of a column.

The expected intervals are computed here from the raw rows with plain Python (each arm's
case value, its arrival = the smallest order over its rows, each pair complete when its
later arm arrived) and the reference functions of :mod:`evaldelta.stats`; the code under
test reads the same rows through the row seam and the engine.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evaldelta import stats
from evaldelta.comparison import compare
from evaldelta.comparison.model import ALL_CASES, Comparison
from evaldelta.sources import Source
from evaldelta.store import Store
from tests.conftest import one_line_error
from tests.rows import csv_text

Row = dict[str, Any]
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
PLUS_TWO = timezone(timedelta(hours=2))


def _rows(seed: int = 7, regress: float = 0.7, repeats: int = 1) -> list[Row]:
    """Two arms, slices ``easy`` and ``hard``; the candidate loses ``regress`` on hard.

    Each case arrives in each arm at its own time (``seq``), so the order the pairs become
    complete differs from either arm's order and from the case ids'.
    """
    rng = random.Random(seed)
    rows: list[Row] = []
    for i in range(80):
        case, sl = f"c{i:03d}", "hard" if i % 2 else "easy"
        for arm in ("base", "cand"):
            start = rng.randrange(10_000)
            for r in range(repeats):
                p = 0.9 - (regress if arm == "cand" and sl == "hard" else 0.0)
                score = 1 if rng.random() < p else 0
                seq = start + 3 * r + rng.randrange(3)
                rows.append({"case_id": case, "arm": arm, "slice": sl, "repeat": r,
                             "score": score, "seq": seq})  # fmt: skip
    return rows


def _write(path: Path, rows: Sequence[Row]) -> Path:
    path.write_text(csv_text(rows))
    return path


def _expected(
    rows: Sequence[Row], slice_name: str | None, lo: float = 0.0, hi: float = 1.0
) -> tuple[stats.AnytimeResult, dict[str, stats.AnytimeEstimate]]:
    """The paired delta and each arm's mean, by hand from the rows, in arrival order."""
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    first: dict[tuple[str, str], float] = {}
    slices: dict[str, str] = {}
    for row in rows:
        key = (row["arm"], row["case_id"])
        scores[key].append(float(row["score"]))
        first[key] = min(first.get(key, float("inf")), float(row["order_value"]))
        slices[row["case_id"]] = row["slice"]
    value = {k: sum(v) / len(v) for k, v in scores.items()}
    chosen = sorted(c for c in slices if slice_name is None or slices[c] == slice_name)
    pairs = sorted(
        (max(first["base", c], first["cand", c]), c, value["cand", c] - value["base", c])
        for c in chosen
    )
    delta = stats.anytime_paired([d for _, _, d in pairs], lo - hi, hi - lo, 0.95)
    arms = {}
    for arm in ("base", "cand"):
        arrived = sorted((first[arm, c], c, value[arm, c]) for c in chosen)
        arms[arm] = stats.anytime_mean([v for _, _, v in arrived], lo, hi, 0.95)
    return delta, arms


def _with_order(rows: Sequence[Row], key: str = "seq") -> list[Row]:
    return [{**r, "order_value": r[key]} for r in rows]


def _check(result: Comparison, rows: Sequence[Row], lo: float = 0.0, hi: float = 1.0) -> None:
    """Every slice's paired interval and each arm's, against the hand computation."""
    (slicing,) = result.metrics[0].slicings
    (pair,) = slicing.pairs
    for delta in [*pair.slices, pair.overall]:
        name = None if delta.slice == ALL_CASES else delta.slice
        want, arms = _expected(rows, name, lo, hi)
        got = delta.paired
        assert isinstance(got, stats.AnytimeResult)
        assert got.values == want.values
        assert got.ci == want.ci and got.estimate == want.estimate and got.n == want.n
        for arm in slicing.arms:
            if arm.slice == delta.slice:
                assert arm.estimate.ci == arms[arm.arm].ci, (arm.arm, arm.slice)


def test_the_paired_interval_is_the_confidence_sequence_of_the_pairs_in_arrival_order(
    tmp_path: Path,
) -> None:
    rows = _rows()
    result = compare([_write(tmp_path / "runs.csv", rows)], order="seq")
    assert result.sequential is not None and result.sequential.column == "seq"
    assert result.metrics[0].slicings[0].pairs[0].standardized == ()
    _check(result, _with_order(rows))


def test_a_case_with_repeats_arrives_with_its_first_attempt_and_counts_its_mean(
    tmp_path: Path,
) -> None:
    rows = _rows(seed=3, regress=0.3, repeats=3)
    result = compare([_write(tmp_path / "runs.csv", rows)], order="seq")
    assert result.metrics[0].repeated
    _check(result, _with_order(rows))


def test_a_graded_scale_bounds_the_sequence(tmp_path: Path) -> None:
    rng = random.Random(11)
    rows = [{**r, "score": rng.choice((1, 2, 3, 4, 5))} for r in _rows(seed=5, repeats=2)]
    result = compare([_write(tmp_path / "runs.csv", rows)], order="seq", scale=(1.0, 5.0))
    _check(result, _with_order(rows), 1.0, 5.0)


def test_the_order_comes_from_the_column_not_from_the_rows_place_in_the_file(
    tmp_path: Path,
) -> None:
    rows = _rows(seed=9, repeats=2)
    shuffled = list(rows)
    random.Random(1).shuffle(shuffled)
    shuffled.sort(key=lambda r: r["arm"])  # the same baseline arm first
    a = compare([_write(tmp_path / "a.csv", rows)], order="seq")
    b = compare([_write(tmp_path / "b.csv", shuffled)], order="seq")
    assert a.metrics == b.metrics


def _iso(seconds: int, k: int) -> str:
    """The same instant written four ways: Z, an offset, naive (UTC), a fraction."""
    t = T0 + timedelta(seconds=seconds)
    if k % 4 == 0:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    if k % 4 == 1:
        return t.astimezone(PLUS_TWO).isoformat()
    if k % 4 == 2:
        return t.strftime("%Y-%m-%d %H:%M:%S")
    return t.strftime("%Y-%m-%dT%H:%M:%S.000000+00:00")


def test_iso_timestamps_order_the_cases_as_their_instants_do(tmp_path: Path) -> None:
    rows = _rows(seed=13, repeats=2)
    stamped = [
        {**{k: v for k, v in r.items() if k != "seq"}, "timestamp": _iso(r["seq"], k)}
        for k, r in enumerate(rows)
    ]
    numbered = compare([_write(tmp_path / "n.csv", rows)], order="seq")
    timed = compare([_write(tmp_path / "t.csv", stamped)], sequential=True)  # found by name
    assert timed.sequential is not None and timed.sequential.column == "timestamp"
    assert timed.metrics == numbered.metrics
    _check(timed, _with_order(rows))


def test_a_parquet_time_column_is_read_as_instants(tmp_path: Path) -> None:
    rows = _rows(seed=17)
    src = _write(tmp_path / "n.csv", rows)
    path = tmp_path / "rows.parquet"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * EXCLUDE (seq), TIMESTAMPTZ '2025-03-01 09:00:00+00' + to_seconds(seq) "
        f"AS created_at FROM read_csv('{src}')) TO '{path}' (FORMAT parquet)"
    )
    timed = compare([path], sequential=True)
    assert timed.metrics == compare([src], order="seq").metrics


def _store(path: Path, rows: Sequence[Row]) -> Path:
    cases = sorted({r["case_id"]: {"case_id": r["case_id"], "slice": r["slice"]}
                    for r in rows}.items())  # fmt: skip
    arms = {"base": {"kind": "model", "model": "m1"}, "cand": {"kind": "model", "model": "m2"}}
    with Store(path) as store:
        store.begin_run("r1", cases_path="cases.jsonl", cases_sha256="0" * 64, cases=cases,
                        case_columns=["slice"], repeats=1, arms=arms, pins={},
                        evaldelta_version="test")  # fmt: skip
        for r in rows:
            store.put_attempt("r1", r["arm"], r["case_id"], r["repeat"], {"score": r["score"]})
        store.finish_run("r1", "complete")
    # what the runner records with each attempt (store schema 4): its place in the run's order
    con = duckdb.connect(str(path))
    for r in rows:
        con.execute(
            "UPDATE attempts SET sequence = ? WHERE arm = ? AND case_id = ? AND repeat = ?",
            [r["seq"], r["arm"], r["case_id"], r["repeat"]],
        )
    con.close()
    return path


def test_a_run_store_is_read_in_the_order_of_its_attempts_sequence(tmp_path: Path) -> None:
    rows = _rows(seed=21)
    path = _store(tmp_path / "runs.duckdb", rows)
    found = compare([Source(path, format="store")], sequential=True)
    assert found.sequential is not None and found.sequential.column == "sequence"
    _check(found, _with_order(rows))
    named = compare([Source(path, format="store")], order="finished_at")  # any attempt column
    assert named.sequential is not None and named.sequential.column == "finished_at"


# -- the commands ---------------------------------------------------------------------------

POLICY = "max_regression = 0.1\n"


def test_gate_sequential_fails_a_clear_regression(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = _write(tmp_path / "runs.csv", _rows(regress=0.7))
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY)
    res = run_cli("gate", path, "--policy", policy, "--sequential", "--order", "seq")
    assert res.code == 1, res.out + res.err
    assert "FAIL" in res.out and "hard" in res.out
    res = run_cli("compare", path, "--policy", policy, "--sequential", "--order", "seq")
    assert res.code == 1, res.err


def test_gate_sequential_does_not_fail_identical_arms(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    rows = _rows(regress=0.0)
    same = {(r["case_id"], r["repeat"]): r["score"] for r in rows if r["arm"] == "base"}
    rows = [{**r, "score": same[r["case_id"], r["repeat"]]} for r in rows]
    path = _write(tmp_path / "runs.csv", rows)
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY)
    res = run_cli("gate", path, "--policy", policy, "--sequential", "--order", "seq")
    assert res.code in (0, 3), res.out + res.err


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_compare_sequential_writes_every_format(
    run_cli: Callable[..., Any], tmp_path: Path, fmt: str
) -> None:
    path = _write(tmp_path / "runs.csv", _rows())
    res = run_cli("compare", path, "--sequential", "--order", "seq", "--format", fmt)
    assert res.code == 0, res.err


def test_a_standardized_rule_is_a_policy_error_in_a_sequential_gate(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = _write(tmp_path / "runs.csv", _rows())
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY + "\n[standardized]\nmargin = 0.02\n")
    res = run_cli("gate", path, "--policy", policy, "--sequential", "--order", "seq")
    one_line_error(res, str(policy), "line 3", "[standardized]", "anytime-valid", "max_regression")


def test_a_missing_order_column_is_named_with_the_file(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = _write(tmp_path / "runs.csv", _rows())
    res = run_cli("compare", path, "--sequential", "--order", "sq")
    one_line_error(res, str(path), "'sq'", "missing", "did you mean 'seq'", "--order seq")


def test_sequential_without_an_order_names_the_columns_that_could_serve(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    rows = [{**r, "submitted_time": r["seq"]} for r in _rows()]
    path = _write(tmp_path / "runs.csv", rows)
    res = run_cli("compare", path, "--sequential")
    one_line_error(res, "--order COLUMN", "seq", "submitted_time")
    both = [{**r, "sequence": r["seq"], "timestamp": r["seq"]} for r in _rows()]
    res = run_cli("compare", _write(tmp_path / "both.csv", both), "--sequential")
    one_line_error(res, "several order columns", "sequence, timestamp", "--order")


def test_order_alone_asks_for_sequential(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.csv", _rows())
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY)
    res = run_cli("gate", path, "--policy", policy, "--order", "seq")
    one_line_error(res, "--order seq", "add --sequential")


def _hand_written(tmp_path: Path, value: str) -> Path:
    text = (
        "case_id,arm,slice,score,seq\n"
        "c1,base,x,1,1\nc1,cand,x,1,2\nc2,base,x,0,3\n"
        f"c2,cand,x,1,{value}\n"
        "c3,base,x,,\nc3,cand,x,1,6\n"
    )
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return path


def test_a_blank_order_on_a_scored_row_names_its_line(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = _hand_written(tmp_path, "")  # line 5; line 6 is blank too, but unscored
    res = run_cli("compare", path, "--sequential", "--order", "seq")
    one_line_error(res, str(path), "line 5", "field 'seq'", "blank on a scored row")


def test_an_unparseable_order_names_its_line_and_value(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = _hand_written(tmp_path, "soon")
    res = run_cli("compare", path, "--sequential", "--order", "seq")
    one_line_error(res, str(path), "line 5", "field 'seq'", "'soon'", "neither a number nor")


def test_a_blank_order_on_an_unscored_row_is_no_error(tmp_path: Path) -> None:
    result = compare([_hand_written(tmp_path, "4")], order="seq")
    assert result.sequential is not None
    pair = result.metrics[0].slicings[0].pairs[0]
    assert pair.overall.paired is not None and pair.overall.paired.values == (0.0, 1.0)

"""Repeats reduced per case in the backend (``engine/_repeats.py``) equal the Python reducers.

The reference is :func:`evaldelta.stats.reduce_values`, itself tested against Python's
statistics module and the papers' formulas (tests/stats/test_stats_reducers.py). Every
(arm, case) of seeded random rows, with unscored attempts, ties and shuffled row order, is
reduced both ways and compared value for value; then ``compare --reduce`` is checked end to
end against the mean of the reference values.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from evaldelta.engine._repeats import reduce_repeats
from evaldelta.errors import DuplicateRowError
from evaldelta.sources import Source, read_sources
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.stats import parse_reducer, reduce_values
from tests.rows import write_rows

from ..conftest import CliResult, one_line_error

REDUCERS = ["mean", "median", "mode", "max", "min", "at_least_2", "pass_at_2", "pass_3"]


def _write(path: Path, seed: int, graded: bool) -> dict[tuple[str, str], list[float]]:
    rng = random.Random(seed)
    values: dict[tuple[str, str], list[float]] = {}
    rows = []
    pool = [1.0, 2.0, 3.0, 4.0, 5.0] if graded else [0.0, 1.0]
    for case in range(120):
        for arm in ("a", "b"):
            attempts = rng.randint(1, 5)
            seq = []
            for repeat in range(attempts):
                v = rng.choice(pool) if rng.random() > 0.15 else math.nan
                seq.append(v)
                text = "" if math.isnan(v) else repr(v)
                rows.append((f"c{case:03d}", arm, f"s{case % 3}", repeat, text))
            values[(f"c{case:03d}", arm)] = seq
    rng.shuffle(rows)  # the attempt order is the repeat number, not the row order
    write_rows(path, rows, "case_id,arm,slice,repeat,score")
    return values


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("name", REDUCERS)
def test_backend_reduction_equals_reference(tmp_path: Path, name: str, graded: bool) -> None:
    path = tmp_path / "rows.csv"
    values = _write(path, seed=7 + graded, graded=graded)
    tables = read_sources([Source(path)])
    reducer = parse_reducer(name)
    reduced = reduce_repeats(tables, reducer, ("a", "b"), ("score",))
    got = {(r["case_id"], r["arm"]): r["m_score"] for r in fetch_rows(reduced.rows)}
    assert set(got) == set(values)
    for key, seq in values.items():
        want = reduce_values(seq, reducer)
        have = got[key]
        if math.isnan(want):
            assert have is None or math.isnan(have), (key, seq, have)
        else:
            assert have == pytest.approx(want, abs=1e-12), (key, seq, have)


@pytest.mark.parametrize("name", ["max", "pass_at_2", "median"])
def test_compare_reduce_end_to_end(
    tmp_path: Path, run_cli: Callable[..., CliResult], name: str
) -> None:
    import json

    path = tmp_path / "rows.csv"
    values = _write(path, seed=11, graded=False)
    result = run_cli("compare", str(path), "--reduce", name, "--format", "json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["repeats"] == {"reducer": name, "chosen_by": "--reduce", "tools": {}}
    arms = doc["metrics"][0]["slicings"][0]["arms"]
    reducer = parse_reducer(name)
    for arm in ("a", "b"):
        case_values = [reduce_values(v, reducer) for (_, a), v in values.items() if a == arm]
        scored = [v for v in case_values if not math.isnan(v)]
        (row,) = [x for x in arms if x["arm"] == arm and x["slice"] == "(all cases)"]
        assert row["estimate"]["estimate"] == pytest.approx(sum(scored) / len(scored), abs=1e-12)
    text = run_cli("compare", str(path), "--reduce", name)
    assert "Repeats: each case's attempts" in text.out and "as --reduce asks" in text.out


def test_mean_changes_nothing(tmp_path: Path, run_cli: Callable[..., CliResult]) -> None:
    path = tmp_path / "rows.csv"
    _write(path, seed=3, graded=True)
    plain = run_cli("compare", str(path), "--format", "json")
    mean = run_cli("compare", str(path), "--reduce", "mean", "--format", "json")
    assert plain.code == mean.code == 0
    assert plain.out.replace('"repeats": null', "") == mean.out.replace('"repeats": null', "")
    assert "Repeats:" not in run_cli("compare", str(path)).out


def test_duplicate_attempt_is_named_before_reducing(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("case_id,arm,repeat,score\nc1,a,0,1\nc1,a,0,0\nc1,b,0,1\nc2,a,0,1\nc2,b,0,0\n")
    tables = read_sources([Source(path)])
    with pytest.raises(DuplicateRowError, match="repeat 0 appears 2 times"):
        reduce_repeats(tables, parse_reducer("max"), ("a", "b"), ("score",))
    one_line_error(run_cli("compare", str(path), "--reduce", "max"), "line 2", "duplicate row")


def test_unknown_reducer_is_a_usage_error(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "rows.csv"
    _write(path, seed=1, graded=False)
    one_line_error(run_cli("compare", str(path), "--reduce", "best"), "--reduce", "best")

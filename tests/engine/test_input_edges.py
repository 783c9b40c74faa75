"""Inputs that used to give a silently wrong result: each now gives the right one, or an error."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaldelta.comparison import compare
from evaldelta.errors import BadValueError
from tests.conftest import one_line_error
from tests.rows import csv_text


def test_huge_mix_weights_keep_their_shares(write) -> None:  # type: ignore[no-untyped-def]
    rows = write("r.csv", "case_id,arm,slice,score\n1,a,s1,1\n1,b,s1,0\n2,a,s2,0\n2,b,s2,0\n")
    mix = write("m.csv", "slice,weight\ns1,1e308\ns2,1e308\n")
    (std,) = compare([rows], mix=mix).slicing().pairs[0].standardized
    # equal weights: the standardized rates are the plain means of the two slices' rates
    assert std.per_arm["a"].estimate == pytest.approx(0.5)
    assert std.per_arm["b"].estimate == pytest.approx(0.0)
    assert std.weights == {"s1": pytest.approx(0.5), "s2": pytest.approx(0.5)}


def test_cases_in_one_arm_only_are_listed_up_to_the_limit_and_all_counted(tmp_path: Path) -> None:
    ids = [f"c{i:04d}" for i in range(300)]
    table = pa.table(
        {
            "case_id": ids + ids[:40],
            "arm": ["a"] * 300 + ["b"] * 40,
            "score": [float(i % 2) for i in range(300)] + [1.0] * 40,
        }
    )
    path = tmp_path / "r.parquet"
    pq.write_table(table, str(path))
    pair = compare([path], list_limit=25).slicing().pairs[0]
    assert len(pair.only_in_baseline) == 25
    assert pair.overall.only_in_baseline == 260
    assert [c.case_id for c in pair.only_in_baseline] == ids[40:65]


def test_spaces_around_names_are_trimmed_and_said(write) -> None:  # type: ignore[no-untyped-def]
    path = write("r.csv", "case_id,arm,score\n1 ,a,1\n1,b ,0\n2,a,1\n2,b,1\n")
    result = compare([path])
    assert result.arms_present == ("a", "b")
    assert result.slicing().pairs[0].overall.n_pairs == 2
    assert any("2 rows had spaces around" in n for n in result.notes)


def test_one_case_slices_are_flagged_and_repeated_notes_folded(write) -> None:  # type: ignore[no-untyped-def]
    rows = [(f"c{i}", arm, (i + len(arm)) % 2) for i in range(60) for arm in ("a", "bb")]
    path = write("r.csv", csv_text(rows, "case_id,arm,score"))
    result = compare([path], by=["case_id"])
    assert any(
        "cuts the cases into 60 slices (60 of them one case each)" in n for n in result.notes
    )
    folded = [n for n in result.notes if "places:" in n]
    assert folded and all(len(n) < 600 for n in result.notes)


def test_a_fractional_repeat_in_a_float_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table(
            {
                "case_id": ["1", "1", "1"],
                "arm": ["a", "a", "b"],
                "repeat": [1.0, 1.5, 0.0],
                "score": [1.0, 0.0, 1.0],
            }
        ),
        str(path),
    )
    with pytest.raises(BadValueError, match="whole number") as info:
        compare([path])
    assert info.value.location is not None and info.value.location.line == 2


def test_the_observed_range_is_kept(write) -> None:  # type: ignore[no-untyped-def]
    path = write("r.csv", "case_id,arm,score\n1,a,3\n1,b,97\n2,a,55\n2,b,0\n")
    (metric,) = compare([path]).metrics
    assert (metric.observed_low, metric.observed_high, metric.scale) == (0.0, 97.0, None)


def test_a_json_mix_weight_must_be_a_number(write, run_cli) -> None:  # type: ignore[no-untyped-def]
    rows = write("r.csv", "case_id,arm,slice,score\n1,a,s1,1\n1,b,s1,0\n")
    mix = write("m.json", json.dumps({"s1": True}))
    one_line_error(run_cli("compare", rows, "--mix", mix), "m.json", "JSON number")

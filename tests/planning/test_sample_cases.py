"""``sample`` on a results file with several arms draws cases, not rows (issue 24.6).

Drawing rows from seed 004's three arms kept one arm of most cases: 400 sampled rows gave 17
paired cases. Now every arm's rows of a chosen case come together.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from evaldelta.comparison import compare
from evaldelta.demo import data_path
from evaldelta.errors import BadValueError, UsageError
from evaldelta.planning.sampling import sample
from tests.conftest import one_line_error
from tests.rows import csv_text


def _read(path: Path) -> list[dict[str, object]]:
    rel = duckdb.sql(f"SELECT * FROM '{path}'")
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


def test_seed004_sample_keeps_every_arm_of_each_case(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    with data_path("seed004.csv") as rows:
        res = sample(rows, out, by="slice", floor=60, seed=3)
    assert res.unit == "case" and res.arms == 3
    got = {s.slice: s for s in res.strata}
    assert got["extraction"].population == 150 and got["faq_lookup"].population == 2050
    assert res.sampled == 6 * 60 and res.rows_sampled == 3 * 360 == len(_read(out))
    assert res.population == 5000 and res.rows_population == 15000
    arms: dict[str, set[str]] = {}
    weights: dict[str, set[float]] = {}
    for r in _read(out):
        arms.setdefault(str(r["case_id"]), set()).add(str(r["arm"]))
        weights.setdefault(str(r["case_id"]), set()).add(float(r["sample_weight"]))  # type: ignore[arg-type]
    assert len(arms) == 360 and all(len(a) == 3 for a in arms.values())
    assert all(len(w) == 1 for w in weights.values())  # one weight per case: N_k / n_k
    ext = {w for c, (w,) in weights.items() if c in _cases_in(out, "extraction")}
    assert ext == {150 / 60}
    # the sample compares as paired data: 360 pairs, each slice reweighted to its traffic
    result = compare([out], baseline="always_strong", candidates=["cascade"])
    pair = result.slicing().pairs[0]
    assert pair.overall.n_pairs == 360 and not pair.only_in_baseline
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    assert traffic.weights["faq_lookup"] == pytest.approx(0.41)


def _cases_in(path: Path, slice_name: str) -> set[str]:
    return {str(r["case_id"]) for r in _read(path) if r["slice"] == slice_name}


def test_the_draw_is_seeded_and_a_single_arm_log_still_draws_rows(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    with data_path("seed002.csv") as rows:
        a = sample(rows, tmp_path / "a.csv", by="slice", floor=4, seed=1)
        b = sample(rows, tmp_path / "b.csv", by="slice", floor=4, seed=1)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    assert a.unit == b.unit == "case" and a.rows_sampled == 2 * a.sampled == 32
    one_arm = [(f"c{i}", "a", f"s{i % 2}", 1) for i in range(20)]
    one = write("one.csv", csv_text(one_arm, "case_id,arm,slice,score"))
    res = sample(one, tmp_path / "o.csv", by="slice", floor=3)
    assert res.unit == "row" and res.sampled == 6 and res.arms == 1


@pytest.mark.parametrize(
    ("rows", "error", "needle"),
    [
        ("case_id,arm,slice\nc1,a,x\n,b,x\n", BadValueError, "line 3, field 'case_id'"),
        ("case_id,arm,slice\nc1,a,x\nc1,b,y\n", BadValueError, "more than one slice of --by"),
        ("id,arm,slice\nc1,a,x\nc1,b,x\n", UsageError, "name the case column with --id"),
    ],
)
def test_bad_case_data_is_one_sentence(
    tmp_path: Path, write, rows: str, error: type, needle: str
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=needle.replace("(", r"\(")):
        sample(write("r.csv", rows), tmp_path / "o.csv", by="slice", floor=1)


def test_id_names_the_case_and_the_cli_says_cases(run_cli, tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    rows = write("r.csv", "id,arm,slice\n" + "".join(
        f"q{i},{arm},s\n" for i in range(10) for arm in "ab"))  # fmt: skip
    res = run_cli("sample", rows, "--by", "slice", "--floor", "4", "--id", "id",
                  "-o", tmp_path / "o.csv")  # fmt: skip
    assert res.code == 0, res.err
    assert "Sampled 4 of 10 cases (8 of 20 rows: the 2 arms' rows of each sampled case)" in res.out
    assert "sample drew whole cases (by id)" in res.out
    doc = json.loads(
        run_cli("sample", rows, "--by", "slice", "--floor", "4", "--id", "id", "-o",
                tmp_path / "p.csv", "--format", "json").out
    )  # fmt: skip
    assert (doc["unit"], doc["sampled"], doc["rows_sampled"]) == ("case", 4, 8)
    bad = write("b.csv", "case_id,arm,slice\nc1,a,x\n,b,x\n")
    one_line_error(run_cli("sample", bad, "--by", "slice", "-o", tmp_path / "q.csv"),
                   "b.csv, line 3", "case_id")  # fmt: skip

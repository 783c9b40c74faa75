"""The default baseline is decided by the inputs, the same every run, and the report says how."""

from __future__ import annotations

from pathlib import Path

from evaldelta.comparison import compare
from evaldelta.sources import Source
from evaldelta.store import Store

ARMS = {"base": {"kind": "model", "model": "m1"}, "cand": {"kind": "model", "model": "m2"}}


def _store(path: Path, write_order: list[str]) -> Path:
    cases = [(f"c{i}", {"case_id": f"c{i}"}) for i in range(12)]
    with Store(path) as store:
        store.begin_run("r1", cases_path="cases.jsonl", cases_sha256="0" * 64, cases=cases,
                        case_columns=[], repeats=1, arms=ARMS, pins={},
                        evaldelta_version="test")  # fmt: skip
        for arm in write_order:  # the attempts land in this order, whatever the config said
            for i, (cid, _) in enumerate(cases):
                store.put_attempt("r1", arm, cid, 0, {"score": float((i + len(arm)) % 2)})
        store.finish_run("r1", "complete")
    return path


def test_a_store_gives_its_first_configured_arm_whatever_the_row_order(tmp_path: Path) -> None:
    for k, order in enumerate((["cand", "base"], ["base", "cand"], ["cand", "base"])):
        path = _store(tmp_path / f"s{k}.duckdb", order)
        result = compare([Source(path, format="store")])
        assert (result.baseline, result.candidates) == ("base", ("cand",))
        assert result.baseline_reason.startswith("the first arm configured in")


def test_files_give_the_first_arm_option_then_the_first_row(write, run_cli) -> None:  # type: ignore[no-untyped-def]
    a = write("a.csv", "case_id,score\n1,1\n2,0\n")
    b = write("b.csv", "case_id,score\n1,1\n2,1\n")
    result = compare([Source(b, arm="new"), Source(a, arm="old")])
    assert result.baseline == "new" and result.baseline_reason.startswith("the first --arm")
    both = write("both.csv", "case_id,arm,score\n1,zeta,1\n1,alpha,0\n2,zeta,1\n2,alpha,1\n")
    result = compare([both])
    assert result.baseline == "zeta"  # the first row, not the alphabet
    assert result.baseline_reason == "the arm of the first row of " + str(both)
    res = run_cli("compare", both)
    assert res.out.splitlines()[0] == (
        f"baseline zeta (the arm of the first row of {both}); candidates: alpha"
    )
    res = run_cli("compare", both, "--baseline", "alpha")
    assert res.out.splitlines()[0] == "baseline alpha (--baseline); candidates: zeta"

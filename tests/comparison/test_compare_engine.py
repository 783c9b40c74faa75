"""compare on small hand-built data: formats, arms per file, repeats, coverage, clusters."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from evaldelta.comparison import compare
from evaldelta.report import render_json, render_text
from evaldelta.sources import Source

ROWS = pd.DataFrame(
    {
        "case_id": [f"c{i}" for i in range(8)] * 2,
        "arm": ["a"] * 8 + ["b"] * 8,
        "slice": ["x", "x", "x", "x", "y", "y", "y", "y"] * 2,
        "score": [*[1, 1, 0, 0, 1, 0, 1, 1], *[1, 0, 1, 1, 1, 1, 1, 0]],
    }
)


def _overall(result):  # type: ignore[no-untyped-def]
    return result.slicing().pairs[0].overall


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", ".tsv"])
def test_every_format_gives_the_same_answer(tmp_path: Path, suffix: str):
    path = tmp_path / f"runs{suffix}"
    if suffix == ".csv":
        ROWS.to_csv(path, index=False)
    elif suffix == ".tsv":
        ROWS.to_csv(path, index=False, sep="\t")
    elif suffix == ".jsonl":
        ROWS.to_json(path, orient="records", lines=True)
    else:
        ROWS.to_parquet(path)
    o = _overall(compare([path], baseline="a"))
    assert o.table is not None
    # by hand from ROWS: c0 c4 c6 both pass; c1 c7 only a; c2 c3 c5 only b; none both fail
    assert (o.table.both_pass, o.table.only_baseline, o.table.only_candidate) == (3, 2, 3)
    assert o.table.both_fail == 0
    assert o.paired is not None and o.paired.estimate == pytest.approx(1 / 8)


def test_arm_per_file(tmp_path: Path):
    for arm in ("a", "b"):
        ROWS[ROWS.arm == arm].drop(columns="arm").to_csv(tmp_path / f"{arm}.csv", index=False)
    result = compare(
        [Source(tmp_path / "a.csv", arm="a"), Source(tmp_path / "b.csv", arm="b")], baseline="a"
    )
    assert _overall(result).n_pairs == 8
    assert result.baseline == "a" and result.candidates == ("b",)


def test_default_baseline_is_first_rows_arm(tmp_path: Path):
    path = tmp_path / "runs.csv"
    ROWS.iloc[::-1].to_csv(path, index=False)
    assert compare([path]).baseline == "b"


def test_repeats_are_averaged_per_case_and_the_case_is_the_unit(tmp_path: Path):
    rng = np.random.default_rng(7)
    rows = []
    for case in range(30):
        for arm, p in (("a", 0.5), ("b", 0.6)):
            for rep in range(3):
                rows.append((f"c{case}", arm, rep, int(rng.random() < p)))
    df = pd.DataFrame(rows, columns=["case_id", "arm", "repeat", "score"])
    path = tmp_path / "rep.csv"
    df.to_csv(path, index=False)
    result = compare([path], baseline="a")
    metric = result.metrics[0]
    assert metric.kind == "binary" and metric.repeated
    means = df.groupby(["arm", "case_id"]).score.mean().unstack(0)
    ref = sps.ttest_rel(means.b, means.a)
    o = _overall(result)
    assert o.paired is not None and o.table is None
    assert o.paired.statistic == pytest.approx(ref.statistic)
    assert o.paired.pvalue == pytest.approx(ref.pvalue)
    ci = ref.confidence_interval(0.95)
    assert (o.paired.ci.low, o.paired.ci.high) == pytest.approx((ci.low, ci.high))
    arm_a = next(a for a in result.slicing().arms if a.arm == "a" and a.slice == "(all cases)")
    assert arm_a.attempts == 90 and arm_a.cases == 30 and arm_a.scored_cases == 30


def test_cases_in_one_arm_are_counted_and_listed(tmp_path: Path):
    df = pd.concat(
        [ROWS, pd.DataFrame({"case_id": ["extra"], "arm": ["b"], "slice": ["y"], "score": [1]})]
    )
    df = df[~((df.arm == "b") & (df.case_id == "c0"))]
    path = tmp_path / "gap.csv"
    df.to_csv(path, index=False)
    pair = compare([path], baseline="a").slicing().pairs[0]
    assert [c.case_id for c in pair.only_in_baseline] == ["c0"]
    assert [c.case_id for c in pair.only_in_candidate] == ["extra"]
    x = next(d for d in pair.slices if d.slice == "x")
    y = next(d for d in pair.slices if d.slice == "y")
    assert (x.only_in_baseline, x.only_in_candidate, y.only_in_candidate) == (1, 0, 1)
    assert pair.overall.n_pairs == 7
    doc = json.loads(render_json(compare([path], baseline="a")))
    listed = doc["metrics"][0]["slicings"][0]["pairs"][0]["only_in_candidate"]
    assert listed == [{"case_id": "extra", "slice": "y"}]
    assert "Cases in one arm only" in render_text(compare([path], baseline="a"))


def test_unlabeled_attempts_are_counted_not_dropped(tmp_path: Path):
    df = ROWS.copy().astype({"score": "object"})
    df.loc[(df.arm == "b") & (df.case_id == "c1"), "score"] = None
    path = tmp_path / "unl.csv"
    df.to_csv(path, index=False)
    result = compare([path], baseline="a")
    arm_b = next(a for a in result.slicing().arms if a.arm == "b" and a.slice == "(all cases)")
    assert (arm_b.attempts, arm_b.reviewed, arm_b.unlabeled) == (8, 7, 1)
    assert _overall(result).unscored_in_one == 1
    assert _overall(result).n_pairs == 7


def test_clustered_se_is_statsmodels_cr1_with_t_on_g_minus_1(tmp_path: Path):
    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame(
        {
            "case_id": np.tile([f"c{i}" for i in range(n)], 2),
            "arm": ["a"] * n + ["b"] * n,
            "cluster": np.tile([f"k{i // 6}" for i in range(n)], 2),
            "score": rng.normal(3, 1, 2 * n).round(2),
        }
    )
    path = tmp_path / "cl.parquet"
    df.to_parquet(path)
    arms = compare([path], baseline="a").slicing().arms
    a = next(x for x in arms if x.arm == "a" and x.slice == "(all cases)")
    # statsmodels: OLS(y, 1).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True):
    # CR1 (G/(G-1) factor) and a t interval on G - 1 = 9 degrees of freedom
    rows = df[df.arm == "a"]
    fit = sm.OLS(rows.score.to_numpy(), np.ones(n)).fit(
        cov_type="cluster", cov_kwds={"groups": rows.cluster.to_numpy()}, use_t=True
    )
    assert a.clustered_se == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert a.clustered_ci is not None
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (a.clustered_ci.low, a.clustered_ci.high) == pytest.approx((low, high), rel=1e-9)


def test_clustered_pass_rate_is_korn_graubard(tmp_path: Path):
    # issue 24, item 16: a pass rate with clusters takes Korn and Graubard's (1998) interval,
    # R survey::svyciprop(method = "beta"), here written with statsmodels and scipy: equal
    # cluster sizes, so V is statsmodels' CR1 variance and df = G - 1 = 23
    rng = np.random.default_rng(16)
    n, g = 144, 24
    q = rng.beta(2.7, 0.3, size=g)[np.arange(n) // 6]  # cluster rates near 0.9, icc 0.25
    df = pd.DataFrame(
        {
            "case_id": np.tile([f"c{i}" for i in range(n)], 2),
            "arm": ["a"] * n + ["b"] * n,
            "cluster": np.tile([f"k{i // 6}" for i in range(n)], 2),
            "score": (rng.random(2 * n) < np.tile(q, 2)).astype(int),
        }
    )
    path = tmp_path / "clb.csv"
    df.to_csv(path, index=False)
    arms = compare([path], baseline="a").slicing().arms
    a = next(x for x in arms if x.arm == "a" and x.slice == "(all cases)")
    y = df[df.arm == "a"].score.to_numpy(dtype=float)
    fit = sm.OLS(y, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": np.arange(n) // 6})
    p = y.mean()
    n_eff = p * (1 - p) / float(fit.bse[0]) ** 2
    assert n_eff < n  # the clusters cost information: no cap
    n_eff *= (sps.t.ppf(0.025, n - 1) / sps.t.ppf(0.025, g - 1)) ** 2
    low = sps.beta.ppf(0.025, n_eff * p, n_eff * (1 - p) + 1)
    high = sps.beta.ppf(0.975, n_eff * p + 1, n_eff * (1 - p))
    assert a.clustered_ci is not None
    assert (a.clustered_ci.low, a.clustered_ci.high) == pytest.approx((low, high), rel=1e-9)
    assert a.clustered_se == pytest.approx(float(fit.bse[0]), rel=1e-9)


def test_cost_per_arm(tmp_path: Path):
    df = ROWS.assign(cost_usd=np.where(ROWS.arm == "a", 0.01, 0.03))
    path = tmp_path / "cost.csv"
    df.to_csv(path, index=False)
    cost = compare([path], baseline="a").slicing().pairs[0].cost
    assert cost is not None
    assert cost.baseline_usd == pytest.approx(0.08) and cost.candidate_usd == pytest.approx(0.24)
    assert cost.ratio == pytest.approx(3.0)


def test_several_metrics_and_slicings(tmp_path: Path):
    df = ROWS.assign(
        judge=np.linspace(1, 5, 16).round(1), band=["short", "long"] * 8, slice=ROWS.slice
    )
    path = tmp_path / "multi.csv"
    df.to_csv(path, index=False)
    result = compare([path], baseline="a", metrics=("score", "judge"), by=("slice", "band"))
    assert [m.metric for m in result.metrics] == ["score", "judge"]
    assert [m.kind for m in result.metrics] == ["binary", "graded"]
    assert [s.by for s in result.metrics[1].slicings] == ["slice", "band"]
    assert result.metrics[1].slicings[1].slices == ("long", "short")


def test_swapping_arms_flips_every_delta(tmp_path: Path):
    path = tmp_path / "runs.csv"
    ROWS.to_csv(path, index=False)
    ab = compare([path], baseline="a").slicing().pairs[0]
    ba = compare([path], baseline="b").slicing().pairs[0]
    for d1, d2 in zip([ab.overall, *ab.slices], [ba.overall, *ba.slices], strict=True):
        assert d1.paired is not None and d2.paired is not None
        assert d1.paired.estimate == pytest.approx(-d2.paired.estimate)
        assert d1.paired.pvalue == pytest.approx(d2.paired.pvalue)
    assert ab.standardized[0].delta.estimate == pytest.approx(-ba.standardized[0].delta.estimate)


def test_mix_weights_on_any_scale(tmp_path: Path, write):
    path = tmp_path / "runs.csv"
    ROWS.to_csv(path, index=False)
    small = write("small.csv", "slice,weight\nx,0.25\ny,0.75\n")
    big = write("big.json", '{"x": 25, "y": 75}')
    r1 = compare([path], baseline="a", mix=small).slicing().pairs[0]
    r2 = compare([path], baseline="a", mix=big).slicing().pairs[0]
    assert r1.standardized[0].delta.estimate == pytest.approx(r2.standardized[0].delta.estimate)
    assert r1.standardized[0].weights == pytest.approx({"x": 0.25, "y": 0.75})


def test_slice_without_both_arms_is_dropped_with_its_weight(tmp_path: Path, write):
    extra = pd.DataFrame({"case_id": ["z1", "z2"], "arm": ["a", "a"], "slice": "z", "score": 1})
    path = tmp_path / "runs.csv"
    pd.concat([ROWS, extra]).to_csv(path, index=False)
    mix = write("mix.csv", "slice,weight\nx,1\ny,1\nz,2\n")
    std = compare([path], baseline="a", mix=mix).slicing().pairs[0].standardized[0]
    assert std.dropped_slices == ("z",)
    assert std.dropped_weight == pytest.approx(0.5)
    assert set(std.weights) == {"x", "y"}


def test_degenerate_slices_become_notes_not_errors(tmp_path: Path):
    df = pd.DataFrame(
        {"case_id": ["c1", "c1"], "arm": ["a", "b"], "slice": "only", "score": [3.5, 4.0]}
    )
    path = tmp_path / "one.csv"
    df.to_csv(path, index=False)
    result = compare([path], baseline="a")
    o = _overall(result)
    assert o.paired is not None and math.isnan(o.paired.se)
    assert result.notes  # the undefined SE is named, never reported as 0
    assert "n/a" in render_text(result)


def test_large_csv_error_names_the_right_line(tmp_path: Path, run_cli):
    n = 20_000
    df = pd.DataFrame(
        {"case_id": np.repeat(np.arange(n), 2), "arm": ["a", "b"] * n, "score": 1}
    ).astype({"score": str})
    df.loc[31_337, "score"] = "oops"
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    res = run_cli("compare", path)
    assert res.code == 2
    assert f"line {31_337 + 2}" in res.err  # data row 31,337 (0-based) is file line 31,339


def test_parquet_written_by_duckdb_reads(tmp_path: Path):
    path = tmp_path / "d.parquet"
    duckdb.sql(
        "copy (select 'c' || (i % 50) as case_id, case when i < 50 then 'a' else 'b' end as arm,"
        f" (i % 3 = 0)::boolean as score from range(100) t(i)) to '{path}' (format parquet)"
    )
    o = _overall(compare([path], baseline="a"))
    assert o.n_pairs == 50

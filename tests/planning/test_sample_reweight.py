"""A stratified sample drawn by `evaldelta sample` reweights to traffic in compare by itself."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from evaldelta.comparison import compare


def test_compare_uses_sample_weight_as_the_traffic_mix(tmp_path: Path, run_cli):
    log = tmp_path / "traffic.parquet"
    # 10,000 requests: faq 80%, extraction 5%, drafting 15%
    duckdb.sql(
        "copy (select 'r' || i as request_id, case when i % 20 = 0 then 'extraction' "
        "when i % 20 < 4 then 'drafting' else 'faq' end as task from range(10000) t(i)) "
        f"to '{log}' (format parquet)"
    )
    sample = tmp_path / "sample.csv"
    res = run_cli(
        "sample",
        log,
        "--by",
        "task",
        "--floor",
        "100",
        "--total",
        "600",
        "--seed",
        "3",
        "-o",
        sample,
    )
    assert res.code == 0, res.err
    drawn = pd.read_csv(sample)
    with open(tmp_path / "sample.mix.csv") as handle:
        mix = {row["slice"]: float(row["weight"]) for row in csv.DictReader(handle)}
    # the floor over-samples extraction: its share of the sample is far above its traffic
    assert (drawn.task == "extraction").mean() > 0.15
    assert mix["extraction"] == pytest.approx(0.05)

    rng = np.random.default_rng(0)
    effect = {"faq": 0.0, "drafting": -0.05, "extraction": -0.5}
    rows = []
    for rec in drawn.itertuples():
        base = rng.normal(4.0, 0.5)
        for arm, delta in (("a", 0.0), ("b", effect[rec.task])):
            rows.append((rec.request_id, arm, rec.task, round(base + delta, 3), rec.sample_weight))
    runs = tmp_path / "runs.csv"
    pd.DataFrame(rows, columns=["case_id", "arm", "task", "score", "sample_weight"]).to_csv(
        runs, index=False
    )
    result = compare([runs], baseline="a", by=("task",))
    pair = result.slicing().pairs[0]
    assert result.traffic == "sample_weight"
    traffic = next(s for s in pair.standardized if s.mix == "traffic")
    assert traffic.weights == pytest.approx(mix)
    # hand computation: traffic-weighted sum of the per-slice paired mean deltas
    expected = sum(mix[k] * effect[k] for k in mix)
    assert traffic.delta.estimate == pytest.approx(expected, abs=1e-9)
    # while the unweighted (actual-mix) delta is pulled down by the over-sampled slice
    actual = next(s for s in pair.standardized if s.mix == "actual")
    assert actual.delta.estimate < traffic.delta.estimate - 0.02


def test_bad_sample_weight_is_a_one_line_error(run_cli, write):
    path = write("w.csv", "case_id,arm,score,sample_weight\nc1,a,1,2.5\nc1,b,1,-1\n")
    res = run_cli("compare", path)
    assert res.code == 2
    assert "line 3" in res.err and "sample_weight" in res.err and "'-1'" in res.err

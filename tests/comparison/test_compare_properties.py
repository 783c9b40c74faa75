"""Property tests through the whole engine (hypothesis): swap arms, rescale weights."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldelta.comparison import compare

cases = st.lists(
    st.tuples(st.sampled_from(["x", "y", "z"]), st.integers(0, 1), st.integers(0, 1)),
    min_size=6,
    max_size=40,
)


def _write(rows: list[tuple[str, int, int]], folder: Path) -> Path:
    records = []
    for i, (slice_, a, b) in enumerate(rows):
        records.append((f"c{i}", "a", slice_, a))
        records.append((f"c{i}", "b", slice_, b))
    path = folder / "runs.csv"
    pd.DataFrame(records, columns=["case_id", "arm", "slice", "score"]).to_csv(path, index=False)
    return path


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_swapping_arms_flips_deltas_and_keeps_pvalues(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(rows, Path(tmp))
        ab = compare([path], baseline="a").slicing().pairs[0]
        ba = compare([path], baseline="b").slicing().pairs[0]
    for d1, d2 in zip([ab.overall, *ab.slices], [ba.overall, *ba.slices], strict=True):
        r1, r2 = d1.main, d2.main
        assert r1 is not None and r2 is not None
        assert _same(r1.estimate, -r2.estimate)
        assert _same(r1.pvalue, r2.pvalue)
        assert _same(r1.ci.low, -r2.ci.high) and _same(r1.ci.high, -r2.ci.low)
        assert r1.ci.low <= r1.estimate <= r1.ci.high
    assert _same(ab.pooled.delta, -ba.pooled.delta)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases, st.floats(0.01, 1000))
def test_scaling_mix_weights_changes_nothing(rows, k):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(rows, Path(tmp))
        slices = sorted({r[0] for r in rows})
        m1, m2 = Path(tmp) / "m1.csv", Path(tmp) / "m2.csv"
        m1.write_text("slice,weight\n" + "".join(f"{s},{i + 1}\n" for i, s in enumerate(slices)))
        m2.write_text(
            "slice,weight\n" + "".join(f"{s},{(i + 1) * k!r}\n" for i, s in enumerate(slices))
        )
        s1 = compare([path], baseline="a", mix=m1).slicing().pairs[0].standardized
        s2 = compare([path], baseline="a", mix=m2).slicing().pairs[0].standardized
    assert _same(s1[0].delta.estimate, s2[0].delta.estimate)
    assert _same(s1[0].delta.se, s2[0].delta.se)

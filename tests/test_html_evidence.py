"""The evidence (2x2 table or delta histogram) and the plan section of the HTML report."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from evaldelta import stats
from evaldelta.compare import compare
from evaldelta.gate import evaluate
from evaldelta.model import DeltaHistogram
from evaldelta.policy import parse_policy
from evaldelta.report._plan_rows import pairs_to_settle
from evaldelta.report.html import render_html


def _graded(path: Path, deltas: dict[str, list[float]], repeats: int = 1) -> Path:
    """Baseline scores 0.5 on every case; the candidate 0.5 + the given delta."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "slice", "arm", "repeat", "score"])
        for name, ds in deltas.items():
            for i, d in enumerate(ds):
                for r in range(repeats):
                    w.writerow([f"{name}-{i}", name, "a", r, 0.5])
                    w.writerow([f"{name}-{i}", name, "b", r, 0.5 + d])
    return path


def _expected(deltas: list[float], max_bins: int = 40) -> tuple[int, tuple[int, ...]]:
    """The documented binning, by numpy: zeros apart; Rice rule capped by distinct values."""
    arr = np.asarray([(0.5 + d) - 0.5 for d in deltas])  # as the rows carry them
    nz = arr[arr != 0]
    k = min(max_bins, len(set(nz.tolist())), math.ceil(2 * len(nz) ** (1 / 3)))
    counts, _ = np.histogram(nz, bins=k, range=(nz.min(), nz.max()))
    return int((arr == 0).sum()), tuple(int(c) for c in counts)


def _pair(result):  # type: ignore[no-untyped-def]
    return result.metrics[0].slicings[0].pairs[0]


def test_histogram_bins_the_case_deltas_with_zero_apart(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    x = [0.0] * 12 + [round(float(v), 3) for v in rng.normal(-0.1, 0.2, 60)]
    y = [0.0] * 5 + [0.11, -0.22, 0.31, 0.05, 0.07, -0.41, 0.29]
    pair = _pair(compare([_graded(tmp_path / "g.csv", {"x": x, "y": y})], baseline="a"))
    by_slice = {d.slice: d.histogram for d in pair.slices}
    for name, deltas in (("x", x), ("y", y)):
        h = by_slice[name]
        assert isinstance(h, DeltaHistogram)
        zero, counts = _expected(deltas)
        assert (h.n, h.zero, h.counts) == (len(deltas), zero, counts)
        assert len(h.edges) == len(h.counts) + 1
        nz = [d for d in deltas if d != 0]
        assert h.edges[0] == pytest.approx(min(nz)) and h.edges[-1] == pytest.approx(max(nz))
    overall = pair.overall.histogram
    assert overall is not None and overall.n == len(x) + len(y)
    assert overall.zero == 17 and overall.zero + sum(overall.counts) == overall.n


def test_histogram_has_at_most_forty_bins(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    deltas = [float(v) for v in rng.uniform(-0.4, 0.4, 9000)]
    pair = _pair(compare([_graded(tmp_path / "big.csv", {"s": deltas})], baseline="a"))
    h = pair.overall.histogram
    assert h is not None and len(h.counts) == 40 and sum(h.counts) == 9000 and h.zero == 0


def test_all_zero_deltas_are_one_bar(tmp_path: Path) -> None:
    pair = _pair(compare([_graded(tmp_path / "z.csv", {"s": [0.0] * 8})], baseline="a"))
    h = pair.overall.histogram
    assert h == DeltaHistogram(n=8, zero=8, edges=(), counts=())
    assert 'class="plot histogram"' in render_html(compare([tmp_path / "z.csv"], baseline="a"))


def _binary(path: Path, repeats: int) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "slice", "arm", "repeat", "score"])
        for i in range(40):
            for r in range(repeats):
                w.writerow([f"c{i}", "s", "a", r, int((i + r) % 3 != 0)])
                w.writerow([f"c{i}", "s", "b", r, int((i + 2 * r) % 4 != 0)])
    return path


def test_binary_single_attempt_keeps_the_two_by_two(tmp_path: Path) -> None:
    result = compare([_binary(tmp_path / "b.csv", 1)], baseline="a")
    assert _pair(result).overall.histogram is None
    page = render_html(result)
    assert 'class="tbl2x2"' in page and 'class="plot histogram"' not in page


def test_graded_and_repeated_data_draw_the_histogram(tmp_path: Path) -> None:
    for result in (
        compare([_binary(tmp_path / "r.csv", 3)], baseline="a"),  # binary, repeated
        compare([_graded(tmp_path / "g.csv", {"s": [0.0, 0.1, -0.2, 0.3] * 5})], baseline="a"),
    ):
        assert _pair(result).overall.histogram is not None
        page = render_html(result)
        assert 'class="tbl2x2"' not in page
        plot = page.split('class="plot histogram"', 1)[1].split("</div>", 1)[0]
        assert "<svg" in plot and "at 0" in plot and "equal-width bins" in plot
        assert not re.search(r'id="forest-\d+-mark', plot)  # the browser test counts those
        assert render_html(result) == page  # deterministic


def _plan_table(page: str) -> list[list[str]]:
    table = page.split('<table class="plan">', 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_plan_rows_state_pairs_to_settle_and_to_detect(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    open_ = [round(float(v), 4) for v in rng.normal(-0.05, 0.3, 30)]
    clear = [round(float(v), 4) for v in rng.normal(0.5, 0.1, 30)]
    runs = _graded(tmp_path / "p.csv", {"open": open_, "clear": clear})
    result = compare([runs], baseline="a")
    d = next(s for s in _pair(result).slices if s.slice == "open")
    assert d.paired is not None and d.paired.ci.low < 0 < d.paired.ci.high
    page = render_html(result)
    assert "pairs to settle (interval clears the bound)" in page
    assert "pairs to detect the observed delta (80% power)" in page
    assert "n = ⌈(z·s / |d − b|)²⌉" in page
    rows = _plan_table(page)
    assert [r[0] for r in rows] == ["open"]  # the clear slice needs no plan
    _slice, why, n_now, _obs, bound, settle, _mde, detect, method = rows[0]
    assert (why, n_now, bound, method) == (
        "interval contains zero",
        "30",
        "zero",
        "paired t (noncentral t)",
    )
    sd = float(np.std(open_, ddof=1))
    est = float(np.mean(open_))
    z = float(norm.ppf(0.975))
    assert settle == f"{math.ceil((z * sd / abs(est)) ** 2):,}"
    assert detect == f"{stats.required_pairs(abs(est), sd).n:,}"

    # a gate whose rule on the slice is inconclusive: judged against its bound, -margin
    policy = parse_policy("[defaults]\nmax_regression = 0.1\n", "p")
    verdict = evaluate(policy, result)
    rule = next(r for r in verdict.rules if r.slice == "open" and r.rule == "max_regression")
    assert rule.outcome == "inconclusive"
    gated = _plan_table(render_html(result, verdict))
    row = next(r for r in gated if r[0] == "open")
    assert row[1] == "gate inconclusive" and row[4] == "gate -0.100"
    assert row[5] == f"{math.ceil((z * sd / abs(est + 0.1)) ** 2):,}"


def test_binary_plan_uses_mcnemar(tmp_path: Path) -> None:
    result = compare([_binary(tmp_path / "b.csv", 1)], baseline="a")
    d = _pair(result).slices[0]
    assert d.paired is not None and d.table is not None
    if not d.paired.ci.low < 0 < d.paired.ci.high:
        pytest.skip("the hand-built slice is not open")
    row = _plan_table(render_html(result))[0]
    n, t = d.n_pairs, d.table
    assert row[-1] == "McNemar (Connor 1987)"
    expected = stats.required_pairs_mcnemar(t.only_candidate / n, t.only_baseline / n).n
    assert row[7] == f"{expected:,}"
    psi, delta = (t.only_baseline + t.only_candidate) / n, (t.only_candidate - t.only_baseline) / n
    settle = pairs_to_settle(delta, 0.0, math.sqrt(psi - delta**2), 0.95)
    assert row[5] == f"{math.ceil(settle):,}"


def test_pairs_to_settle_formula() -> None:
    z = float(norm.ppf(0.975))
    assert pairs_to_settle(-0.05, -0.15, 0.4, 0.95) == pytest.approx((z * 0.4 / 0.1) ** 2)
    assert math.isnan(pairs_to_settle(-0.15, -0.15, 0.4, 0.95))  # on the bound: never settles
    assert math.isnan(pairs_to_settle(0.1, 0.0, 0.0, 0.95))  # no spread

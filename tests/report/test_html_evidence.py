"""The evidence (2x2 table or delta histogram) and the plan section of the HTML report."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from scipy.stats import t as t_dist

from evaldelta import stats
from evaldelta.comparison import compare
from evaldelta.comparison.model import DeltaHistogram, to_jsonable
from evaldelta.gating import evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report.html import render_html
from tests.rows import write_rows


def _graded(path: Path, deltas: dict[str, list[float]], repeats: int = 1) -> Path:
    """Baseline scores 0.5 on every case; the candidate 0.5 + the given delta."""
    rows = []
    for name, ds in deltas.items():
        for i, d in enumerate(ds):
            for r in range(repeats):
                rows.append((f"{name}-{i}", name, "a", r, 0.5))
                rows.append((f"{name}-{i}", name, "b", r, 0.5 + d))
    return write_rows(path, rows, "case_id,slice,arm,repeat,score", eol="\r\n")


def _expected(deltas: list[float], max_bins: int = 40) -> tuple[int, tuple[int, ...]]:
    """The documented binning, by numpy: zeros apart; Rice rule capped by distinct values."""
    arr = np.asarray([(0.5 + d) - 0.5 for d in deltas])  # as the rows carry them
    nz = arr[arr != 0]
    k = min(max_bins, len(set(nz.tolist())), math.ceil(2 * len(nz) ** (1 / 3)))
    counts, _ = np.histogram(nz, bins=k, range=(nz.min(), nz.max()))
    return int((arr == 0).sum()), tuple(int(c) for c in counts)


REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"


def _pair(result):  # type: ignore[no-untyped-def]
    return result.slicing().pairs[0]


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
    rows = []
    for i in range(40):
        for r in range(repeats):
            rows.append((f"c{i}", "s", "a", r, int((i + r) % 3 != 0)))
            rows.append((f"c{i}", "s", "b", r, int((i + 2 * r) % 4 != 0)))
    return write_rows(path, rows, "case_id,slice,arm,repeat,score", eol="\r\n")


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
    assert "d ± t(n−1)·s/√n" in page
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
    assert settle == f"{_t_settle(est, 0.0, sd):,}"
    assert int(settle.replace(",", "")) > 30  # the interval contains zero at 30 pairs
    assert detect == f"{stats.required_pairs(abs(est), sd).n:,}"

    # a gate whose rule on the slice is inconclusive: judged against its bound, -margin
    policy = parse_policy("[defaults]\nmax_regression = 0.1\n", "p")
    verdict = evaluate(policy, result)
    rule = next(r for r in verdict.rules if r.slice == "open" and r.rule == "max_regression")
    assert rule.outcome == "inconclusive"
    gated = _plan_table(render_html(result, verdict))
    row = next(r for r in gated if r[0] == "open")
    assert row[1] == "gate inconclusive" and row[4] == "gate -0.100"
    assert row[5] == f"{_t_settle(est, -0.1, sd):,}"

    # the numbers are the Comparison's (against zero) and the Verdict's (against -margin),
    # and the JSON carries them (issue 25: report/ only formats)
    assert d.plan is not None and d.plan.bound == 0.0 and d.plan.test == "paired_t"
    assert math.ceil(d.plan.pairs_to_settle) == _t_settle(est, 0.0, sd)
    assert rule.plan is not None and rule.plan.bound == -0.1
    assert math.ceil(rule.plan.pairs_to_settle) == _t_settle(est, -0.1, sd)
    assert rule.plan.pairs_to_detect == d.plan.pairs_to_detect
    clear = next(s for s in _pair(result).slices if s.slice == "clear")
    assert clear.plan is not None  # held for every paired slice; shown where zero is inside
    pair_json = to_jsonable(_pair(result))
    open_json = next(s for s in pair_json["slices"] if s["slice"] == "open")
    assert open_json["plan"]["pairs_to_detect"] == stats.required_pairs(abs(est), sd).n
    assert to_jsonable(rule)["plan"]["bound"] == -0.1


def _t_settle(est: float, bound: float, sd: float) -> int:
    """Reference: the first n whose scipy t interval (n - 1 df) excludes the bound."""
    n = 2
    while True:
        low, high = t_dist.interval(0.95, n - 1, loc=est, scale=sd / math.sqrt(n))
        if not low <= bound <= high:
            return n
        n += 1


def test_binary_plan_uses_exact_mcnemar_with_connor_beside(tmp_path: Path) -> None:
    result = compare([_binary(tmp_path / "b.csv", 1)], baseline="a")
    d = _pair(result).slices[0]
    assert d.paired is not None and d.table is not None
    assert d.paired.ci.low < 0 < d.paired.ci.high  # the hand-built slice is open
    row = _plan_table(render_html(result))[0]
    n, t = d.n_pairs, d.table
    power = stats.required_pairs_mcnemar(t.only_candidate / n, t.only_baseline / n)
    assert row[-1] == f"exact McNemar (Connor 1987 normal approx.: {math.ceil(power.n_normal):,})"
    assert row[7] == f"{power.n:,}"
    # settle: the first n at which Newcombe's interval on the table scaled to n (same cell
    # shares) excludes zero, searched pair by pair; at n itself it is today's interval
    from evaldelta.stats._paired import _newcombe_paired

    z = float(norm.ppf(0.975))
    cells = (t.both_pass, t.only_candidate, t.only_baseline, t.both_fail)

    def scaled(k: int) -> tuple[float, float]:
        return _newcombe_paired(*(x * k / n for x in cells), z)

    assert scaled(n) == pytest.approx((d.paired.ci.low, d.paired.ci.high))
    k = n
    while scaled(k)[0] <= 0 <= scaled(k)[1]:
        k += 1
    assert int(row[5].replace(",", "")) == k


def test_pairs_to_clear_t_matches_scipy_t_interval() -> None:
    # reference: scipy.stats.t.interval on n - 1 degrees of freedom, searched pair by pair
    for est, bound, sd in [(-0.05, -0.15, 0.4), (0.02, 0.0, 0.3), (-0.3, 0.0, 1.1), (1.0, 0, 0.1)]:
        assert stats.pairs_to_clear_t(est, bound, sd) == _t_settle(est, bound, sd)
    assert math.isinf(stats.pairs_to_clear_t(-0.15, -0.15, 0.4))  # on the bound
    assert math.isinf(stats.pairs_to_clear_t(0.1, 0.0, 0.0))  # no spread


def test_pairs_to_clear_t_never_below_n_while_the_interval_holds_the_bound() -> None:
    # METR c_1-4h (issue 11): 18 pairs, interval [-0.3, +17.8] contains zero; the normal
    # formula said 17. With t on n - 1 df the answer must exceed 18.
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(3, 60))
        x = rng.normal(float(rng.normal(0, 0.3)), 1.0, n)
        est, sd = float(x.mean()), float(x.std(ddof=1))
        low, high = t_dist.interval(0.95, n - 1, loc=est, scale=sd / math.sqrt(n))
        if low <= 0 <= high:
            assert stats.pairs_to_clear_t(est, 0.0, sd) > n


@pytest.mark.parametrize("name", ["metr_time_horizon", "swebench_verified_bash_only"])
def test_pairs_to_settle_exceeds_n_now_on_every_open_real_slice(name: str) -> None:
    # the example: METR c_1-4h, "paired n now 18, pairs to settle 17" while its
    # interval [-0.3, +17.8] still contained zero (the plan used z, the interval t)
    folder = REAL / name
    if not folder.exists():
        pytest.skip(f"{folder} is not beside the checkout")
    result = compare([next(folder.glob("*.csv"))])
    checked = 0
    for metric in result.metrics:
        for slicing in metric.slicings:
            for pair in slicing.pairs:
                for d in pair.slices:  # the Comparison holds each paired slice's plan
                    ci = d.paired.ci if d.paired is not None else None
                    open_ = ci is not None and ci.low <= 0 <= ci.high
                    if open_ and d.plan is not None and math.isfinite(d.plan.pairs_to_settle):
                        assert math.ceil(d.plan.pairs_to_settle) > d.n_pairs, d
                        checked += 1
    assert checked > 0

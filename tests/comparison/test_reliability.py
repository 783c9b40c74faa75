"""Repeat reliability through compare: every figure equals stats' on the raw rows, by hand.

The rows are written here; the expected figures are :func:`stats.repeat_reliability`,
:func:`stats.pass_hat_k_slices`, :func:`stats.pass_hat_k_paired` and
:func:`stats.repeat_spread` called on per-case counts that plain Python takes from those
rows, never from the engine's cells. An Inspect log with 4 epochs and Inspect's own
``pass_at_2`` reducer checks pass@2 against the figure Inspect wrote in the log.
"""

from __future__ import annotations

import csv
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from evaldelta import stats
from evaldelta.comparison import compare
from evaldelta.comparison._reliability import spread_from_moments
from evaldelta.evidence import ALL, RepeatSpreadMoments
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.html import render_html

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "inspect"
SLICES = ("alpha", "beta", "gamma")


def _rows(seed: int = 7, graded: bool = False) -> list[dict[str, Any]]:
    """Two arms, 3 slices x 12 cases, 3 repeats (a few cases 2: short), pass/fail or graded."""
    rng = random.Random(seed)
    rows = []
    for s, name in enumerate(SLICES):
        for i in range(12):
            case = f"{name}-{i:02d}"
            p = rng.random()
            for arm, shift in (("base", 0.0), ("cand", -0.15 + 0.1 * s)):
                repeats = 2 if (i == 0 and arm == "cand") or (i == 1 and s == 1) else 3
                for r in range(repeats):
                    u = rng.random()
                    score = round(min(1.0, max(0.0, p + shift + 0.3 * (u - 0.5))), 3)
                    value = score if graded else float(u < p + shift)
                    rows.append(
                        {"arm": arm, "case_id": case, "repeat": r, "slice": name, "score": value}
                    )
    return rows


def _write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "rows.csv") -> Path:
    path = tmp_path / name
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _by_hand(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """(arm, case) -> its scores, and each case's slice, in plain Python."""
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        out[(r["arm"], r["case_id"])].append(float(r["score"]))
    return out


def _slice_of(case: str) -> str:
    return case.split("-")[0]


def _tally(runs: list[list[float]]) -> stats.RepeatCounts:
    return stats.RepeatCounts(
        tuple(len(v) for v in runs), tuple(sum(x >= 1 for x in v) for v in runs)
    )


def _counts(scores: dict[tuple[str, str], list[float]], arm: str, name: str) -> stats.RepeatCounts:
    cases = sorted(c for a, c in scores if a == arm and name in (ALL, _slice_of(c)))
    return _tally([scores[(arm, c)] for c in cases])


def _paired(scores: dict[tuple[str, str], list[float]], name: str) -> tuple[Any, Any]:
    cases = sorted(c for a, c in scores if a == "base" and name in (ALL, _slice_of(c)))
    return _tally([scores[("base", c)] for c in cases]), _tally(
        [scores[("cand", c)] for c in cases]
    )


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@pytest.mark.filterwarnings("ignore::evaldelta.stats.DegenerateDataWarning")
@pytest.mark.filterwarnings("ignore::evaldelta.stats.ReliabilityWarning")
def test_pass_at_k_pass_hat_k_and_paired_equal_stats_on_the_raw_rows(tmp_path: Path) -> None:
    rows = _rows()
    result = compare([_write(tmp_path, rows)])
    rel = result.reliability
    assert rel is not None and rel.k == 3 and rel.k_from == "repeats"
    (metric,) = rel.metrics
    scores = _by_hand(rows)
    assert {(a.arm, a.slice) for a in metric.arms} == {
        (arm, s) for arm in ("base", "cand") for s in (*SLICES, ALL)
    }
    for got in metric.arms:
        counts = _counts(scores, got.arm, got.slice)
        want = stats.repeat_reliability(counts.attempts, counts.passes, 3)
        for ours, theirs in ((got.pass_at_k, want.pass_at_k), (got.pass_hat_k, want.pass_hat_k)):
            assert _same(ours.estimate, theirs.estimate)
            assert _same(ours.ci.low, theirs.ci.low) and _same(ours.ci.high, theirs.ci.high)
        assert (got.always_pass, got.always_fail, got.mixed, got.scored, got.short) == (
            want.always_pass, want.always_fail, want.mixed, want.cases, want.short
        )  # fmt: skip
        shares = [p / n for n, p in zip(counts.attempts, counts.passes, strict=True)]
        assert got.rate == pytest.approx(sum(shares) / len(shares))
    slices = stats.pass_hat_k_slices({s: _paired(scores, s) for s in SLICES}, 3)
    for got in metric.pairs:
        assert got.candidate == "cand"
        if got.slice == ALL:
            want = stats.pass_hat_k_paired(*_paired(scores, ALL), 3)
            assert math.isnan(got.holm)
        else:
            want = slices.deltas[got.slice]
            assert _same(got.holm, slices.holm[got.slice])
            assert got.short == slices.short[got.slice]
        assert _same(got.delta.estimate, want.estimate) and got.delta.n == want.n
        assert _same(got.delta.ci.low, want.ci.low) and _same(got.delta.pvalue, want.pvalue)
    short = next(g for g in metric.pairs if g.slice == ALL).short
    assert short == 4  # cand's 3 two-attempt cases and beta-01


def test_k_can_be_chosen_and_no_repeats_means_no_section(tmp_path: Path) -> None:
    rows = _rows()
    two = compare([_write(tmp_path, rows)], k=2)
    assert two.reliability is not None and (two.reliability.k, two.reliability.k_from) == (2, "--k")
    overall = next(a for a in two.reliability.metrics[0].arms if (a.slice, a.arm) == (ALL, "base"))
    assert overall.short == 0
    single = [r for r in rows if r["repeat"] == 0]
    plain = compare([_write(tmp_path, single, "single.csv")])
    assert plain.reliability is None
    assert "Repeat reliability" not in render_text(plain)
    assert json.loads(render_json(plain))["reliability"] is None


@pytest.mark.filterwarnings("ignore::evaldelta.stats.DegenerateDataWarning")
def test_a_graded_metric_gets_the_spread_of_stats_repeat_spread(tmp_path: Path) -> None:
    rows = _rows(graded=True)
    result = compare([_write(tmp_path, rows)])
    assert result.reliability is not None
    (metric,) = result.reliability.metrics
    assert not metric.binary and not metric.arms
    scores = _by_hand(rows)
    assert len(metric.spread) == 6
    for got in metric.spread:
        cases = sorted(c for a, c in scores if a == got.arm and _slice_of(c) == got.slice)
        want = stats.repeat_spread([scores[(got.arm, c)] for c in cases])
        assert got.mean_sd.estimate == pytest.approx(want.mean_sd.estimate, abs=1e-12)
        assert got.mean_sd.ci.low == pytest.approx(want.mean_sd.ci.low, abs=1e-12)
        assert got.mean_sd.ci.high == pytest.approx(want.mean_sd.ci.high, abs=1e-12)
        assert got.pooled_sd == pytest.approx(want.pooled_sd, abs=1e-12)
        assert (got.cases, got.short) == (want.cases, want.short)


@pytest.mark.filterwarnings("ignore::evaldelta.stats.DegenerateDataWarning")
def test_spread_from_moments_matches_on_one_case() -> None:
    one = spread_from_moments(RepeatSpreadMoments(1, 2, 0.5, 0.25, 0.5, 2), 0.95)
    want = stats.repeat_spread([[0.0, 0.5, 1.0], [1.0], []])
    assert one.mean_sd.estimate == want.mean_sd.estimate == 0.5
    assert (one.cases, one.short, one.pooled_sd) == (want.cases, want.short, want.pooled_sd)


@pytest.mark.filterwarnings("ignore::evaldelta.stats.DegenerateDataWarning")
@pytest.mark.filterwarnings("ignore::evaldelta.stats.ReliabilityWarning")
def test_every_format_shows_the_section(tmp_path: Path) -> None:
    result = compare([_write(tmp_path, _rows())])
    text = render_text(result)
    assert "Repeat reliability" in text
    assert "every one of 3 attempts passes" in text
    assert "paired pass^3 delta vs base" in text
    markdown = render_markdown(result)
    assert "## Repeat reliability" in markdown and "| pass^3 |" in markdown
    assert 'id="reliability"' in render_html(result)
    data = json.loads(render_json(result))
    assert data["reliability"]["k"] == 3


def test_identical_repeats_get_a_note_in_every_format(tmp_path: Path) -> None:
    rows = _rows()
    for r in rows:  # base: one output per case (a cache); cand: a new output per repeat
        r["output"] = f"{r['case_id']}" if r["arm"] == "base" else f"{r['case_id']}#{r['repeat']}"
    result = compare([_write(tmp_path, rows)])
    assert result.reliability is not None
    shares = {i.arm: (i.cases, i.identical) for i in result.reliability.identical}
    assert shares == {"base": (36, 36), "cand": (36, 0)}
    note = (
        "repeats of base are identical on 100% of cases: a cache or temperature 0; pass^k "
        "and the per-case means treat them as independent draws"
    )
    assert note in result.notes
    assert not any("repeats of cand" in n for n in result.notes)
    assert note in render_text(result)
    assert "repeats of base are identical on 100% of cases" in render_markdown(result)
    assert "repeats of base are identical on 100% of cases" in render_html(result)


def test_pass_at_2_equals_inspects_own_pass_at_2_reducer() -> None:
    """The log's epochs reducer is pass_at_2 (4 epochs): Inspect's accuracy is pass@2."""
    folder = LOGS / "v0.3.285-reducers"
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    result = compare([folder / "pass_at_2"], metrics=("match",), k=2)
    assert result.reliability is not None
    overall = {a.arm: a for a in result.reliability.metrics[0].arms if a.slice == ALL}
    entries = [e for e in manifest["files"] if e["path"].startswith("pass_at_2/")]
    assert len(entries) == 2
    for entry in entries:
        (score,) = [s for s in entry["results"]["scores"] if s["name"] == "match"]
        stat = score["metrics"]["accuracy"]
        inspect = float(stat["value"] if isinstance(stat, dict) else stat)
        assert overall[entry["model"]].pass_at_k.estimate == pytest.approx(inspect, abs=1e-12)


def test_an_inspect_log_with_epochs_reports_pass_hat_3() -> None:
    files = sorted((LOGS / "v0.3.285" / "eval").glob("*.eval"))
    result = compare(files, by=["metadata.category"])
    assert result.reliability is not None and result.reliability.k == 3
    arms = {(a.arm, a.slice) for a in result.reliability.metrics[0].arms}
    assert ("mockllm/model-a", "arithmetic") in arms
    assert "pass^3" in render_text(result)

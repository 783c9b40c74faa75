"""Phase two (evaldelta.comparison._build) reads hand-built Evidence and runs no query.

The evidence below is two slices of paired pass/fail cases whose 2x2 tables are Newcombe
(1998) Table II's examples; the expected 95% limits are the paper's (method 10), as
reproduced in tests/stats/test_stats_paired.py.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaldelta.comparison import Options, build
from evaldelta.evidence import (
    ALL,
    ArmSliceStats,
    Evidence,
    MetricEvidence,
    Moments,
    PairEvidence,
    PairSliceStats,
    SlicingEvidence,
)

# (both pass, only candidate, only baseline, neither) -> Newcombe (1998) limits for
# candidate - baseline; e, f, g, h of the paper with first = candidate.
TABLES = {
    "a": ((36, 12, 2, 0), (0.0569, 0.3404)),
    "b": ((18, 12, 2, 18), (0.0562, 0.3290)),
}


def _moments(values: list[int]) -> Moments:
    return Moments(len(values), float(sum(values)), float(sum(v * v for v in values)))


def _cases(table: tuple[int, int, int, int]) -> tuple[list[int], list[int]]:
    """Per-case (baseline, candidate) scores of one 2x2 table."""
    e, f, g, h = table
    base = [1] * e + [0] * f + [1] * g + [0] * h
    cand = [1] * e + [1] * f + [0] * g + [0] * h
    return base, cand


def _arm(arm: str, label: str, scores: list[int]) -> ArmSliceStats:
    return ArmSliceStats(
        arm=arm,
        slice=label,
        cases=len(scores),
        attempts=len(scores),
        reviewed=len(scores),
        scores=_moments(scores),
        max_scored_per_case=1,
        cost_usd=None,
        attempt_total=float(sum(scores)),
        with_pass=sum(scores),
        with_fail=len(scores) - sum(scores),
    )


def _pair(label: str, base: list[int], cand: list[int]) -> PairSliceStats:
    delta = [c - b for b, c in zip(base, cand, strict=True)]
    return PairSliceStats(
        baseline="v1",
        candidate="v2",
        slice=label,
        delta=_moments(delta),
        nonzero=sum(1 for d in delta if d),
        base=_moments(base),
        cand=_moments(cand),
        both_pass=sum(1 for b, c in zip(base, cand, strict=True) if b and c),
        only_baseline=sum(1 for b, c in zip(base, cand, strict=True) if b and not c),
        only_candidate=sum(1 for b, c in zip(base, cand, strict=True) if c and not b),
        both_fail=sum(1 for b, c in zip(base, cand, strict=True) if not b and not c),
        only_in_baseline=0,
        only_in_candidate=0,
        unscored_in_one=0,
    )


def hand_built() -> Evidence:
    arm_stats, pairs = [], []
    all_b: list[int] = []
    all_c: list[int] = []
    for label, (table, _) in TABLES.items():
        base, cand = _cases(table)
        all_b += base
        all_c += cand
        arm_stats += [_arm("v1", label, base), _arm("v2", label, cand)]
        pairs.append(_pair(label, base, cand))
    arm_stats += [_arm("v1", ALL, all_b), _arm("v2", ALL, all_c)]
    pairs.append(_pair(ALL, all_b, all_c))
    pair = PairEvidence(
        candidate="v2",
        slices=tuple(pairs),
        histograms={},
        listing={"only_in_baseline": [], "only_in_candidate": [], "discordant": []},
        outputs={},
    )
    slicing = SlicingEvidence(by="slice", arm_stats=tuple(arm_stats), pairs=(pair,))
    return Evidence(
        inputs=("hand-built",),
        arms=("v1", "v2"),
        present=("v1", "v2"),
        baseline_reason="--baseline",
        by=("slice",),
        slice_names=tuple(TABLES),
        slice_sizes={"slice": (2, 0)},
        trimmed=0,
        observed={"score": (0.0, 1.0)},
        metrics=(MetricEvidence(metric="score", binary=True, slicings=(slicing,)),),
        pins={},
    )


@pytest.fixture
def no_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any Ibis execution during the test fails it."""
    _refuse_queries(monkeypatch)


def _refuse_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    import ibis.expr.types as ir

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("phase two ran a query")

    from ibis.backends.duckdb import Backend

    for name in ("to_pyarrow", "execute", "to_pyarrow_batches", "to_polars"):
        assert hasattr(ir.Expr, name), name
        monkeypatch.setattr(ir.Expr, name, refuse)
    # evaldelta.sources._fetch runs DuckDB relations itself (no pandas import): refuse those
    for name in ("_to_duckdb_relation", "raw_sql", "sql"):
        assert hasattr(Backend, name), name
        monkeypatch.setattr(Backend, name, refuse)


def test_hand_built_evidence_gives_the_papers_limits(no_queries: None) -> None:
    result = build(hand_built(), Options())
    pair = result.slicing().pairs[0]
    for d in pair.slices:
        table, (low, high) = TABLES[d.slice]
        e, f, g, h = table
        assert d.basis == "paired"
        assert d.main is not None
        assert d.main.estimate == pytest.approx((f - g) / (e + f + g + h), abs=1e-12)
        assert d.main.ci.low == pytest.approx(low, abs=5e-5)
        assert d.main.ci.high == pytest.approx(high, abs=5e-5)
    # pooled = total passes / cases of each arm, from the tables: (36+2+18+2)/100, (36+12+18+12)/100
    assert pair.pooled.baseline == pytest.approx(58 / 100)
    assert pair.pooled.candidate == pytest.approx(78 / 100)


def _walk(value: Any) -> list[Any]:
    """Every leaf value inside dataclasses, mappings and sequences."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [x for f in dataclasses.fields(value) for x in _walk(getattr(value, f.name))]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in (*_walk(k), *_walk(v))]
    if isinstance(value, list | tuple | set | frozenset):
        return [x for v in value for x in _walk(v)]
    return [value]


def test_gathered_evidence_holds_only_plain_values(tmp_path: Any) -> None:
    """The evidence of a real read carries no backend object, so phase two cannot query."""
    from evaldelta.engine.evidence import gather
    from evaldelta.evidence import Request
    from evaldelta.sources import parse_source, read_sources

    path = tmp_path / "rows.csv"
    rows = ["case_id,arm,slice,score"]
    for i in range(40):
        rows += [f"c{i},v1,s{i % 3},{i % 2}", f"c{i},v2,s{i % 3},{(i // 3) % 2}"]
    path.write_text("\n".join(rows) + "\n")
    tables = read_sources([parse_source(str(path))], slice_columns=("slice",))
    evidence = gather(tables, Request())
    plain = (str, int, float, bool, type(None))
    leaves = _walk(evidence)
    assert leaves
    odd = {type(x).__name__ for x in leaves if not isinstance(x, plain)}
    assert not odd, odd


def test_the_guard_catches_a_query(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The no-query guard above is not vacuous: phase one under it fails."""
    from evaldelta.engine.evidence import gather
    from evaldelta.evidence import Request
    from evaldelta.sources import parse_source, read_sources

    path = tmp_path / "rows.csv"
    path.write_text("case_id,arm,score\nc1,v1,1\nc1,v2,0\n")
    tables = read_sources([parse_source(str(path))], slice_columns=("slice",))
    _refuse_queries(monkeypatch)
    with pytest.raises(AssertionError, match="ran a query"):
        gather(tables, Request())


BACKENDS = ("ibis", "duckdb", "pyarrow", "sqlglot")
PURE_BUILD = f"""
import sys
from evaldelta.comparison import Options, build
from evaldelta.comparison.model import to_jsonable
from tests.comparison.test_build_pure import hand_built
result = build(hand_built(), Options())
assert to_jsonable(result)["metrics"][0]["slicings"][0]["pairs"]
print(",".join(m for m in {BACKENDS!r} if m in sys.modules))
"""


def test_phase_two_loads_no_backend() -> None:
    """A fresh interpreter builds a Comparison from hand-built evidence with no Ibis,
    DuckDB, pyarrow or sqlglot loaded: phase two and its types stand apart from the engine."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    done = subprocess.run(
        [sys.executable, "-c", PURE_BUILD], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"phase two loaded {done.stdout.strip()}"


def test_the_backend_check_is_not_vacuous() -> None:
    """The same check sees the backend when the engine is imported."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    code = PURE_BUILD.replace("import sys\n", "import sys\nimport evaldelta.engine.evidence\n")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "ibis" in done.stdout

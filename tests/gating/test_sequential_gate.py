"""bench/sequential.py measures the real gate: its vectorised decisions equal ``gate.evaluate``.

The bench decides each look from a few capital paths per rule and Holm's step
(bench/_sequential_core.py); here, on seeded runs, every look's decision is compared with
``gating.evaluate(policy, from_deltas({slice: stats.anytime_paired(...)}))`` (and
``anytime_mean`` for ``min_score``), and the peeked fixed-sample gate with ``evaluate`` on
``stats.paired_proportions``. The runs are built so that fail, pass and inconclusive all occur.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "sequential.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evaldelta_bench_sequential", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _policy(margin: float, min_score: float | None = None) -> str:
    text = f'basis = "interval"\n[defaults]\nmax_regression = {margin}\n'
    return text + (f"min_score = {min_score}\n" if min_score is not None else "")


def _slices(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three pass/fail slices: identical arms, a candidate better, one about 20 points worse."""
    q = rng.beta(0.35, 0.15, size=(3, n))
    base = rng.random((3, n)) < q
    cand = rng.random((3, n)) < q
    cand[1] |= rng.random(n) < 0.2  # better: passes a margin
    cand[2] &= rng.random(n) > 0.3  # worse (about -0.2): fails
    return base, cand


@pytest.mark.parametrize(("seed", "margin"), [(1, 0.0), (2, 0.02), (3, 0.05)])
def test_every_look_of_the_sequential_gate_is_the_real_gates(
    bench: ModuleType, seed: int, margin: float
) -> None:
    core = sys.modules["_sequential_core"]
    base, cand = _slices(np.random.default_rng(seed), 400)
    delta = cand.astype(float) - base
    rule = core.anytime_rule(delta, -1.0, 1.0, -margin, informative=True)
    names = ["a", "b", "c"]
    seen = set()
    for t in range(10, 401, 10):
        mine = str(
            core.verdict_outcome(rule.p[:, t - 1], rule.fail[:, t - 1], rule.passed[:, t - 1])
        )
        real = core.real_outcome(
            _policy(margin),
            {s: delta[j, :t] for j, s in enumerate(names)},
            (-1.0, 1.0),
            kind="binary",
        )
        assert mine == real, (t, mine, real)
        seen.add(real)
    assert "fail" in seen and "inconclusive" in seen


def test_a_pass_is_the_real_gates_too(bench: ModuleType) -> None:
    """Two slices both clearly better than a 0.05 margin: the gate passes after a while."""
    core = sys.modules["_sequential_core"]
    rng = np.random.default_rng(9)
    base = rng.random((2, 600)) < 0.6
    cand = base | (rng.random((2, 600)) < 0.3)
    delta = cand.astype(float) - base
    rule = core.anytime_rule(delta, -1.0, 1.0, -0.05, informative=True)
    seen = set()
    for t in range(10, 601, 10):
        mine = str(
            core.verdict_outcome(rule.p[:, t - 1], rule.fail[:, t - 1], rule.passed[:, t - 1])
        )
        real = core.real_outcome(
            _policy(0.05), {"x": delta[0, :t], "y": delta[1, :t]}, (-1.0, 1.0), kind="binary"
        )
        assert mine == real, (t, mine, real)
        seen.add(real)
    assert seen == {"inconclusive", "pass"}


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_every_look_of_the_peeked_fixed_gate_is_the_real_gates(
    bench: ModuleType, margin: float
) -> None:
    core = sys.modules["_sequential_core"]
    base, cand = _slices(np.random.default_rng(4), 300)
    looks = np.arange(10, 301, 10)
    a, b, c, d = (x[0] for x in bench._tables(base[None], cand[None], looks))
    mine = core.fixed_fails(a, b, c, d, -margin, 3)
    seen = set()
    for li, t in enumerate(looks):
        tables = {
            s: (int(a[li, j]), int(b[li, j]), int(c[li, j]), int(d[li, j]))
            for j, s in enumerate("xyz")
        }
        real = core.real_fixed_outcome(_policy(margin), tables)
        assert bool(mine[li]) == (real == "fail"), (t, real)
        seen.add(bool(mine[li]))
    assert seen == {True, False}


def test_the_seed_004_replay_decides_as_the_real_gate_at_every_look(bench: ModuleType) -> None:
    """Two seeded orders of seed 004 (10 cases per open slice a look, the runner's default),
    every look and the stop checked with the real gate by the bench's own check; the recorded
    data fail on extraction."""
    data = bench.seed004()
    names = sorted(data)
    rng = np.random.default_rng(5)
    orders = [np.argsort(rng.random((2, len(data[s][0]))), axis=1) for s in names]
    before = sum(bench.CHECK.done.values())
    for min_score in (4.0, None):
        res = bench.replay(data, orders, 0.15, min_score, 10, traced=2)
        bench._check_replay(data, orders, _policy(0.15, min_score), res, 2)
        assert list(res.outcome) == ["fail", "fail"]
        assert all(d.startswith("extraction") for d in res.decided_by)
        assert {w for _, _, w in res.trace} == {"inconclusive", "fail"}
    assert sum(bench.CHECK.done.values()) - before > 40


def test_the_batches_take_the_open_slices_in_proportion(bench: ModuleType) -> None:
    sizes = np.array([150, 2050, 400])
    k = np.zeros((1, 3), dtype=int)
    live = np.ones((1, 3), dtype=bool)
    for _ in range(20):  # a look takes 10 cases per open slice: 30 here
        k += bench._next_batch(k, sizes, live, 10)
    assert k.sum() == 600 and np.allclose(k[0] / 600, sizes / sizes.sum(), atol=0.01)
    live[0, 1] = False  # the big slice closes: the two others share 20 cases a look
    taken = bench._next_batch(k, sizes, live, 10)
    assert taken[0, 1] == 0 and taken.sum() == 20


def test_the_docs_section_is_replaced_in_place_and_kept_by_calibrate(bench: ModuleType) -> None:
    doc = "# Calibration\n\n## Gate\n\ntext\n\n## References\n\n- Holm\n"
    first = bench.splice(doc, f"{bench.BEGIN}\n## Sequential gate (issue 26)\n\nold\n{bench.END}")
    assert first.index(bench.BEGIN) < first.index("## References")
    second = bench.splice(
        first, f"{bench.BEGIN}\n## Sequential gate (issue 26)\n\nnew\n{bench.END}"
    )
    assert "new" in second and "old" not in second and second.count(bench.BEGIN) == 1
    assert bench.keep_section(second, doc) == second  # calibrate.py rewrites the rest

"""The reducers of repeats against independent definitions (Python's statistics, the papers).

References: pass@k is Chen et al. 2021, eq. 1, ``1 - C(n-c, k) / C(n, k)`` (evaluated with
math.comb here; the code uses the paper's product form); pass^k is Yao et al. 2024
(tau-bench), ``C(c, k) / C(n, k)``; Inspect AI's mode is ``Counter.most_common``, whose ties
go to the first value seen, which is what ``statistics.mode`` does (Python >= 3.8).
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from evaldelta.stats import parse_reducer, reduce_values


def _draws(seed: int, n: int = 400) -> list[list[float]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        size = rng.randint(1, 7)
        pool = rng.choice([[0.0, 1.0], [0.0, 0.5, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
        out.append([rng.choice(pool) for _ in range(size)])
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_plain_reducers_match_python(seed: int) -> None:
    for values in _draws(seed):
        assert reduce_values(values, parse_reducer("mean")) == pytest.approx(
            statistics.fmean(values), abs=1e-12
        )
        assert reduce_values(values, parse_reducer("median")) == statistics.median(values)
        assert reduce_values(values, parse_reducer("max")) == max(values)
        assert reduce_values(values, parse_reducer("min")) == min(values)
        assert reduce_values(values, parse_reducer("mode")) == statistics.mode(values)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_counting_reducers_match_the_papers(k: int) -> None:
    for values in _draws(k):
        n, c = len(values), sum(v >= 1.0 for v in values)
        at_least = reduce_values(values, parse_reducer(f"at_least_{k}"))
        assert at_least == (1.0 if c >= k else 0.0)
        pass_at = reduce_values(values, parse_reducer(f"pass_at_{k}"))
        pass_hat = reduce_values(values, parse_reducer(f"pass_{k}"))
        if n < k:
            assert math.isnan(pass_at) and math.isnan(pass_hat)
            continue
        assert pass_at == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)
        assert pass_hat == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-15)


def test_unscored_attempts_are_left_out() -> None:
    nan = math.nan
    assert reduce_values([nan, 1.0, 0.0, nan], parse_reducer("max")) == 1.0
    assert reduce_values([nan, 0.0], parse_reducer("mean")) == 0.0
    assert math.isnan(reduce_values([nan, nan], parse_reducer("max")))
    assert math.isnan(reduce_values([1.0, nan], parse_reducer("pass_at_2")))  # n < k


@pytest.mark.parametrize("text", ["", "maximum", "at_least_0", "pass_at_x", "pass_at_-1"])
def test_unknown_reducer_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="unknown reducer"):
        parse_reducer(text)


def test_names_round_trip() -> None:
    for name in ("mean", "median", "mode", "max", "min", "at_least_2", "pass_at_3", "pass_4"):
        assert parse_reducer(name).name == name

"""Comparison.pair / .slicing and PairComparison.slice: names instead of index chains."""

from __future__ import annotations

import pytest

from evaldelta.comparison import Options, build
from evaldelta.comparison.model import ALL_CASES, NotInComparison
from tests.comparison.test_build_pure import hand_built


def test_pair_and_slice_find_by_name() -> None:
    result = build(hand_built(), Options())
    pair = result.pair("v2")
    assert pair is result.metrics[0].slicings[0].pairs[0]
    assert result.pair("v2", metric="score", by="slice") is pair
    assert result.slicing() is result.metrics[0].slicings[0]
    assert pair.slice("a") is pair.slices[0]
    assert pair.slice(ALL_CASES) is pair.overall


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda r: r.pair("v9"), "no candidate 'v9' in this comparison; it has: 'v2'"),
        (
            lambda r: r.pair("v2", metric="cost"),
            "no metric 'cost' in this comparison; it has: 'score'",
        ),
        (
            lambda r: r.pair("v2", by="region"),
            "no slicing 'region' in this comparison; it has: 'slice'",
        ),
        (
            lambda r: r.pair("v2").slice("zz"),
            "no slice 'zz' in this comparison; it has: 'a', 'b', '(all cases)'",
        ),
    ],
)
def test_absent_names_say_what_there_is(call, needle) -> None:  # type: ignore[no-untyped-def]
    result = build(hand_built(), Options())
    with pytest.raises(NotInComparison) as caught:
        call(result)
    assert isinstance(caught.value, KeyError)
    assert needle in str(caught.value)

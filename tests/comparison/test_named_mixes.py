"""Named mixes side by side (issue 13): parsing, errors, and the same numbers as one at a time.

Reference values: each mix run on its own through ``compare(mix=...)`` (the path every
existing test covers), and seed 000's published traffic figures (v2 - v1 = -1.2 pts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.comparison.model import Standardized
from evaldelta.demo import data_path
from evaldelta.errors import MixError, UsageError
from tests.conftest import one_line_error
from tests.rows import csv_text


@pytest.fixture(scope="module")
def seed000() -> tuple[Path, Path]:
    with data_path("seed000.csv") as rows, data_path("traffic000.csv") as traffic:
        return rows, traffic


def _std(result, name: str | None = None) -> Standardized:  # type: ignore[no-untyped-def]
    stds = result.slicing().pairs[0].standardized
    return stds[0] if name is None else next(s for s in stds if s.mix == name)


def test_each_named_mix_is_what_compare_gives_on_its_own(seed000):
    rows, traffic = seed000
    both = compare(
        [rows], baseline="v1", mix=[f"today={traffic}", "equal", "actual"], traffic=traffic
    )
    pair = both.slicing().pairs[0]
    assert [s.mix for s in pair.standardized] == ["today", "equal", "actual", "traffic"]
    assert both.mix == "today" and both.mixes == ("today", "equal", "actual")
    for name, spec in (("today", traffic), ("equal", "equal"), ("actual", "actual")):
        alone = _std(compare([rows], baseline="v1", mix=spec))
        side = _std(both, name)
        assert side.delta.estimate == alone.delta.estimate
        assert (side.delta.ci.low, side.delta.ci.high) == (alone.delta.ci.low, alone.delta.ci.high)
        assert side.per_arm["v2"].estimate == alone.per_arm["v2"].estimate
        assert side.break_even == alone.break_even
    # seed 000: "Under the weighting that matches who we actually serve, v2 is 1.2 points worse"
    assert _std(both, "today").delta.estimate == pytest.approx(-0.012, abs=1e-12)
    assert _std(both, "today").verdict == "includes_zero"  # [-3.3, +0.9]
    assert _std(both, "equal").verdict == "ahead"  # +15.3 [+11.9, +18.6]
    # the --traffic mix is the same weights under its own name
    assert _std(both, "traffic").delta.estimate == _std(both, "today").delta.estimate


def test_a_mapping_names_the_mixes_and_a_bare_file_is_named_after_itself(seed000):
    rows, traffic = seed000
    result = compare([rows], baseline="v1", mix={"prod": traffic, "flat": "equal"})
    assert result.mixes == ("prod", "flat")
    bare = compare([rows], baseline="v1", mix=[str(traffic)])
    assert bare.mixes == (bare.mix,) and bare.mix.startswith("file:")
    assert bare.mix.endswith("traffic000.csv")


def test_one_mix_behaves_as_before(seed000):
    rows, _ = seed000
    result = compare([rows], baseline="v1", mix="equal")
    assert result.mix == "equal" and result.mixes == ("equal",)
    std = _std(result)
    assert std.weights == pytest.approx(dict.fromkeys(std.weights, 0.25))
    # the inputs the gate and the sweep plot read: each slice's delta, as the slice rows say
    deltas = {d.slice: d.main.estimate for d in result.slicing().pairs[0].slices}
    assert std.slice_deltas == pytest.approx(deltas)
    assert std.slice_deltas["long_context"] == pytest.approx(0.95 - 0.20)


@pytest.mark.parametrize(
    ("mix", "error", "needle"),
    [
        (["a=equal", "a=actual"], UsageError, "two mixes are named 'a'"),
        (["equal", "equal"], UsageError, "two mixes are named 'equal'"),
        (["traffic=equal"], UsageError, "the name 'traffic' is kept"),
        (["chosen=actual"], UsageError, "the name 'chosen' is kept"),
        (["prodution"], UsageError, "'prodution' is not a mix"),
        (["=equal"], UsageError, "name before '=' is empty"),
        (["x="], UsageError, "no mix after '='"),
        ([], UsageError, "at least one mix"),
        (["x=missing.csv"], MixError, "does not exist"),
    ],
)
def test_bad_mixes_are_one_sentence(seed000, mix, error, needle):
    rows, _ = seed000
    with pytest.raises(error, match=needle.replace("(", r"\(")):
        compare([rows], baseline="v1", mix=mix)


def test_a_mix_file_must_weight_every_slice(seed000, write):
    rows, _ = seed000
    part = write("part.csv", "slice,weight\nshort_factual,1\nmulti_turn,1\n")
    with pytest.raises(MixError, match="long_context, tool_use"):
        compare([rows], baseline="v1", mix=f"p={part}")
    # a weight of 0 leaves a slice out on purpose
    zero = write("zero.csv", "slice,weight\nshort_factual,1\nmulti_turn,1\ntool_use,0\n")
    zero.write_text(zero.read_text() + "long_context,0\n")
    std = _std(compare([rows], baseline="v1", mix=zero))
    assert set(std.weights) == {"short_factual", "multi_turn"}


def test_a_later_slicing_column_keeps_equal_as_equal(write):
    # two slicing columns: a mix file weights the first; equal must be equal on both
    lines = []
    for i in range(40):
        band = "hi" if i < 30 else "lo"  # 30 cases against 10: actual is not equal
        lines += [(f"c{i}", "a", f"s{i % 2}", band, int(i % 3 == 0))]
        lines += [(f"c{i}", "b", f"s{i % 2}", band, i % 2)]
    rows = write("two.csv", csv_text(lines, "case_id,arm,slice,band,score"))
    result = compare([rows], baseline="a", by=("slice", "band"), mix=["equal", "actual"])
    second = result.metrics[0].slicings[1].pairs[0].standardized
    assert [s.mix for s in second] == ["equal", "actual"]
    assert second[0].weights == pytest.approx({"hi": 0.5, "lo": 0.5})
    assert second[1].weights == pytest.approx({"hi": 0.75, "lo": 0.25})


def test_cli_mixes_side_by_side_and_their_errors(run_cli, seed000, write):
    rows, traffic = seed000
    res = run_cli(
        "compare", rows, "--baseline", "v1", "--mix", f"today={traffic}", "--mix", "equal",
        "--format", "json",
    )  # fmt: skip
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert list(doc["mixes"]) == ["today", "equal"]
    one_line_error(
        run_cli("compare", rows, "--mix", "a=equal", "--mix", "a=actual"),
        "two mixes are named 'a'",
    )
    one_line_error(run_cli("compare", rows, "--mix", "nonesuch"), "'nonesuch' is not a mix")
    part = write("part.csv", "slice,weight\nshort_factual,1\n")
    one_line_error(
        run_cli("gate", rows, "--policy", write("p.toml", "max_regression = 0.5\n"),
                "--mix", f"p={part}"),
        "part.csv", "no weight to the data's slice(s) long_context, multi_turn, tool_use",
    )  # fmt: skip


def test_traffic_is_checked_as_a_mix_is(run_cli, seed000, write):
    # issue 24.4: a traffic file that leaves out a slice was a silent n/a (and a traffic
    # delta of -5.2 pts instead of -1.2 with long_context dropped); as a --mix it was an error
    rows, _ = seed000
    part = write("part.csv", "slice,weight\nshort_factual,0.45\nmulti_turn,0.30\ntool_use,0.20\n")
    needle = r"traffic mix \(--traffic\) gives no weight .* long_context"
    with pytest.raises(MixError, match=needle):
        compare([rows], baseline="v1", traffic=part)
    for command in ("compare", "gate"):
        args = ["--policy", write("p.toml", "max_regression = 0.5\n")] if command == "gate" else []
        one_line_error(
            run_cli(command, rows, "--baseline", "v1", "--traffic", part, *args),
            "part.csv", "no weight to the data's slice(s) long_context", "weight 0",
        )  # fmt: skip
    # as with --mix, a weight of 0 leaves a slice out on purpose
    zero = write("zero.csv", part.read_text() + "long_context,0\n")
    traffic = _std(compare([rows], baseline="v1", traffic=zero), "traffic")
    assert set(traffic.weights) == {"short_factual", "multi_turn", "tool_use"}

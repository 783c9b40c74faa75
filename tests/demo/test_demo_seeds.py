"""The demo and the seeds never disagree in silence (issue 24.10).

Every figure a seed states is printed beside the bundled data's; where they differ, the
ledger says why. The figures are computed from the demo's own comparison, so a change of
the data that moved one would show here as a difference without a reason.
"""

from __future__ import annotations

import pytest

from evaldelta.demo import data_path
from evaldelta.demo.scenarios import SCENARIOS, run_demo, run_scenario
from evaldelta.demo.seeds import _fig, ledger, ledger_lines


@pytest.fixture(scope="module")
def ledgers() -> dict[str, list]:  # type: ignore[type-arg]
    out = {}
    for s in SCENARIOS:
        with data_path(s.data) as rows:
            out[s.key] = ledger(s.key, run_scenario(s), str(rows))
    return out


def test_every_figure_is_the_seeds_or_says_why(ledgers) -> None:  # type: ignore[no-untyped-def]
    for key, figures in ledgers.items():
        assert figures, key
        for f in figures:
            assert f.same or f.why, (key, f)
            assert not (f.same and f.why), (key, f)


def test_seed_004_differs_where_the_seed_cannot_hold_together(ledgers) -> None:  # type: ignore[no-untyped-def]
    differ = {f.what: f for f in ledgers["004"] if not f.same}
    assert set(differ) == {
        "extraction: paired sd",
        "extraction: t (its size)",
        "divergent subset: extraction",
        "paired rows to detect 0.5 (80% power)",
        "paired rows to detect 0.25",
    }
    assert (differ["divergent subset: extraction"].seed, differ["divergent subset: extraction"]
            .data) == ("-0.87", "-1.02")  # fmt: skip
    assert "cannot give it" in differ["divergent subset: extraction"].why
    assert "77 per arm" in differ["paired rows to detect 0.5 (80% power)"].why
    assert "the paired one 40 rows" in differ["paired rows to detect 0.5 (80% power)"].why
    same = {f.what: f.data for f in ledgers["004"] if f.same}
    # the seed's own words: 4,400 rows with a delta of -0.033; 3,970 identical; 430 could diverge
    assert same["divergent subset: rows"] == "4,400" and same["divergent subset: delta"] == "-0.033"
    assert (same["unescalated rows scoring the same in both arms"],
            same["rows where the arms could diverge"]) == ("3,970", "430")  # fmt: skip


def test_a_figure_that_moved_would_show_without_a_reason() -> None:
    moved = _fig("divergent subset: extraction", "-0.87", -1.02)
    assert not moved.same and moved.why == ""  # the test above would fail on it
    assert _fig("t", "-11.9", -11.8969).same  # rounded as the seed rounds
    assert _fig("pooled", "0.802", 0.8015).same  # half-up, as the reports round
    assert _fig("rows", "4,400", 4400).data == "4,400"
    assert _fig("about", "$6", 6.68, about=1.0).data == "about $6.68"


def test_the_demo_prints_the_ledgers_and_the_unpaired_77(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = run_demo(html_dir=tmp_path)
    assert (
        "detect 0.50: 40 paired rows (exact noncentral t); an unpaired design would need 77 "
        "per arm (the seed's 'roughly 77 paired rows' is this unpaired figure)" in text
    )
    for key in ("000", "001", "002", "004"):
        assert f"Seed {key}'s figures beside the bundled data's" in text
    assert (
        "Seed 004's figures beside the bundled data's, at the seed's precision (21 the same, "
        "5 differ, each with why)" in text
    )
    lines = ledger_lines("004", [_fig("x", "1.0", 2.0, "because")])
    assert lines[-2].endswith("differs") and lines[-1] == "    why: because"

"""The demo's seed-002 closing: two of the candidate's failing replies become gate cases."""

from __future__ import annotations

from pathlib import Path

from evaldelta.demo.regression import regression_demo, regression_demo_text
from evaldelta.gating import FAIL
from evaldelta.regression import parse_set


def test_the_demo_set_and_the_verdict_that_names_it(tmp_path: Path) -> None:
    text, comparison, verdict = regression_demo(tmp_path)
    rset = parse_set(text, "regression.toml")
    assert (rset.revision, [c.id for c in rset.cases]) == (2, ["R-0001", "R-0002"])
    t2301, t2240 = rset.cases
    # the audit's substantive failure (seed 002: "delivery by Friday") and a quoted timeframe
    # the policy does not permit, both failed by the candidate's replies
    assert (t2301.case_id, t2301.source, t2301.failed_release) == ("T2301", "INC-4471", "candidate")
    assert t2301.output is not None and "expect delivery by Friday" in t2301.output
    assert t2301.fields["order_number"] == "2301" and t2301.score == 0.0
    assert (t2240.case_id, t2240.source_kind, t2240.revision) == ("T2240", "review", 2)
    # seed002.csv: the candidate scores 0 on T2301 and T2240 (its lines 74 and 57), so both
    # critical rules fail; every other demo figure comes from rows this does not touch
    assert verdict.decision == FAIL and verdict.exit_code == 1
    assert {r.case_id: r.outcome for r in verdict.rules} == {"T2301": FAIL, "T2240": FAIL}
    assert comparison.baseline == "incumbent"


def test_the_demo_text_names_the_provenance() -> None:
    text = regression_demo_text()
    assert (
        "  - candidate: fails regression case R-0001 (T2301), added from incident INC-4471 by "
        "support-qa on 2026-11-30: Promised delivery by Friday: replies never commit to a "
        "delivery date"
    ) in text.splitlines()
    assert "added from review REV-0093 by quality-review on 2026-12-01" in text
    # seed002.csv lines 34 and 17: the incumbent passed T2301 and failed T2240 too
    assert "for contrast, the incumbent passed T2301 1/1, T2240 0/1" in text
    assert "/tmp" not in text  # the temporary folder never shows

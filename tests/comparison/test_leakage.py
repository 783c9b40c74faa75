"""The rubric leakage flag on the seed-002 tickets: audit, demo, CLI and the compare report."""

from __future__ import annotations

import csv
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evaldelta.checks import join_cases, load_checks, read_rows, score_rows, write_rows
from evaldelta.comparison import compare
from evaldelta.comparison.leakage import leakage_from_rows
from evaldelta.comparison.model import STYLE_FLAG
from evaldelta.demo.audit import audit_demo, audit_demo_text
from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.errors import InputError
from evaldelta.report import render_json, render_text
from evaldelta.report.html import render_html
from evaldelta.report.markdown import render_markdown
from tests.conftest import ROOT

DIR = Path(str(files("evaldelta.data").joinpath("seed002_tickets")))
# The incumbent's two sign-offs, as they close its replies in replies.csv (read by eye).
INCUMBENT_SIGNOFFS = ("Kind regards,\nThe Support Team", "Best wishes,\nCustomer Support")
POLICY_CHECKS = (
    "order_number",
    "timeframe_in_policy",
    "remedy_in_policy",
    "no_commitment_date",
    "length",
)


@pytest.fixture(scope="module")
def signoff() -> Any:
    return audit_demo("checks_with_signoff.yaml")


def _ends_with_signoff(text: str) -> bool:
    # whitespace-insensitive: two of the candidate's verbatim copies carry trailing spaces
    flat = " ".join(text.split())
    return flat.endswith(tuple(" ".join(s.split()) for s in INCUMBENT_SIGNOFFS))


def _hand_split() -> tuple[int, int, int, int]:
    """Count the sign-off 2x2 from replies.csv directly, without the checks code."""
    with (DIR / "replies.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ends = {(r["case_id"], r["arm"]): _ends_with_signoff(r["output"]) for r in rows}
    cells = [0, 0, 0, 0]
    for cid in {c for c, _ in ends}:
        inc, cand = ends[(cid, "incumbent")], ends[(cid, "candidate")]
        cells[(0 if inc else 2) + (0 if cand else 1)] += 1
    return cells[0], cells[1], cells[2], cells[3]


def test_the_sign_off_criterion_is_flagged_with_the_counted_split(signoff: Any) -> None:
    result, _ = signoff
    leak = result.leakage
    assert (leak.baseline, leak.candidate) == ("incumbent", "candidate")
    c = next(c for c in leak.criteria if c.criterion == "sign_off")
    a = c.asymmetry
    both, only_inc, only_cand, neither = _hand_split()
    assert (a.both_pass, a.only_baseline, a.only_candidate, a.both_fail) == (
        both,
        only_inc,
        only_cand,
        neither,
    )
    # and the counts themselves: the incumbent closes 39 of 40 with its sign-off (its one
    # short "Thanks, Support" reply is the exception), the candidate 11 (the 8 replies it
    # shares with the golden and the 3 both-fail goldens it reproduces word for word)
    assert (both, only_inc, only_cand, neither) == (11, 28, 0, 1)
    assert a.flagged and c.flag == STYLE_FLAG and c.favours == "incumbent"
    assert c.spec == "The reply closes with a courteous sign-off from the support team."
    manifest = json.loads((DIR / "MANIFEST.json").read_text())["rubric_leakage"]
    assert (manifest["only_incumbent"], manifest["only_candidate"]) == (28, 0)


def test_no_policy_derived_criterion_is_flagged(signoff: Any) -> None:
    result, _ = signoff
    assert [c.criterion for c in result.leakage.flagged] == ["sign_off"]
    plain, _ = audit_demo()
    assert [c.criterion for c in plain.leakage.criteria] == list(POLICY_CHECKS)
    assert plain.leakage.flagged == ()
    # the judge checks are named, not dropped: the audit runs offline
    assert set(plain.leakage.not_assessed) == {"next_step", "tone"}


def test_the_examples_put_a_failing_candidate_beside_a_passing_incumbent(signoff: Any) -> None:
    result, _ = signoff
    c = next(c for c in result.leakage.flagged if c.criterion == "sign_off")
    assert 2 <= len(c.examples) <= 3
    with (DIR / "replies.csv").open(encoding="utf-8") as fh:
        replies = {(r["case_id"], r["arm"]): r["output"] for r in csv.DictReader(fh)}
    for e in c.examples:
        assert (e.failing_arm, e.passing_arm) == ("candidate", "incumbent")
        assert e.failing_output == replies[(e.case_id, "candidate")]
        assert e.passing_output == replies[(e.case_id, "incumbent")]
        assert not _ends_with_signoff(e.failing_output)
        assert _ends_with_signoff(e.passing_output)


def test_swapping_the_arms_flags_the_other_side(signoff: Any) -> None:
    _, scored = signoff
    leak = leakage_from_rows(scored, ["sign_off", "length"], "candidate", "incumbent")
    c = leak.criteria[0]
    assert c.asymmetry.favoured == "candidate" and c.favours == "incumbent"
    assert (c.asymmetry.only_baseline, c.asymmetry.only_candidate) == (0, 28)
    assert c.asymmetry.flagged and not leak.criteria[1].asymmetry.flagged
    assert {e.failing_arm for e in c.examples} == {"candidate"}


def test_a_check_column_that_is_not_pass_or_fail_is_an_input_error() -> None:
    rows = [
        {"case_id": "a", "arm": "x", "check.k": "maybe"},
        {"case_id": "a", "arm": "y", "check.k": 1},
    ]
    with pytest.raises(InputError, match=r"check\.k"):
        leakage_from_rows(rows, ["k"], "x", "y", where="rows.csv")


def test_the_demo_prints_the_flag() -> None:
    text = audit_demo_text()
    line = next(x for x in text.splitlines() if x.lstrip().startswith("sign_off"))
    assert "39/40" in line and "11/40" in line and " 28 " in line
    assert line.endswith(f"{STYLE_FLAG} (favours incumbent)")
    assert "incumbent 34/40 vs candidate 8/40" in text  # what the criterion does to the suite
    assert "calls 29 of the candidate's 29 exact-match failures substantive (2 without it)" in text
    assert "candidate fails:" in text and "incumbent passes:" in text
    # the seed's figures are untouched
    for needle in ("incumbent     14/40", "candidate     36/40", "2/29 = 7%"):
        assert needle in text


def test_audit_cli_text_and_json(run_cli: Any) -> None:
    args = [
        "audit",
        DIR / "replies.csv",
        "--cases",
        DIR / "tickets.csv",
        "--goldens",
        f"incumbent={DIR / 'goldens'}",
        "--checks",
        DIR / "checks_with_signoff.yaml",
    ]
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert "Rubric leakage" in res.out and f"{STYLE_FLAG} (favours incumbent)" in res.out
    res = run_cli(*args, "--format", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)["leakage"]
    flags = {c["criterion"]: c["flag"] for c in doc["criteria"]}
    assert flags["sign_off"] == STYLE_FLAG
    assert [k for k, v in flags.items() if v] == ["sign_off"]
    sign_off = next(c for c in doc["criteria"] if c["criterion"] == "sign_off")
    assert sign_off["asymmetry"]["only_baseline"] == 28 and doc["rule"]["min_share"] == 0.8
    # the rule is a parameter: at a 97.5% pass-rate bar the incumbent's 39/40 still trips it,
    # at 99% nothing does
    res = run_cli(*args, "--leakage", "0.975,0.8,0.05")
    assert "passes >= 97.5% of the pairs" in res.out and STYLE_FLAG in res.out
    res = run_cli(*args, "--leakage", "0.99,0.8,0.05")
    assert res.code == 0 and STYLE_FLAG not in res.out and "No criterion is flagged" in res.out
    res = run_cli(*args, "--leakage", "0.9,0.5")
    assert res.code == 2 and "RATE,SHARE,ALPHA" in res.err and res.err.count("\n") == 1


def test_compare_reports_the_flag_in_its_checks_section(tmp_path: Path) -> None:
    rows = join_cases(read_rows(DIR / "replies.csv"), read_rows(DIR / "tickets.csv"), "t")
    scored = score_rows(rows, load_checks(DIR / "checks_with_signoff.yaml"), skip_judge=True)
    path = tmp_path / "scored.csv"
    write_rows(scored.rows, path)
    metrics = ("check.sign_off", "check.order_number", "check.no_commitment_date", "pass")
    comp = compare([path], baseline="incumbent", metrics=metrics)
    (leak,) = comp.rubric_leakage
    assert [c.criterion for c in leak.criteria] == [
        "sign_off",
        "order_number",
        "no_commitment_date",
    ]
    assert [c.criterion for c in leak.flagged] == ["sign_off"]
    a = leak.criteria[0].asymmetry
    assert (a.both_pass, a.only_baseline, a.only_candidate, a.both_fail) == _hand_split()
    assert leak.criteria[0].examples and all(
        e.failing_arm == "candidate" for e in leak.criteria[0].examples
    )
    text = render_text(comp)
    assert "Checks: 3 check.<id> metric(s)" in text and f"{STYLE_FLAG} (favours incumbent)" in text
    assert STYLE_FLAG in render_markdown(comp)
    assert STYLE_FLAG in render_html(comp)
    schema = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())
    doc = json.loads(render_json(comp))
    jsonschema.validate(doc, schema)
    assert doc["rubric_leakage"][0]["criteria"][0]["asymmetry"]["flagged"] is True


def test_compare_without_check_metrics_has_no_checks_section() -> None:
    comp = run_scenario(next(s for s in SCENARIOS if s.key == "002"))
    assert comp.rubric_leakage == () and "Rubric leakage" not in render_text(comp)


def test_the_readme_quotes_the_demo() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Rubric leakage", 1)[1].split("```\n", 2)[1]
    demo = audit_demo_text().splitlines()
    lines = block.rstrip("\n").splitlines()
    assert any(STYLE_FLAG in line for line in lines)
    for line in lines:
        assert line in demo, line

"""Every check kind (adversarial cases included), checks-file errors, and `evaldelta score`."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evaldelta.checks import load_checks, parse_checks, read_rows, score_rows
from evaldelta.checks._mechanical import build_check
from evaldelta.comparison import compare
from evaldelta.errors import BadValueError, ChecksFileError, MissingColumnError


def one(yaml_text: str, tmp_path: Path | None = None) -> Any:
    specs = parse_checks(yaml_text, str(tmp_path / "checks.yaml") if tmp_path else "checks.yaml")
    assert len(specs) == 1
    return build_check(specs[0])


def run(check: Any, output: str, **case: Any) -> bool | None:
    return check.evaluate(output, case).passed


LONG = "word " * 100_000

# --------------------------------------------------------------------------- contains_field

ORDER = """
- id: order
  spec: The reply names the order number.
  kind: contains_field
  field: order_number
"""


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ("Your order #2214 is on its way.", True),
        ("Order 2214.", True),
        ("Your order #22145 is on its way.", False),  # a longer number is not the order
        ("Your order #12214 is on its way.", False),
        ("", False),
        ("Votre commande nº 2214 — désolé ☹", True),  # unicode around the number
        (LONG + "2214", True),
        (LONG, False),
    ],
)
def test_contains_field(output: str, ok: bool) -> None:
    assert run(one(ORDER), output, order_number="2214") is ok


def test_contains_field_without_a_case_value_is_unscored() -> None:
    assert run(one(ORDER), "order 2214", order_number=None) is None


# --------------------------------------------------------------------------- regex


def test_regex_required_and_forbidden() -> None:
    req = one("- {id: greet, spec: s, kind: regex_required, pattern: '^(hi|hello)\\b'}")
    assert run(req, "Hello there") is True
    assert run(req, "Dear customer") is False
    assert run(req, "") is False
    forb = one("- {id: blame, spec: s, kind: regex_forbidden, pattern: 'your fault'}")
    assert run(forb, "This is YOUR FAULT") is False
    assert run(forb, "We are sorry.") is True
    # by default a negated mention still counts; ignore_negated opts out
    assert run(forb, "This is not your fault.") is False
    forb2 = one(
        "- {id: blame, spec: s, kind: regex_forbidden, pattern: 'your fault', ignore_negated: true}"
    )
    assert run(forb2, "This is not your fault.") is True
    assert run(forb2, "Sadly, it was your fault.") is False
    case = one("- {id: c, spec: s, kind: regex_required, pattern: 'ABC', ignore_case: false}")
    assert run(case, "abc") is False and run(case, "ABC") is True


# --------------------------------------------------------------------------- no_commitment_date

DATE = "- {id: nodate, spec: No delivery date., kind: no_commitment_date}"


def test_no_commitment_date_check_reports_the_match() -> None:
    check = one(DATE)
    res = check.evaluate("We'll have it with you by Friday, or by 03/12 at the latest.", {})
    assert res.passed is False
    assert "by Friday" in res.reason and "03/12" in res.reason
    assert run(check, "I can't promise delivery by Friday.") is True
    assert run(check, "") is True
    assert run(check, LONG) is True


def test_no_commitment_date_extra_patterns() -> None:
    check = one("- {id: d, spec: s, kind: no_commitment_date, extra_patterns: ['\\bASAP\\b']}")
    assert run(check, "We'll ship it ASAP.") is False


# --------------------------------------------------------------------------- word_count

WORDS = "- {id: len, spec: 40 to 180 words., kind: word_count, min: 40, max: 180}"


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ("", False),
        ("word " * 39, False),
        ("word " * 40, True),
        ("word " * 180, True),
        ("word " * 181, False),
        ("— " * 50 + "word " * 39, False),  # punctuation alone is not a word
        ("日本語 " * 40, True),  # unicode words count
        ("  \n\t ".join(["ok"] * 45), True),
        (LONG, False),
    ],
)
def test_word_count(output: str, ok: bool) -> None:
    assert run(one(WORDS), output) is ok


# --------------------------------------------------------------------------- allowed_values

REMEDY = """
- id: remedy
  spec: Any remedy offered is one the policy permits.
  kind: allowed_values
  field: permitted_remedies
  values:
    replacement: [replacement, replace]
    refund: [refund, money back]
    credit: [goodwill credit, voucher]
"""
TIMEFRAME = r"""
- id: timeframe
  spec: Any timeframe stated is in the policy.
  kind: allowed_values
  field: permitted
  pattern: '(?:within|in)\s+(?P<value>\d+\s+(?:working\s+)?days?)'
"""


def test_allowed_values_vocabulary() -> None:
    check = one(REMEDY)
    case = {"permitted_remedies": "replacement|refund"}
    assert run(check, "We'll send a replacement.", **case) is True
    res = check.evaluate("We'll add a goodwill credit to your account.", case)
    assert res.passed is False and res.stated == ("credit",)
    # a negated remedy is not offered
    assert run(check, "We can't offer a voucher, but we'll send a replacement.", **case) is True
    # plural, case and a JSON list of permitted values
    assert run(check, "REFUNDS are processed quickly.", permitted_remedies='["refund"]') is True
    assert run(check, "Nothing offered here.", **case) is True
    assert run(check, "", **case) is True
    assert run(check, "A replacement.", permitted_remedies=None) is None


def test_allowed_values_pattern() -> None:
    check = one(TIMEFRAME)
    case = {"permitted": "2 working days;5 working days"}
    assert run(check, "You'll hear back within 2 working days.", **case) is True
    res = check.evaluate("within 2 working days, or in 14 working days", case)
    assert res.passed is False and res.stated == ("2 working days", "14 working days")
    assert run(check, "within  2   working\u00a0days", **case) is True  # whitespace and nbsp
    assert run(check, "by Friday", **case) is True  # not a timeframe (dates are another check)


# --------------------------------------------------------------------------- json_schema

SCHEMA = """
- id: shape
  spec: The record is well formed.
  kind: json_schema
  schema:
    type: object
    required: [supplier_tax_id, total]
    properties:
      supplier_tax_id: {type: string, pattern: '^GB[0-9]{9}$'}
      total: {type: number}
"""


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ('{"supplier_tax_id": "GB123456789", "total": 12.5}', True),
        ('```json\n{"supplier_tax_id": "GB123456789", "total": 1}\n```', True),
        ('{"supplier_tax_id": "GB12345678", "total": 12.5}', False),
        ('{"total": 12.5}', False),
        ("[1, 2]", False),
        ("", False),
        ("not json", False),
        ('{"supplier_tax_id": "GB123456789", "total": "12"}', False),
    ],
)
def test_json_schema(output: str, ok: bool) -> None:
    assert run(one(SCHEMA), output) is ok


def test_json_schema_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"type": "array"}')
    check = one("- {id: s, spec: s, kind: json_schema, schema_file: s.json}", tmp_path)
    assert run(check, "[1]") is True and run(check, "{}") is False


# --------------------------------------------------------------------------- fields_equal

FIELDS = """
- id: exact
  spec: Every field equals the ground truth.
  kind: fields_equal
  fields: {supplier_tax_id: expected_tax_id, total: expected_total}
"""


def test_fields_equal_is_a_strict_predicate() -> None:
    check = one(FIELDS)
    truth = {"expected_tax_id": "GB123456789", "expected_total": "12.5"}
    good = '{"supplier_tax_id": "GB123456789", "total": 12.5, "other": 1}'
    assert run(check, good, **truth) is True
    # eleven of twelve right is still a failure: no partial credit
    res = check.evaluate('{"supplier_tax_id": "GB123456780", "total": 12.5}', truth)
    assert res.passed is False and "supplier_tax_id" in res.reason
    assert run(check, '{"total": 12.5}', **truth) is False
    assert run(check, "", **truth) is False
    assert run(check, '" GB123456789 "', **truth) is False
    assert run(check, '{"supplier_tax_id": " GB123456789 ", "total": 12.5}', **truth) is True


# --------------------------------------------------------------------------- python


def test_python_check(tmp_path: Path) -> None:
    (tmp_path / "mychecks_ok.py").write_text(
        "def polite(output, case):\n"
        "    return ('please' in output.lower(), 'no please')\n"
        "def bad(output, case):\n"
        "    return 'yes'\n"
        "def boom(output, case):\n"
        "    raise ValueError('kaput')\n"
    )
    check = one("- {id: p, spec: s, kind: python, function: 'mychecks_ok:polite'}", tmp_path)
    assert run(check, "Please reply") is True
    assert check.evaluate("Reply", {}).reason == "no please"
    bad = one("- {id: p, spec: s, kind: python, function: 'mychecks_ok:bad'}", tmp_path)
    with pytest.raises(BadValueError, match="returned 'yes'"):
        run(bad, "x")
    boom = one("- {id: p, spec: s, kind: python, function: 'mychecks_ok:boom'}", tmp_path)
    with pytest.raises(BadValueError, match="raised ValueError: kaput"):
        run(boom, "x", case_id="c1")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
        ("json:no_such_function", "has no function 'no_such_function'"),
        ("nocolon", "must be module:function"),
    ],
)
def test_python_check_import_errors_are_one_line(target: str, message: str) -> None:
    with pytest.raises(ChecksFileError) as err:
        one(f"- id: p\n  spec: s\n  kind: python\n  function: '{target}'\n")
    text = str(err.value)
    assert "\n" not in text and message in text
    assert text.startswith("checks.yaml, line 4, field 'function'")


# --------------------------------------------------------------------------- checks file errors

BAD_FILES = [
    (
        "checks:\n  - id: a\n    spec: s\n    kind: regx\n    pattern: x\n",
        "checks.yaml, line 4, field 'kind', value 'regx': unknown check kind "
        "(did you mean 'regex_required'?)",
    ),
    ("- id: a\n  spec: s\n  kind: regex_required\n  pattern: '('\n", "line 4, field 'pattern'"),
    ("- id: a\n  spec: s\n  kind: word_count\n  mn: 3\n", "line 4, field 'mn'"),
    ("- id: a\n  kind: word_count\n  max: 3\n", "line 1, field 'spec': a check needs 'spec'"),
    ("- id: a b\n  spec: s\n  kind: word_count\n  max: 3\n", "line 1, field 'id'"),
    (
        "- {id: a, spec: s, kind: word_count, max: 3}\n"
        "- {id: a, spec: s, kind: word_count, max: 4}\n",
        "line 2, field 'id', value 'a': duplicate check id (first declared on line 1)",
    ),
    ("- id: a\n  spec: s\n  kind: word_count\n  min: 9\n  max: 3\n", "line 4, field 'min'"),
    ("- id: a\n  spec: s\n  kind: word_count\n  max: -1\n", "line 4, field 'max'"),
    ("- id: a\n  spec: s\n  kind: [unclosed\n", "not valid YAML"),
    ("", "the checks file is empty"),
    ("checks: []\n", "the checks list is empty"),
    ("chekcs: []\n", "unknown top-level key (did you mean 'checks'?)"),
    ("- just a string\n", "each check must be a mapping"),
    (
        "- {id: a, spec: s, kind: json_schema, schema: {type: nonsense}}\n",
        "not a valid JSON schema",
    ),
    (
        "- {id: a, spec: s, kind: allowed_values, field: f}\n",
        "exactly one of 'pattern' or 'values'",
    ),
    ("- {id: a, spec: s, kind: fields_equal, fields: 3}\n", "field 'fields'"),
    ("- {id: j, spec: s, kind: judge, rubric: r}\n", "a judge needs a pinned model id"),
    ("- {id: j, spec: s, kind: judge, rubric: r, model: m, graded: [5, 1]}\n", "field 'graded'"),
    ("- {id: j, spec: s, kind: judge, rubric: r, model: m, params: {temp: 0}}\n", "field 'params'"),
    ("- {id: j, spec: s, kind: judge, rubric: r, model: m, mode: both}\n", "field 'mode'"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_checks_files_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(text)
    with pytest.raises(ChecksFileError) as err:
        load_checks(path)
    shown = str(err.value).replace(str(tmp_path) + "/", "")
    assert "\n" not in shown
    assert shown.startswith("checks.yaml")
    assert message in shown, shown


def test_missing_checks_file() -> None:
    with pytest.raises(ChecksFileError, match="does not exist"):
        load_checks("/nonexistent/checks.yaml")


def test_judge_defaults_apply_to_judge_checks() -> None:
    specs = parse_checks(
        "judge: {model: m1, provider: local, params: {temperature: 0}}\n"
        "checks:\n  - {id: j, spec: s, kind: judge, rubric: r}\n"
        "  - {id: k, spec: s, kind: judge, rubric: r, model: m2}\n"
    )
    assert specs[0].options["model"] == "m1" and specs[1].options["model"] == "m2"
    assert specs[0].options["provider"] == "local"


def test_example_checks_file_covers_every_kind() -> None:
    from evaldelta.checks import KINDS

    checks = load_checks(Path(__file__).parents[2] / "examples" / "checks.yaml")
    kinds = {c.kind for c in checks.mechanical} | {"judge" for _ in checks.judges}
    assert kinds == set(KINDS)


# --------------------------------------------------------------------------- score + compare

CHECKS = """\
checks:
  - {id: order_number, spec: Names the order., kind: contains_field, field: order_number}
  - {id: no_commitment_date, spec: No date., kind: no_commitment_date}
  - {id: length, spec: Short., kind: word_count, max: 12}
"""


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(12):
        cid = f"c{i:02d}"
        rows.append(
            {
                "case_id": cid,
                "arm": "base",
                "order_number": str(100 + i),
                "output": f"Order {100 + i} will arrive by Friday."
                if i % 3 == 0
                else f"Order {100 + i} is on its way.",
            }
        )
        rows.append(
            {
                "case_id": cid,
                "arm": "cand",
                "order_number": str(100 + i),
                "output": f"Order {100 + i} is on its way."
                if i != 5
                else "Your order is on its way.",
            }
        )
    rows.append({"case_id": "c99", "arm": "cand", "order_number": "1", "output": None})
    return rows


def test_score_rows_columns_and_pass(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS)
    res = score_rows(_rows(), load_checks(path))
    rows = {(r["case_id"], r["arm"]): r for r in res.rows}
    assert rows[("c00", "base")]["check.no_commitment_date"] == 0
    assert rows[("c00", "base")]["pass"] == 0
    assert "by Friday" in rows[("c00", "base")]["reason.no_commitment_date"]
    assert rows[("c05", "cand")]["check.order_number"] == 0
    assert rows[("c01", "base")]["pass"] == 1
    assert rows[("c99", "cand")]["pass"] is None  # no output: unscored, not failed
    assert res.included == ("order_number", "no_commitment_date", "length")


def test_score_requires_output_and_case_fields(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS)
    with pytest.raises(MissingColumnError, match="'output'"):
        score_rows([{"case_id": "a", "arm": "x"}], load_checks(path))
    with pytest.raises(MissingColumnError, match=r"order_number.*line 2"):
        score_rows([{"case_id": "a", "arm": "x", "output": "hi"}], load_checks(path))


def test_score_cli_then_compare_on_dotted_metrics(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "checks.yaml").write_text(CHECKS)
    rows = [r for r in _rows() if r["output"] is not None]
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored.csv"
    res = run_cli("score", src, "--checks", tmp_path / "checks.yaml", "-o", out)
    assert res.code == 0, res.err
    assert "24 rows on 3 checks" in res.err
    meta = json.loads((tmp_path / "scored.csv.meta.json").read_text())
    assert meta["included_checks"] == ["order_number", "no_commitment_date", "length"]
    assert len(meta["checks_sha256"]) == 64
    with out.open() as fh:
        header = next(csv.reader(fh))
    assert {"check.order_number", "check.no_commitment_date", "pass"} <= set(header)
    result = compare(
        [out], baseline="base", metrics=("pass", "check.no_commitment_date", "check.order_number")
    )
    by = {m.metric: m.slicings[0].pairs[0].overall for m in result.metrics}
    assert by["check.no_commitment_date"].table is not None
    t = by["check.no_commitment_date"].table
    assert (t.only_baseline, t.only_candidate) == (0, 4)
    t = by["check.order_number"].table
    assert t is not None and (t.only_baseline, t.only_candidate) == (1, 0)
    res = run_cli(
        "compare",
        out,
        "--baseline",
        "base",
        "--metric",
        "pass",
        "--metric",
        "check.no_commitment_date",
    )
    assert res.code == 0 and "metric: check.no_commitment_date" in res.out


def test_score_cli_errors_are_one_line(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "checks.yaml").write_text("- {id: a, spec: s, kind: regx}\n")
    src = tmp_path / "runs.csv"
    src.write_text("case_id,arm,output\na,x,hi\n")
    res = run_cli("score", src, "--checks", tmp_path / "checks.yaml", "-o", tmp_path / "o.csv")
    assert res.code == 2
    assert res.err.count("\n") == 1 and "line 1, field 'kind', value 'regx'" in res.err
    (tmp_path / "checks.yaml").write_text(
        "- {id: j, spec: s, kind: judge, rubric: r, model: m, provider: nosuch}\n"
    )
    res = run_cli("score", src, "--checks", tmp_path / "checks.yaml", "-o", tmp_path / "o.csv")
    assert res.code == 2 and res.err.count("\n") == 1 and "nosuch" in res.err
    res = run_cli(
        "score", src, "--checks", tmp_path / "checks.yaml", "--skip-judge", "-o", tmp_path / "o.csv"
    )
    assert res.code == 0 and "judge checks left out: j" in res.err
    assert read_rows(tmp_path / "o.csv")[0]["pass"] is None  # no checks ran: nothing to pass

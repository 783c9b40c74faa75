"""Policy parsing, and every policy error as one line naming the file, line and key (exit 2)."""

from __future__ import annotations

import pytest

from evaldelta._util._toml import locate_keys
from evaldelta.errors import InputError, PolicyError
from evaldelta.gating.policy import SliceRules, load_policy, parse_policy
from tests.conftest import ROOT, one_line_error
from tests.rows import csv_text

RUNS = csv_text(
    [
        (f"c{i}", arm, "easy" if i < 40 else "hard", 1, 0.01)
        for arm in ("a", "b")
        for i in range(60)
    ],
    "case_id,arm,slice,score,cost_usd",
)
GRADED = csv_text(
    [(f"g{i}", arm, "all", 3 + (i % 3)) for arm in ("a", "b") for i in range(20)],
    "case_id,arm,slice,score",
)


def test_the_shipped_example_parses():
    policy = load_policy(ROOT / "examples" / "gate.toml")
    assert policy.basis == "interval"
    assert policy.on_inconclusive == "warn"
    assert policy.defaults == SliceRules(
        {"max_regression": 0.15, "min_score": 4.0, "min_cases": 30}
    )
    assert policy.rules_for("extraction") == SliceRules(
        {"max_regression": 0.05, "min_score": 4.0, "min_cases": 100}
    )
    assert policy.rules_for("faq_lookup") == policy.defaults
    assert policy.standardized is not None and policy.standardized.mix == "traffic"
    assert policy.critical is not None and policy.critical.cases == ("R00112",)
    assert policy.critical.require == "all"


def test_top_level_rules_are_defaults_and_require_k_of_n():
    policy = parse_policy(
        'min_cases = 5\nmax_regression = 0\n[critical]\ntag = "x"\nrequire = "2 of 3"\n'
    )
    assert policy.defaults == SliceRules({"max_regression": 0.0, "min_cases": 5})
    assert policy.on_inconclusive == "warn" and policy.basis == "interval"
    assert policy.critical is not None
    assert (policy.critical.require_k, policy.critical.require_n) == (2, 3)


def test_locate_keys_finds_headers_dotted_and_inline_keys():
    text = (
        "# comment\n"
        "basis = 'point'\n"
        "[defaults]\n"
        "min_score = 0.5\n"
        "[slices.'multi step']\n"
        "max_regression = 0.1\n"
        "[slices]\n"
        "other = { min_cases = 3 }\n"
        "critical.cases = [\n"
        "  'a',\n"
        "]\n"
        "critical.tag = 'x'\n"
    )
    lines = locate_keys(text)
    assert lines["basis"] == 2
    assert lines["defaults.min_score"] == 4
    assert lines["slices.multi step"] == 5
    assert lines["slices.multi step.max_regression"] == 6
    assert lines["slices.other.min_cases"] == 8
    assert lines["slices.critical.cases"] == 9
    assert lines["slices.critical.tag"] == 12


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            "basis = 'interval'\n[defaults]\nmax_regresion = 0.1\n",
            ["line 3", "unknown key 'max_regresion'", "did you mean 'max_regression'"],
        ),
        (
            "[defaults]\nmin_score = 4.0\n\n# margins are positive\nmax_regression = -0.1\n",
            ["line 5", "field 'defaults.max_regression'", "value -0.1", "margin must be >= 0"],
        ),
        (
            "[defaults]\nmax_regression = 0.1\n[slices.x]\nmax_regression = -1\n",
            ["line 4", "'slices.x.max_regression'", "margin must be >= 0"],
        ),
        ("basis = 'interval'\nmin_score = = 4\n", ["line 2", "not valid TOML"]),
        ("[defaults\nmin_score = 4\n", ["line 1", "not valid TOML"]),
        (
            "min_score = 1\non_inconclusive = 'maybe'\n",
            ["line 2", "'on_inconclusive'", "'maybe'", "'fail', 'warn', 'pass'"],
        ),
        ("min_score = 1\nbasis = 'median'\n", ["line 2", "'basis'", "'interval', 'point'"]),
        ("[defaults]\nmin_cases = '30'\n", ["line 2", "'defaults.min_cases'", "'30'"]),
        ("[defaults]\nmin_cases = 2.5\n", ["line 2", "whole number"]),
        ("[defaults]\nmin_score = true\n", ["line 2", "must be a number"]),
        ("max_cost_ratio = 0\n", ["line 1", "'max_cost_ratio'", "> 0"]),
        (
            "min_cases = 3\n[defaults]\nmin_cases = 4\n",
            ["line 3", "both at the top level and in [defaults]"],
        ),
        ("metric = 'score'\n", ["line 1", "sets no rule"]),
        ("[standardized]\nmix = 'traffic'\n", ["line 1", "needs a margin"]),
        ("[standardized]\nmargin = 0.1\nweights = 1\n", ["line 3", "unknown key 'weights'"]),
        ("[critical]\nrequire = 'all'\n", ["line 1", "needs cases, column or tag"]),
        ("[critical]\ncases = ['c1']\nrequire = '3 of 2'\n", ["line 3", "1 <= K <= N"]),
        ("[critical]\ncases = ['c1']\nrequire = 'most'\n", ["line 3", "'K of N'"]),
        ("[critical]\ncases = [1, 2]\n", ["line 2", "list of case ids"]),
        ("[slices]\neasy = 3\n", ["line 2", "[slices.easy] must be a table"]),
        ("slices = { easy = { min_cases = 3, max_drop = 1 } }\n", ["line 1", "'max_drop'"]),
    ],
)
def test_policy_errors_name_file_and_line(run_cli, write, text, needles):
    runs = write("runs.csv", RUNS)
    policy = write("gate.toml", text)
    one_line_error(run_cli("gate", runs, "--policy", policy), str(policy), *needles)


def test_errors_against_the_data_name_the_policy_line(run_cli, write):
    runs = write("runs.csv", RUNS)
    cases = [
        ("[defaults]\nmin_cases = 1\n[slices.medium]\nmin_cases = 2\n", ["line 3", "'medium'"]),
        ("min_cases = 1\nmetric = 'judge'\n", ["line 2", "'judge'", "runs.csv"]),
        ("min_cases = 1\n[critical]\ncases = ['c1', 'c999']\n", ["line 3", "'c999'"]),
        ("min_cases = 1\n[critical]\ncolumn = 'flag'\n", ["line 3", "'flag'", "runs.csv"]),
        ("min_cases = 1\n[critical]\ntag = 'vip'\n", ["line 3", "'tags' column"]),
        (
            "min_cases = 1\n[standardized]\nmix = 'traffic'\nmargin = 0.1\n",
            ["line 3", "'traffic'", "--traffic"],
        ),
    ]
    for text, needles in cases:
        policy = write("gate.toml", text)
        one_line_error(run_cli("gate", runs, "--policy", policy), *needles)
    nocost = write("nocost.csv", "case_id,arm,score\nc1,a,1\nc1,b,1\n")
    policy = write("gate.toml", "min_cases = 1\nmax_cost_ratio = 2\n")
    one_line_error(run_cli("gate", nocost, "--policy", policy), str(policy), "line 2", "cost_usd")
    graded = write("graded.csv", GRADED)
    policy = write("gate.toml", "min_cases = 1\n\n[critical]\ncases = ['g1']\n")
    one_line_error(
        run_cli("gate", graded, "--policy", policy), "line 3", "graded", "pass_threshold"
    )


def test_missing_policy_file_and_missing_option(run_cli, write, tmp_path):
    runs = write("runs.csv", RUNS)
    missing = tmp_path / "nope.toml"
    one_line_error(run_cli("gate", runs, "--policy", missing), str(missing), "does not exist")
    one_line_error(run_cli("gate", runs), "--policy")
    one_line_error(run_cli("compare", runs, "--policy", missing), str(missing))


def test_policy_error_is_an_input_error():
    with pytest.raises(PolicyError) as info:
        parse_policy("[defaults]\nmax_regression = -1\n", "p.toml")
    assert isinstance(info.value, InputError)
    assert str(info.value).startswith(
        "p.toml, line 2, field 'defaults.max_regression', value -1: a margin must be >= 0"
    )

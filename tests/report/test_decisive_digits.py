"""Where a decision hangs on a figure, the figure prints unlike its bound (issue 24.2).

The reported case: a cost ratio of 1.503 failing ``max_cost_ratio = 1.5`` printed
``1.50 <= 1.50``. Here it is checked in every format the verdict is written in, and the same
rule for intervals against zero and p-values against alpha.
"""

from __future__ import annotations

import json

import pytest

from evaldelta.gating import FAIL, RuleResult
from evaldelta.report._format import fmt_ci, fmt_p, places_apart
from evaldelta.report.verdict import rule_numbers
from evaldelta.stats import ConfidenceInterval
from tests.rows import csv_text, paired


def _rule(rule: str, estimate: float, bound: float, ci: tuple[float, float] | None = None):  # type: ignore[no-untyped-def]
    low_high = ConfidenceInterval(*ci) if ci else None
    return RuleResult(rule, "b", "s", FAIL, "interval", estimate, low_high, bound, 30, "why")


@pytest.mark.parametrize(
    ("rule", "binary", "expected"),
    [
        (_rule("max_cost_ratio", 1.503, 1.5), True, ("1.503", "", "<= 1.500")),
        (_rule("max_cost_ratio", 1.62, 1.5), True, ("1.62", "", "<= 1.50")),  # apart already
        (_rule("max_regression", -0.1502, -0.15, (-0.1601, -0.1502)), False,
         ("-0.1502", "[-0.1601, -0.1502]", "-0.1500")),
        (_rule("max_regression", -0.09996, -0.1, (-0.1004, -0.09996)), True,
         ("-9.996 pts", "[-10.040, -9.996]", "-10.000 pts")),
        (_rule("min_score", 3.9996, 4.0, (3.9991, 3.9999)), False,
         ("3.9996", "[3.9991, 3.9999]", "4.0000")),
    ],
)  # fmt: skip
def test_rule_figures_print_unlike_their_bound(rule, binary, expected) -> None:  # type: ignore[no-untyped-def]
    est, ci, bound, _ = rule_numbers(rule, binary)
    assert (est, ci, bound) == expected


def test_a_figure_equal_to_its_bound_is_not_stretched() -> None:
    assert places_apart([1.5, None, float("nan")], 1.5, 2) == 2
    assert rule_numbers(_rule("max_cost_ratio", 1.5, 1.5), True)[::2] == ("1.50", "<= 1.50")


def test_interval_ends_and_p_values_against_zero_and_alpha() -> None:
    # an interval end that is not zero never prints as zero
    assert fmt_ci(-0.007, -0.0003, binary=False) == "[-0.007, -0.0003]"
    assert fmt_ci(-0.07, -0.0002, binary=True) == "[-7.0, -0.02]"
    assert fmt_ci(0.0, 0.1, binary=True) == "[+0.0, +10.0]"  # zero itself stays
    # a p-value that is not alpha never prints as alpha
    assert (fmt_p(0.0496, 0.05), fmt_p(0.05004, 0.05), fmt_p(0.2, 0.05)) == (
        "0.0496",
        "0.05004",
        "0.200",
    )
    assert fmt_p(0.0496) == "0.050"  # no alpha, no decision: three decimals


COSTS = csv_text(
    paired(
        [(i % 2, i % 2) for i in range(40)],
        extra={"base": {"cost_usd": 1.0}, "cand": {"cost_usd": 1.503}},
    )
)


def test_the_cost_ratio_reads_1_503_in_every_format(run_cli, write, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = write("rows.csv", COSTS)
    policy = write("gate.toml", "max_cost_ratio = 1.5\n")
    outs = {}
    for fmt in ("text", "markdown", "json"):
        res = run_cli("gate", rows, "--baseline", "base", "--policy", policy, "--format", fmt)
        assert res.code == 1, res.err
        outs[fmt] = res.out
    html = tmp_path / "r.html"
    res = run_cli("compare", rows, "--baseline", "base", "--policy", policy, "-o", html)
    assert res.code == 1, res.err
    outs["html"] = html.read_text()
    for fmt, text in outs.items():
        if fmt == "json":
            (rule,) = [r for r in json.loads(text)["rules"] if r["rule"] == "max_cost_ratio"]
            assert rule["estimate"] == pytest.approx(1.503) and rule["bound"] == 1.5
            continue
        bound = "&lt;= 1.500" if fmt == "html" else "<= 1.500"
        assert "1.503" in text and bound in text, fmt
        assert "1.50 " not in text and "= 1.50<" not in text, fmt

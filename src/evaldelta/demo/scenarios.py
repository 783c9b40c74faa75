"""``evaldelta demo``: the seeds' worked scenarios, end to end, and the whole printout.

Each :class:`Scenario` is one seed's data and options; :func:`run_demo` runs them all and
appends each seed's ledger (:mod:`~evaldelta.demo.seeds`), seed 002's audit, regression and
upstream sections, and seed 004's gate beside the aggregate-only check.
"""

from __future__ import annotations

import math
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from evaldelta import stats
from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.demo import data_path
from evaldelta.demo.audit import audit_demo_text
from evaldelta.demo.regression import regression_demo_text
from evaldelta.demo.seeds import ledger, ledger_lines
from evaldelta.demo.upstream import upstream_demo_text
from evaldelta.gating import FAIL, INCONCLUSIVE, PASS, RuleResult, Verdict, aggregate_only, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.report import render_json, render_text
from evaldelta.report._format import fmt
from evaldelta.report.verdict import render_verdict_text, rule_numbers

__all__ = [
    "GATE_POLICY_004",
    "SCENARIOS",
    "Scenario",
    "gate_side_by_side",
    "run_demo",
    "run_scenario",
    "write_demo_html",
]

# The seed 004 worst-slice rule: "no named slice regresses by more than 0.15, and no slice
# falls below the acceptance bar of 4.0".
GATE_POLICY_004 = """\
basis = "interval"
[defaults]
max_regression = 0.15
min_score = 4.0
"""


@dataclass(frozen=True)
class Scenario:
    """One seed's worked example: the data, the options, and what the seed says."""

    key: str
    title: str
    seed_file: str
    data: str
    options: dict[str, object] = field(default_factory=dict)
    mix_file: str | None = None
    traffic_file: str | None = None
    seed_says: str = ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        key="000",
        title="Simpson's paradox in pooled pass rates (v1 and v2 ran on different eval sets)",
        seed_file="000_387e4da809195b1a.txt",
        data="seed000.csv",
        # the mixes side by side (issue 13): the eval set's own, equal, and production traffic
        options={"baseline": "v1", "mix": ("actual", "equal")},
        traffic_file="traffic000.csv",
        seed_says="pooled v1 0.815, v2 0.833; production-weighted v1 0.814, v2 0.802",
    ),
    Scenario(
        key="001",
        title="Fixed task mix vs actual mix: release A (mostly easy) vs B (mostly hard)",
        seed_file="001_d8b0c402cb73e7e5.txt",
        data="seed001.csv",
        options={"baseline": "A", "mix": "equal"},
        seed_says="B improves on easy and on hard, yet its unadjusted overall result is lower",
    ),
    Scenario(
        key="002",
        title="40 support tickets scored on requirement checks, incumbent vs candidate",
        seed_file="002_ae837a85b6e05755.txt",
        data="seed002.csv",
        options={"baseline": "incumbent"},
        seed_says=(
            "+5 points, SE 4.9 points, Wald interval about -5 to +15 (printed for contrast on "
            "the all-cases line; the default interval is Newcombe's), exact McNemar p 0.63"
        ),
    ),
    Scenario(
        key="004",
        title="5,000 replayed requests: always-cheap, cascade and always-strong",
        seed_file="004_c23b49ab5987a609.txt",
        data="seed004.csv",
        options={
            "baseline": "always_strong",
            "candidates": ("cascade", "always_cheap"),
            "three_arm": ("always_cheap", "cascade", "always_strong"),
        },
        traffic_file="traffic004.csv",
        seed_says=(
            "cheap 4.28, cascade 4.31, strong 4.34; paired delta -0.0286, SE 0.0024, t -11.9 "
            "vs unpaired SE 0.018; extraction (3% of traffic) carries most of the gap"
        ),
    ),
)


def run_scenario(scenario: Scenario) -> Comparison:
    """Run compare on one scenario's bundled data."""
    with ExitStack() as stack:
        data = stack.enter_context(data_path(scenario.data))
        options = dict(scenario.options)
        if scenario.traffic_file:
            options["traffic"] = stack.enter_context(data_path(scenario.traffic_file))
        return compare([data], **options)  # type: ignore[arg-type]


def _extra(scenario: Scenario, result: Comparison | None = None) -> list[str]:
    """Seed-specific follow-ups computed by the statistics core (planning arithmetic)."""
    if scenario.key == "000" and result is not None:
        return _open_question(result)
    if scenario.key == "002":
        plan = stats.required_pairs_mcnemar(3 / 40, 1 / 40)
        connor = math.ceil(plan.n_normal)
        at_connor = stats.mcnemar_exact_power(connor, 3 / 40, 1 / 40)
        return [
            "To lift a 5-point effect clear of zero at 80% power with this discordance "
            f"pattern (3/40 only candidate, 1/40 only incumbent): {plan.n} paired tickets "
            f"for the exact McNemar test; Connor (1987)'s normal approximation says about "
            f"{connor} paired tickets, where the exact test has {at_connor:.0%} power."
        ]
    if scenario.key == "004":
        lines = ["Paired sample size per slice at a paired sd of 1.1, 80% power, alpha 0.05:"]
        for effect, says in ((0.5, "roughly 77"), (0.25, "about 300")):
            res = stats.required_pairs(effect, 1.1)
            lines.append(
                f"  detect {fmt(effect, 2)}: {res.n} paired rows (exact noncentral t); "
                f"an unpaired design would need {res.unpaired_n_per_arm} per arm (the seed's "
                f"'{says} paired rows' is this unpaired figure)"
            )
        return lines
    return []


def _seed_ledger(scenario: Scenario, result: Comparison) -> list[str]:
    """Every figure the seed states beside the data's, and why where they differ."""
    with data_path(scenario.data) as rows:
        return ledger_lines(scenario.key, ledger(scenario.key, result, str(rows)))


def _open_question(result: Comparison) -> list[str]:
    """Seed 000's open question (shipping moves the mix), answered with the break-even."""
    from evaldelta.report._facts import break_even_sentences
    from evaldelta.report._format import fmt_ci, fmt_delta

    pair = result.slicing().pairs[0]
    traffic = next((s for s in pair.standardized if s.mix == "traffic"), None)
    if traffic is None:
        return []
    sentences = break_even_sentences(traffic, pair.candidate, shown=1)
    lines = [
        "Seed 000's open question (shipping can move the mix itself), answered with numbers: "
        f"under production traffic {pair.candidate} - {pair.baseline} is "
        f"{fmt_delta(traffic.delta.estimate, True)} "
        f"{fmt_ci(traffic.delta.ci.low, traffic.delta.ci.high, True)};"
    ]
    lines += [f"  {t}." for t in sentences]
    return lines


def run_demo(output_dir: Path | None = None, html_dir: Path | None = None) -> str:
    """Run every scenario; return the text report (and write JSON / HTML when asked).

    With ``html_dir``, each scenario's self-contained HTML report is written there as
    ``demo-report-<key>.html`` (seed 004's with the worst-slice gate's verdict).
    """
    parts = []
    for scenario in SCENARIOS:
        result = run_scenario(scenario)
        parts.append("=" * 100)
        parts.append(f"Seed {scenario.key}: {scenario.title}")
        parts.append(f"The seed text ({scenario.seed_file}) says: {scenario.seed_says}.")
        parts.append("=" * 100)
        parts.append(render_text(result))
        parts.extend(_extra(scenario, result))
        parts.append("")
        parts.extend(_seed_ledger(scenario, result))
        if scenario.key == "004":
            parts.append("")
            parts.extend(gate_side_by_side(result))
        if scenario.key == "002":
            parts.append("")
            parts.append(audit_demo_text())
            parts.append("")
            parts.append(regression_demo_text())
            parts.append("")
            parts.append(upstream_demo_text())
        parts.append("")
        if output_dir is not None:
            output_dir.mkdir(parents=True, exist_ok=True)
            (output_dir / f"demo-{scenario.key}.json").write_text(render_json(result))
        if html_dir is not None:
            write_demo_html(scenario, result, html_dir)
    return "\n".join(parts)


def write_demo_html(scenario: Scenario, result: Comparison, directory: Path) -> Path:
    """Write one scenario's HTML report (seed 004's shows the gate verdict on the cascade)."""
    from evaldelta.report.html import render_html

    verdict = None
    if scenario.key == "004":
        policy = parse_policy(GATE_POLICY_004, "seed-004 policy")
        verdict = evaluate(policy, result, candidates=("cascade",))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"demo-report-{scenario.key}.html"
    title = f"evaldelta demo, seed {scenario.key}: {scenario.title}"
    path.write_text(render_html(result, verdict, title=title), encoding="utf-8")
    return path


def _rule_line(rule: RuleResult, binary: bool) -> str:
    est, ci, bound, _ = rule_numbers(rule, binary)
    word = "" if rule.outcome == FAIL else f"{rule.outcome} "
    lean = f" (leaning {rule.leaning})" if rule.leaning else ""
    return f"{word}{rule.slice}: {rule.rule} {est} {ci} vs {bound}{lean}".replace("  ", " ")


def _verdict_lines(verdict: Verdict) -> list[str]:
    binary = verdict.kind == "binary"
    bad = [r for r in verdict.rules if r.outcome != PASS]
    bad.sort(key=lambda r: r.outcome != FAIL)
    return [_rule_line(r, binary) for r in bad] or ["every slice clears both rules"]


def gate_side_by_side(result: Comparison, candidate: str = "cascade") -> list[str]:
    """Seed 004: the reviewer's aggregate-only check beside the worst-slice gate."""
    pair = result.pair(candidate)
    binary = result.metrics[0].kind == "binary"
    welch, paired = aggregate_only(pair, 0.15)
    interval = evaluate(
        parse_policy(GATE_POLICY_004, "seed-004 policy"), result, candidates=(candidate,)
    )
    point = evaluate(
        parse_policy(GATE_POLICY_004.replace('"interval"', '"point"'), "seed-004 policy"),
        result,
        candidates=(candidate,),
    )
    rows: list[tuple[str, str, list[str]]] = []
    for label, rule, test in (
        ("aggregate only: Welch interval (reviewer)", welch, "contains 0, or clears"),
        ("aggregate only: paired interval", paired, "clears"),
    ):
        est, ci, bound, _ = rule_numbers(rule, binary)
        rows.append((label, rule.outcome.upper(), [f"all cases {est} {ci}; {test} {bound}?"]))
    rows.append(
        ("worst-slice gate, interval basis", interval.outcome.upper(), _verdict_lines(interval))
    )
    rows.append(("worst-slice gate, point basis", point.outcome.upper(), _verdict_lines(point)))
    width = max(len(r[0]) for r in rows)
    out = [
        f"Gate beside the aggregate-only check: {candidate} vs {pair.baseline} "
        "(policy: max_regression = 0.15 and min_score = 4.0 on every slice)",
        f"  {'check'.ljust(width)}  outcome       numbers",
    ]
    for label, outcome, lines in rows:
        out.append(f"  {label.ljust(width)}  {outcome.ljust(12)}  {lines[0]}")
        out.extend(f"  {''.ljust(width)}  {''.ljust(12)}  {line}" for line in lines[1:])
    baseline_low = [
        a
        for a in result.slicing().arms
        if a.arm == pair.baseline
        and a.slice in result.slicing().slices
        and a.estimate.estimate < 4.0
    ]
    out.append(
        "  The aggregate check passes: the 0.03 gap is inside the unpaired interval, and the "
        "paired interval clears -0.15. The worst-slice gate fails on extraction."
    )
    if interval.count(INCONCLUSIVE):
        out.append(
            "  The interval gate cannot decide where a slice's interval straddles the bar "
            "(reported, leaning fail); the point rule fails it outright."
        )
    for a in baseline_low:
        out.append(
            f"  Note: the baseline {a.arm} itself scores {fmt(a.estimate.estimate)} on "
            f"{a.slice}, below the 4.0 bar."
        )
    out.append("")
    out.append(render_verdict_text(interval).rstrip())
    return out

"""Rubric leakage flag (seed 002): criteria whose failures sit in one arm, with examples.

"An independently authored rubric is not free of the bias either": whoever writes the
requirements has read the incumbent's output for a year, and its house style can become a
criterion. For every check (mechanical or judge) this pairs the two arms on the attempts
both were scored on, counts the discordant split (b: only the baseline passes, c: only the
candidate), tests it, and flags the criterion "review: possibly style, not requirement"
when the rule of :mod:`evaldelta.stats._leakage` trips, with a few cases where the
disfavoured arm fails beside the favoured arm passing.

Two entry points: :func:`leakage_from_rows` (the audit: scored rows with ``check.<id>``
columns) and :func:`leakage_from_metrics` (a comparison's ``check.<id>`` metrics, read from
the evidence compare already gathered). Both are pure; the result types are the model's
(:mod:`evaldelta.comparison._leakage_model`); rendering lives in ``report/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaldelta.comparison.model import (
    CriterionLeakage,
    LeakageExample,
    MetricResult,
    RubricLeakage,
)
from evaldelta.errors import InputError, Location
from evaldelta.stats._leakage import Asymmetry, LeakageRule, criterion_asymmetry

__all__ = ["CHECK_PREFIX", "leakage_from_metrics", "leakage_from_rows"]
EXAMPLES = 3  # cases shown per flagged criterion
OUTPUT_CHARS = 4000  # the longest output carried per example (as the Comparison's moved cases)
CHECK_PREFIX = "check."


def _binary(value: Any, column: str, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "pass"):
        return 1
    if text in ("0", "0.0", "false", "fail"):
        return 0
    if text in ("", "nan", "none", "null"):
        return None
    raise InputError(
        "a check column holds pass (1) or fail (0)", Location(where, None, column, value)
    )


def _cut(text: Any) -> str | None:
    if text is None:
        return None
    s = str(text)
    return s if len(s) <= OUTPUT_CHARS else s[:OUTPUT_CHARS] + "[...]"


def leakage_from_rows(
    rows: Sequence[Mapping[str, Any]],
    criteria: Sequence[str],
    baseline: str,
    candidate: str,
    *,
    specs: Mapping[str, str] | None = None,
    not_assessed: Mapping[str, str] | None = None,
    rule: LeakageRule | None = None,
    examples: int = EXAMPLES,
    where: str = "<rows>",
) -> RubricLeakage:
    """Screen ``criteria`` (check ids; columns ``check.<id>``) on scored rows of two arms.

    Attempts pair on ``(case_id, repeat)``; a pair counts for a criterion when both
    attempts carry a score for it. Examples are the first cases by case id where the
    favoured arm passes and the other fails, with both outputs and the failing reason.
    """
    rule = rule or LeakageRule()
    by: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for r in rows:
        by[(str(r["arm"]), str(r["case_id"]), str(r.get("repeat", 0)))] = r
    keys = sorted({(cid, rep) for arm, cid, rep in by if arm == baseline})
    pairs = [(by[(baseline, *k)], by[(candidate, *k)]) for k in keys if (candidate, *k) in by]
    tables, lists = [], []
    for cid in criteria:
        col = CHECK_PREFIX + cid
        cells = [0, 0, 0, 0]
        found: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {"b": [], "c": []}
        for base, cand in pairs:
            x, y = _binary(base.get(col), col, where), _binary(cand.get(col), col, where)
            if x is None or y is None:
                continue
            cells[(0 if x else 2) + (0 if y else 1)] += 1
            if x != y:
                found["b" if x else "c"].append((base, cand))
        tables.append((cells[0], cells[1], cells[2], cells[3]))
        lists.append(found)
    results = criterion_asymmetry(tables, rule)
    out = []
    for cid, res, found in zip(criteria, results, lists, strict=True):
        favours = _favours(res, baseline, candidate)
        shown: list[LeakageExample] = []
        if res.flagged:
            for base, cand in found["b" if res.favoured == "baseline" else "c"][:examples]:
                good, bad = (base, cand) if res.favoured == "baseline" else (cand, base)
                reason = bad.get(f"reason.{cid}")
                shown.append(
                    LeakageExample(
                        str(bad["case_id"]),
                        str(bad["arm"]),
                        _cut(bad.get("output")),
                        str(good["arm"]),
                        _cut(good.get("output")),
                        str(reason) if reason not in (None, "") else None,
                    )
                )
        spec = (specs or {}).get(cid)
        out.append(CriterionLeakage(cid, spec, res, favours, tuple(shown)))
    repeated = any(str(k[1]) not in ("0", "None") for k in keys)
    return RubricLeakage(baseline, candidate, rule, tuple(out), dict(not_assessed or {}), repeated)


def _favours(res: Asymmetry, baseline: str, candidate: str) -> str | None:
    return {"baseline": baseline, "candidate": candidate}.get(res.favoured)


def leakage_from_metrics(
    metrics: Sequence[MetricResult],
    baseline: str,
    candidates: Sequence[str],
    *,
    rule: LeakageRule | None = None,
    examples: int = EXAMPLES,
) -> tuple[RubricLeakage, ...]:
    """Screen a comparison's ``check.<id>`` metrics, one rubric per candidate.

    Reads each metric's all-cases paired 2x2 table (binary, one attempt per case) and, for
    examples, its listed moved cases with their stored outputs (bounded by the comparison's
    list limit, so a flagged criterion may show fewer examples than it has cases). Metrics
    with repeats are named in ``not_assessed``. Nothing when no metric is a check.
    """
    checks = [m for m in metrics if m.metric.startswith(CHECK_PREFIX)]
    if not checks:
        return ()
    out = []
    for cand in candidates:
        skipped: dict[str, str] = {}
        used, tables, moved = [], [], []
        for m in checks:
            cid = m.metric.removeprefix(CHECK_PREFIX)
            pair = next((p for p in m.slicings[0].pairs if p.candidate == cand), None)
            table = pair.overall.table if pair is not None else None
            if m.kind != "binary" or m.repeated or pair is None or table is None:
                why = "graded or repeated scores" if m.kind != "binary" or m.repeated else ""
                skipped[cid] = why or "no paired cases"
                continue
            used.append(cid)
            tables.append(
                (table.both_pass, table.only_baseline, table.only_candidate, table.both_fail)
            )
            moved.append(pair.discordant)
        results = criterion_asymmetry(tables, rule) if tables else ()
        criteria = []
        for cid, res, cases in zip(used, results, moved, strict=True):
            shown: list[LeakageExample] = []
            if res.flagged:
                sign = -1 if res.favoured == "baseline" else 1  # delta is candidate - baseline
                for mc in [c for c in cases if c.delta * sign > 0][:examples]:
                    outs = {baseline: mc.baseline_output, cand: mc.candidate_output}
                    bad = cand if sign < 0 else baseline
                    good = baseline if sign < 0 else cand
                    shown.append(LeakageExample(mc.case_id, bad, outs[bad], good, outs[good]))
            criteria.append(
                CriterionLeakage(cid, None, res, _favours(res, baseline, cand), tuple(shown))
            )
        out.append(RubricLeakage(baseline, cand, rule or LeakageRule(), tuple(criteria), skipped))
    return tuple(out)

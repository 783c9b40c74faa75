"""Phase one of a comparison: every query, in one place, into one :class:`Evidence`.

DESIGN.md draws a comparison in two phases. This is the first: given the canonical relation
(:class:`~evaldelta.sources.TableSet`, from the row seam) and a :class:`Request`, run every
query the comparison needs and return the results as plain Python values (the types of
:mod:`evaldelta.evidence`). The second phase, :mod:`evaldelta.comparison`, turns an
:class:`Evidence` into a :class:`~evaldelta.comparison.model.Comparison` without touching a backend,
so it can be tested with hand-built evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from evaldelta.engine._arrivals import case_arrivals
from evaldelta.engine._critical import critical_stats
from evaldelta.engine._histogram import delta_histograms
from evaldelta.engine._lookalike import missing_slicing, slicing_lookalikes
from evaldelta.engine._outputs import case_outputs
from evaldelta.engine._reduce import (
    CaseTable,
    UncheckedCaseIds,
    build_case_table,
    check_case_ids,
    list_cases,
    slice_weight_totals,
)
from evaldelta.engine._reliability import repeat_evidence
from evaldelta.engine._repeats import reduce_repeats
from evaldelta.engine._samples import has_inspect_logs, side_by_side
from evaldelta.engine._slices import SliceReduction, reduce_slices
from evaldelta.engine._three_arm import (
    build_three_arm_table,
    check_roles,
    escalation_basis,
    reduce_three_arms,
    roles_from_pins,
)
from evaldelta.engine._upstream import upstream_counts
from evaldelta.engine._validate import Validated, validate, validate_quickly
from evaldelta.errors import UsageError
from evaldelta.evidence import (
    OUTPUT_CHARS,
    CaseArrivals,
    CriticalSelector,
    Evidence,
    MetricEvidence,
    PairEvidence,
    RepeatEvidence,
    Request,
    SlicingEvidence,
    ThreeArmEvidence,
    check_summarizable,
)
from evaldelta.sources import Source, TableSet, display_path
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._values import as_text, stripped
from evaldelta.stats._reducers import Reducer

__all__ = ["gather", "input_name", "resolve_arms"]


def gather(tables: TableSet, request: Request) -> Evidence:
    """Run every query of one comparison (validation first) and return the evidence.

    With ``request.order`` (a sequential comparison, whose rows were read with that order
    column) the evidence carries each arm's cases in the order they arrived.
    Validation's quick pass leaves the case ids to the per-case pivot, which reads them
    anyway (:func:`validate_quickly`); where it cannot vouch for the rows, or the pivot
    finds a blank or padded case id, the full validation runs and names the first defect.
    """
    by = request.by or ("slice",)
    if request.order != tables.order:
        raise UsageError(
            f"a sequential comparison by {request.order!r} needs the rows read with that "
            f"order column (read_sources(order=...)); they carry {tables.order!r}"
        )
    evidence = _gather_validated(tables, request, by)
    missing = missing_slicing(tables, by)
    if not missing:
        return evidence
    return replace(evidence, missing_by=missing, slice_lookalikes=slicing_lookalikes(tables))


def _gather_validated(tables: TableSet, request: Request, by: Sequence[str]) -> Evidence:
    if request.reducer is not None and not request.reducer.is_mean:
        return _gather_reduced(tables, request, request.reducer)
    quick = validate_quickly(tables, request.scale, cost_by=by[0])
    if quick is not None:
        try:
            return _gather(tables.unpadded(), request, quick)
        except UncheckedCaseIds:
            pass  # the full validation says which row, or strips the ids and counts them
    checked = validate(tables, request.scale, cost_by=by[0])
    if not checked.trimmed:  # no case id or arm to strip: later passes skip stripping
        tables = tables.unpadded()
    return _gather(tables, request, checked)


def _gather_reduced(tables: TableSet, request: Request, reducer: Reducer) -> Evidence:
    """:func:`gather` with each case's repeats reduced by ``reducer`` first (``_repeats``).

    The attempts are validated as they are, so a defect is named on its own row; the
    reduced rows (one per arm and case) are then validated and compared as any rows are.
    """
    by = request.by or ("slice",)
    raw = validate(tables, request.scale, cost_by=by[0])
    source = tables if raw.trimmed else tables.unpadded()
    reduced = reduce_repeats(source, reducer, raw.arms, tables.metrics)
    checked = validate(reduced, request.scale, cost_by=by[0])
    checked = replace(checked, trimmed=raw.trimmed, observed=raw.observed)
    evidence = _gather(reduced, request, checked)
    return replace(evidence, reducer=reducer.name, repeats=_repeats(source, evidence, raw))


def _gather(tables: TableSet, request: Request, checked: Validated) -> Evidence:
    by = request.by or ("slice",)
    present, default_why = _arm_order(tables, checked.arms)
    base, cands = resolve_arms(present, request.baseline, request.candidates)
    arms = (base, *cands)
    if not checked.ids_checked:  # the arms the pivots leave out; theirs check the rest
        check_case_ids(tables, [a for a in checked.arms if a not in arms])
    roles = check_roles(request.three_arm, present) if request.three_arm is not None else None
    metrics = []
    arrivals: list[CaseArrivals] = []
    first: dict[str, dict[str, int]] | None = None  # column -> slice -> cases, first metric
    for metric in tables.metrics:
        evidence, counts, arrived = _metric(
            tables, arms, metric, by, request.critical, request.list_limit, checked
        )
        checked = replace(checked, ids_checked=True)  # by the first pivot
        metrics.append(evidence)
        arrivals.extend(arrived)
        first = first or counts
    if first is None:  # pragma: no cover - the row seam always yields a metric
        raise RuntimeError("no metric to compare")
    pins = tables.pins(arms)
    roles_from: Literal["given", "pins"] = "given"
    if roles is None:
        roles, roles_from = roles_from_pins(pins, arms), "pins"
    three = (
        _three_arm(tables, roles, roles_from, tables.metrics[0], by[0])
        if roles is not None
        else None
    )
    return Evidence(
        inputs=tuple(input_name(s) for s in tables.sources),
        arms=arms,
        present=tuple(present),
        baseline_reason="--baseline" if request.baseline is not None else default_why,
        by=tuple(by),
        slice_names=tuple(first[by[0]]),
        slice_sizes={c: _slice_sizes(first[c]) for c in by},
        trimmed=checked.trimmed,
        observed=dict(checked.observed),
        metrics=tuple(metrics),
        pins=pins,
        imports=tables.reports,
        three_arm=three,
        critical_selector=request.critical.describe() if request.critical else "",
        scale=request.scale,
        upstream=upstream_counts(tables, arms),
        order=request.order,
        arrivals=tuple(arrivals),
        repeats=_repeats(tables, None, checked, arms, by[0]),
    )


def _repeats(
    tables: TableSet,
    evidence: Evidence | None,
    checked: Validated,
    arms: tuple[str, ...] = (),
    by: str = "",
) -> tuple[RepeatEvidence, ...]:
    """Each metric's repeats as counts of cases, when some case has 2 or more attempts."""
    if evidence is not None:
        arms, by = evidence.arms, evidence.by[0]
    if checked.single_attempts(arms):
        return ()
    metrics = [(m, checked.binary(m, arms)) for m in tables.metrics]
    return repeat_evidence(tables, arms, metrics, by)


def _metric(
    tables: TableSet,
    arms: tuple[str, ...],
    metric: str,
    by: Sequence[str],
    critical: CriticalSelector | None,
    list_limit: int | None,
    checked: Validated,
) -> tuple[MetricEvidence, dict[str, dict[str, int]], tuple[CaseArrivals, ...]]:
    """One metric's evidence, per slicing column the cases in each slice, and the arrivals.

    The arrivals (each arm's cases in the order they arrived) only for a sequential
    comparison, whose rows carry an order (:func:`case_arrivals`).

    ``checked`` (validation's findings) says whether the metric's values are binary and
    whole numbers, and about how many cases there are.
    """
    binary = checked.binary(metric, arms)
    cases = build_case_table(
        tables,
        arms,
        metric,
        integral_values=checked.integral.get(metric, False),
        cases_hint=checked.cases_hint(arms),
        all_scored=checked.all_scored(metric, arms),
        check_ids=not checked.ids_checked,
        single_attempts=checked.single_attempts(arms),
        only_arms=set(checked.arms) <= set(arms),
        top_repeat=checked.top_repeat(arms),
    )
    # the first reduction also settles the table's checks: before anything else reads it
    first = reduce_slices(cases, by[0], checked.costs_for(by[0]), checks=True)
    weights = slice_weight_totals(cases, by[0]) if tables.has_weight else None
    crit = critical_stats(tables, arms, metric, critical, binary) if critical else None
    slicings = []
    counts: dict[str, dict[str, int]] = {}
    for column in by:
        reduced = (
            first if column == by[0] else reduce_slices(cases, column, checked.costs_for(column))
        )
        counts[column] = reduced.case_counts
        arm_stats = reduced.arms
        check_summarizable(arm_stats, arms, metric)
        single = binary and not any(a.max_scored_per_case > 1 for a in arm_stats)
        pairs = _pairs(tables, cases, column, reduced, single, list_limit)
        slicings.append(SlicingEvidence(by=column, arm_stats=arm_stats, pairs=pairs))
    samples = (
        tuple(side_by_side(tables, cases, by[0], j) for j in range(1, len(arms)))
        if binary and has_inspect_logs(tables)
        else ()
    )
    evidence = MetricEvidence(
        metric=metric,
        binary=binary,
        slicings=tuple(slicings),
        sample_weight_totals=weights or None,
        critical=crit,
        samples=samples,
    )
    arrivals = case_arrivals(cases, by) if tables.order is not None else ()
    return evidence, counts, arrivals


def _pairs(
    tables: TableSet,
    cases: CaseTable,
    column: str,
    reduced: SliceReduction,
    single: bool,
    list_limit: int | None,
) -> tuple[PairEvidence, ...]:
    """The baseline against each candidate on one slicing column."""
    arms = cases.arms
    pairs = []
    for j in range(1, len(arms)):
        listing = list_cases(cases, column, j, limit=list_limit)
        moved = [str(r["case_id"]) for r in listing["discordant"]]
        pairs.append(
            PairEvidence(
                candidate=arms[j],
                slices=reduced.pairs[j],
                # graded or repeated data: the deltas' distribution (binary: the 2x2)
                histograms={} if single else delta_histograms(cases, column, j),
                listing=listing,
                outputs=case_outputs(tables, (arms[0], arms[j]), moved, max_chars=OUTPUT_CHARS),
            )
        )
    return tuple(pairs)


def _three_arm(
    tables: TableSet,
    roles: tuple[str, str, str],
    roles_from: Literal["given", "pins"],
    metric: str,
    by: str,
) -> ThreeArmEvidence:
    esc = escalation_basis(tables, roles[0])
    cases = build_three_arm_table(tables, roles, metric, esc)
    return ThreeArmEvidence(
        roles=roles,
        roles_from=roles_from,
        metric=metric,
        by=by,
        escalation=esc,
        rows=tuple(reduce_three_arms(cases, by)),
    )


def input_name(source: Source) -> str:
    """How the report names an input: its path, and the run of a run store."""
    name = display_path(source.path)
    return f"{name} (run {source.run})" if source.run is not None else name


def _arm_order(tables: TableSet, arms_seen: tuple[str, ...]) -> tuple[list[str], str]:
    """Every arm present, the default baseline first, and how that baseline was chosen.

    The first input decides: a run store's first configured arm; the arm named by
    ``--arm NAME=FILE``; an imported log's first arm; else the arm of a tidy file's first
    row. The other arms follow by input, then by name (``arms_seen``, from validation).
    """
    arms = list(arms_seen)
    first = tables.opened[0]
    name = input_name(first.source)
    ordered = [a for a in first.arm_order if a in arms]
    if first.source.arm is not None:
        head, why = first.source.arm, f"the first --arm, {name}"
    elif ordered and first.source.format == "store":
        head, why = ordered[0], f"the first arm configured in {name}"
    elif ordered:
        head, why = ordered[0], f"the first arm of the first input, {name}"
    else:
        # the source's own table, where "first row" is defined: the moved relation's
        # row order is the engine's (Spark, a warehouse) and a table has none at all
        src = first.table
        found = fetch_rows(src.select(arm=stripped(as_text(src.arm))).limit(1))
        head, why = (
            (str(found[0]["arm"]) if found else arms[0]),
            f"the arm of the first row of {name}",
        )
    rest = [a for a in ordered if a != head] + [a for a in arms if a != head and a not in ordered]
    return [head, *rest], why


def resolve_arms(
    present: Sequence[str], baseline: str | None, candidates: Sequence[str] | None
) -> tuple[str, tuple[str, ...]]:
    """The baseline and candidates asked for, checked against the arms the data has."""
    if len(present) < 2:
        raise UsageError(
            f"only one arm is present ({', '.join(map(repr, present))}); a comparison needs two "
            "(give an arm column, or several files as --arm NAME=FILE)"
        )
    for name in [baseline, *(candidates or [])]:
        if name is not None and name not in present:
            raise UsageError(f"unknown arm {name!r}; the data has: {', '.join(map(repr, present))}")
    base = baseline if baseline is not None else present[0]
    cands = tuple(candidates) if candidates else tuple(a for a in present if a != base)
    if base in cands:
        raise UsageError(f"arm {base!r} cannot be both the baseline and a candidate")
    return base, cands


def _slice_sizes(counts: dict[str, int]) -> tuple[int, int]:
    """How many slices the column makes over the compared arms, and how many hold one case.

    Counted on the per-case table (one row per case, its one slice: a case in two slices
    was refused when the table was built), not by distinct case ids over every row.
    """
    return len(counts), sum(1 for n in counts.values() if n == 1)

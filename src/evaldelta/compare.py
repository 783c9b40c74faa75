"""Compose the engine and the statistics into a :class:`~evaldelta.model.Comparison`.

This is the library's main entry point: ``compare(["runs.parquet"], baseline="v1")``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaldelta import __version__
from evaldelta._slicing import Notes, SlicingBuilder
from evaldelta._three_arm import check_roles, roles_from_pins, three_arm_summary
from evaldelta.engine import (
    CriticalSelector,
    build_case_table,
    critical_stats,
    reduce_arm_slices,
    slice_weight_totals,
    validate,
)
from evaldelta.engine._mix import read_mix
from evaldelta.errors import UsageError
from evaldelta.model import (
    SCHEMA_VERSION,
    Comparison,
    MetricResult,
)
from evaldelta.pin_check import undeclared_differences
from evaldelta.sources import (
    ReadOptions,
    Source,
    TableSet,
    display_path,
    is_default,
    move_rows,
    open_backend,
    read_sources,
)
from evaldelta.sources._errors import reading_errors
from evaldelta.sources._values import as_text

__all__ = ["compare"]

INTERVALS = ("newcombe", "wald")


def _sources(files: Sequence[Source | str | Path]) -> list[Source]:
    from evaldelta.sources import parse_source

    return [f if isinstance(f, Source) else parse_source(str(f)) for f in files]


def _arm_order(tables: TableSet) -> tuple[list[str], str]:
    """Every arm present, the default baseline first, and how that baseline was chosen.

    The first input decides: a run store's first configured arm; the arm named by
    ``--arm NAME=FILE``; an imported log's first arm; else the arm of a tidy file's first
    row. The other arms follow by input, then by name.
    """
    t = tables.rows
    rows = t.group_by("arm").aggregate(src=t._src.min()).order_by(["src", "arm"])
    arms = [str(r["arm"]) for r in rows.to_pyarrow().to_pylist()]
    first = tables.opened[0]
    name = _input_name(first.source)
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
        found = src.select(arm=as_text(src.arm).strip()).limit(1).to_pyarrow().to_pylist()
        head, why = (
            (str(found[0]["arm"]) if found else arms[0]),
            f"the arm of the first row of {name}",
        )
    rest = [a for a in ordered if a != head] + [a for a in arms if a != head and a not in ordered]
    return [head, *rest], why


def _resolve_arms(
    present: list[str], baseline: str | None, candidates: Sequence[str] | None
) -> tuple[str, tuple[str, ...]]:
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


@reading_errors
def compare(
    files: Sequence[Source | str | Path],
    *,
    baseline: str | None = None,
    candidates: Sequence[str] | None = None,
    by: Sequence[str] = ("slice",),
    metrics: Sequence[str] | None = None,
    mix: str | Path = "actual",
    traffic: str | Path | None = None,
    confidence: float = 0.95,
    interval: str = "newcombe",
    scale: tuple[float, float] | None = None,
    list_limit: int | None = 50,
    critical: CriticalSelector | None = None,
    allowed_pin_differences: Sequence[str] = (),
    three_arm: Sequence[str] | None = None,
    read_options: ReadOptions | None = None,
    backend: Any = None,
    table: str | None = None,
) -> Comparison:
    """Compare a baseline arm with one or more candidates; see the README for what is reported.

    ``files`` are anything the row seam reads (:mod:`evaldelta.sources`): CSV, JSONL or
    Parquet in the long row format, a run store, or another tool's log (Inspect AI,
    lm-evaluation-harness, promptfoo, ...), as paths, ``FORMAT:PATH`` strings or
    :class:`Source` objects (which can name the arm a file holds). ``metrics`` default to
    the first source's (``score`` for tidy files, an importer's own otherwise);
    ``read_options`` are passed to the readers (column mapping, case key, filter, strict).
    ``mix`` is ``actual``, ``equal`` or a mix file;
    ``traffic`` an optional traffic file whose weights give a second standardized result;
    without one, a ``sample_weight`` column (written by ``evaldelta sample``) gives the
    traffic mix: each slice's sum of weights estimates its traffic (Horvitz-Thompson).
    ``critical`` selects critical cases (ids, a flag column, a tag): each pair then carries
    their attempts and passes (:class:`~evaldelta.model.CriticalEvidence`) for the gate.
    ``three_arm`` names the (always-cheap, cascade, always-strong) arms of a cascade run: the
    comparison then carries a :class:`~evaldelta.model.ThreeArmSummary` on the first metric
    and slicing column. Without it, the roles are read from a run store's pins when a
    compared cascade arm's cheap and strong steps are compared arms too.
    ``backend`` is where the queries run: ``None``/``"duckdb"`` (embedded), ``"spark"``, an
    Ibis connection URL or an Ibis connection; the files are read on DuckDB and their rows
    moved there once. With ``table``, the rows are that backend's table instead of files
    (:mod:`evaldelta.sources._backend`).
    """
    if interval not in INTERVALS:
        raise UsageError(f"unknown interval {interval!r}; choose one of {', '.join(INTERVALS)}")
    if list_limit is not None and (isinstance(list_limit, bool) or list_limit < 0):
        raise UsageError(f"--list-limit takes a number of cases >= 0 (0 = all), not {list_limit}")
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    if not by:
        by = ("slice",)
    options = dataclasses.replace(read_options or ReadOptions(), outputs_on_demand=True)
    tables = _read(
        files,
        backend,
        table,
        slice_columns=tuple(by),
        metrics=tuple(metrics) if metrics else None,
        critical_column=critical.column if critical else None,
        critical_tag=critical.tag if critical else None,
        options=options,
    )
    metrics = tables.metrics
    checked = validate(tables, scale)
    present, default_why = _arm_order(tables)
    base, cands = _resolve_arms(present, baseline, candidates)
    baseline_reason = "--baseline" if baseline is not None else default_why
    arms = (base, *cands)
    roles = check_roles(three_arm, present) if three_arm is not None else None
    primary_slices = _slice_names(tables, arms, by[0])
    slicing_notes = _many_slices(tables, arms, by)
    mix_name, mix_weights = _chosen_mix(mix, primary_slices)
    traffic_weights = read_mix(Path(traffic), set(primary_slices)) if traffic else None
    traffic_label = display_path(Path(traffic)) if traffic else None
    notes = Notes()
    notes.items.extend(slicing_notes)
    if checked.trimmed:
        notes.items.append(
            f"{checked.trimmed:,} rows had spaces around their case id or arm; they were "
            "trimmed, so 'a ' and 'a' are one arm"
        )
    results = []
    for metric in metrics:
        cases = build_case_table(tables, arms, metric)
        if traffic_weights is None and tables.has_weight:
            traffic_weights = slice_weight_totals(cases, by[0]) or None
            traffic_label = "sample_weight" if traffic_weights else None
        binary = _is_binary(tables, arms, metric)
        crit = critical_stats(tables, arms, metric, critical, binary) if critical else None
        slicings = []
        repeated = False
        for index, column in enumerate(by):
            arm_stats = reduce_arm_slices(cases, column)
            repeated = repeated or any(a.max_scored_per_case > 1 for a in arm_stats)
            slicing = SlicingBuilder(
                cases=cases,
                by=column,
                arm_stats=arm_stats,
                binary_single=binary and not any(a.max_scored_per_case > 1 for a in arm_stats),
                binary=binary,
                confidence=confidence,
                interval=interval,
                mix_name=mix_name if index == 0 else _secondary_mix_name(mix_name),
                mix_weights=mix_weights if index == 0 else None,
                traffic=traffic_weights if index == 0 else None,
                list_limit=list_limit,
                notes=notes,
                critical=crit,
                critical_selector=critical.describe() if critical else "",
            ).build()
            slicings.append(slicing)
        results.append(
            MetricResult(
                metric=metric,
                kind="binary" if binary else "graded",
                repeated=repeated,
                unit="case mean of repeats" if repeated else "attempt",
                slicings=tuple(slicings),
                observed_low=checked.observed.get(metric, (None, None))[0],
                observed_high=checked.observed.get(metric, (None, None))[1],
                scale=scale,
            )
        )
    pins = tables.pins(arms)
    roles_from = "given"
    if roles is None:
        roles, roles_from = roles_from_pins(pins, arms), "pins"
    summary = (
        three_arm_summary(
            tables,
            roles,
            roles_from=roles_from,
            metric=metrics[0],
            by=by[0],
            confidence=confidence,
            notes=notes,
        )
        if roles is not None
        else None
    )
    return Comparison(
        schema_version=SCHEMA_VERSION,
        evaldelta_version=__version__,
        inputs=tuple(_input_name(s) for s in tables.sources),
        baseline=base,
        baseline_reason=baseline_reason,
        candidates=cands,
        arms_present=tuple(present),
        confidence=confidence,
        interval=interval,
        mix=mix_name,
        traffic=traffic_label,
        metrics=tuple(results),
        notes=notes.folded(),
        pins=pins,
        pin_differences=undeclared_differences(pins, arms, allowed_pin_differences),
        three_arm=summary,
        imports=tables.reports,
    )


def _read(
    files: Sequence[Source | str | Path], backend: Any, table: str | None, **kwargs: Any
) -> TableSet:
    """The canonical relation on ``backend``: files read on DuckDB and moved, or its table."""
    if table is not None and is_default(backend):
        raise UsageError("--table NAME reads a table of --backend spark or an Ibis URL")
    if table is not None and files:
        raise UsageError("give either input files or --table NAME, not both")
    con = None if is_default(backend) else open_backend(backend)  # a bad one fails first
    if table is not None:
        return read_sources([Source(Path(table), format="table")], con=con, **kwargs)
    tables = read_sources(_sources(files), **kwargs)
    return tables if con is None else move_rows(tables, con)


def _input_name(source: Source) -> str:
    name = display_path(source.path)
    return f"{name} (run {source.run})" if source.run is not None else name


def _slice_names(tables: TableSet, arms: tuple[str, ...], column: str) -> list[str]:
    t = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    col = t[f"by_{column}"]
    rows = t.select(s=col).distinct().order_by("s").to_pyarrow().to_pylist()
    return [str(r["s"]) for r in rows]


def _chosen_mix(mix: str | Path, slices: list[str]) -> tuple[str, dict[str, float] | None]:
    """``actual`` -> None (filled from the evidence later), ``equal``, or a file's weights."""
    if str(mix) == "actual":
        return "actual", None
    if str(mix) == "equal":
        return "equal", dict.fromkeys(slices, 1.0)
    return f"file:{display_path(Path(mix))}", read_mix(Path(mix), set(slices))


def _secondary_mix_name(mix_name: str) -> str:
    return "equal" if mix_name == "equal" else "actual"


def _is_binary(tables: TableSet, arms: tuple[str, ...], metric: str) -> bool:
    t = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    col = t[f"m_{metric}"]
    other = (col.notnull() & ~col.isin([0.0, 1.0])).sum()
    return bool(t.aggregate(k=other).to_pyarrow().to_pylist()[0]["k"] == 0)


MANY_SLICES = 50


def _many_slices(tables: TableSet, arms: tuple[str, ...], by: Sequence[str]) -> list[str]:
    """A note for each slicing column that cuts the cases into very many or one-case slices.

    ``--by case_id`` makes one slice per case: every slice's interval is as wide as it can
    be and the report runs to thousands of lines, which is almost never what was meant.
    """
    out = []
    t = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    for column in by:
        col = t[f"by_{column}"]
        sizes = t.group_by(s=col).aggregate(n=t.case_id.nunique())
        row = sizes.aggregate(k=sizes.count(), single=(sizes.n == 1).sum()).to_pyarrow().to_pylist()
        k, single = int(row[0]["k"] or 0), int(row[0]["single"] or 0)
        if k > MANY_SLICES or (k > 5 and single > k / 2):
            out.append(
                f"--by {column} cuts the cases into {k:,} slices ({single:,} of them one case "
                "each); per-slice intervals on so few cases are too wide to decide anything "
                "(did you mean a slicing column fixed before the outcomes, such as a task?)"
            )
    return out

"""CLI commands ``plan`` and ``sample`` (registered onto the main app by cli.py).

Thin: parse and check option combinations (UsageError, exit 2), call one library function,
render.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evaldelta._util._progress import working
from evaldelta.commands._shared import (
    BackendOpt,
    CaseKeyOpt,
    ColumnsOpt,
    FilterOpt,
    OutputOpt,
    StrictOpt,
    TableOpt,
    read_options,
    sources_from,
    write_output,
)
from evaldelta.errors import UsageError

__all__ = ["register"]


class PlanFormat(StrEnum):
    """Output formats of ``plan``."""

    text = "text"
    json = "json"
    markdown = "markdown"


class SampleFormat(StrEnum):
    """Report formats of ``sample``."""

    text = "text"
    json = "json"


class Alternative(StrEnum):
    """The alternative hypothesis of the power calculation."""

    two_sided = "two-sided"
    larger = "larger"
    smaller = "smaller"


def plan_cmd(
    pilot: Annotated[
        list[str] | None,
        typer.Option(
            "--from",
            help="Pilot eval rows: [FORMAT:]PATH of rows, a run store or a log (repeatable).",
        ),
    ] = None,
    arm: Annotated[
        list[str] | None,
        typer.Option("--arm", help="NAME=[FORMAT:]PATH: a pilot file holding one arm."),
    ] = None,
    baseline: Annotated[str | None, typer.Option(help="The baseline arm of the pilot.")] = None,
    candidate: Annotated[
        list[str] | None, typer.Option("--candidate", help="Candidate arm (default: all others).")
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Slicing column of the pilot (default: slice).")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(help="Score column of the pilot (default: score, or a log's own)."),
    ] = None,
    effect: Annotated[
        float | None,
        typer.Option(help="Delta to detect: score units, or a proportion for pass/fail (0.05)."),
    ] = None,
    power: Annotated[float, typer.Option(help="Power (chance to detect the effect).")] = 0.8,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    alternative: Annotated[
        Alternative, typer.Option(help="two-sided, larger or smaller.")
    ] = Alternative.two_sided,
    sd: Annotated[
        float | None, typer.Option(help="Without a pilot: the sd of per-case paired deltas.")
    ] = None,
    p_only_candidate: Annotated[
        float | None,
        typer.Option(help="Without a pilot: share of pairs only the candidate passes."),
    ] = None,
    p_only_baseline: Annotated[
        float | None,
        typer.Option(help="Without a pilot: share of pairs only the baseline passes."),
    ] = None,
    traffic: Annotated[
        Path | None, typer.Option(help="Traffic mix (CSV slice,weight or JSON) to allocate over.")
    ] = None,
    budget: Annotated[
        int | None, typer.Option(help="Total cases to allocate over the traffic slices.")
    ] = None,
    floor: Annotated[
        int | None, typer.Option(help="Cases per slice before the rest is allocated (300).")
    ] = None,
    format: Annotated[PlanFormat, typer.Option("--format", help="Output format.")] = (
        PlanFormat.text
    ),
    output: OutputOpt = None,
    columns: ColumnsOpt = None,
    case_key: CaseKeyOpt = None,
    filter: FilterOpt = None,
    strict: StrictOpt = False,
    backend: BackendOpt = "duckdb",
    table: TableOpt = None,
) -> None:
    """Sample sizes and minimum detectable effects per slice; allocate a budget of cases."""
    from evaldelta.planning.plan import plan_from_pilot, plan_from_summary
    from evaldelta.report.plan import render_plan_json, render_plan_markdown, render_plan_text
    from evaldelta.sources._mix import read_mix

    sources = sources_from(pilot, arm)
    given = [
        name
        for name, value in (
            ("--sd", sd),
            ("--p-only-candidate", p_only_candidate),
            ("--p-only-baseline", p_only_baseline),
        )
        if value is not None
    ]
    pilot_given = bool(sources) or table is not None
    if pilot_given and given:
        raise UsageError(f"{given[0]} is for planning without a pilot; drop it or the pilot")
    if not pilot_given and (baseline or candidate):
        raise UsageError("--baseline and --candidate name arms of a pilot (--from or --arm)")
    if floor is not None and budget is None:
        raise UsageError("--floor applies to an allocation; give --budget (and --traffic)")
    if (budget is None) != (traffic is None):
        raise UsageError("an allocation needs both --traffic and --budget")
    weights = read_mix(traffic) if traffic is not None else None
    fl = 300 if floor is None else floor
    if pilot_given:
        result = plan_from_pilot(
            sources,
            effect,
            power,
            alpha,
            alternative.value,
            baseline=baseline,
            candidates=candidate or None,
            by=by,
            metric=metric,
            traffic=weights,
            budget=budget,
            floor=fl,
            read_options=read_options(columns, case_key, filter, strict),
            backend=backend,
            table=table,
        )
    else:
        result = plan_from_summary(
            effect,
            power,
            alpha,
            alternative.value,
            sd=sd,
            p_only_candidate=p_only_candidate,
            p_only_baseline=p_only_baseline,
            traffic=weights,
            budget=budget,
            floor=fl,
        )
    renderers = {
        PlanFormat.text: render_plan_text,
        PlanFormat.json: render_plan_json,
        PlanFormat.markdown: render_plan_markdown,
    }
    write_output(renderers[format](result), output)


def sample_cmd(
    traffic: Annotated[
        Path | None,
        typer.Argument(help="Traffic log: CSV, JSONL or Parquet (or give --table)."),
    ] = None,
    *,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The sample (format from the suffix).")
    ],
    by: Annotated[
        str | None, typer.Option(help="Slicing column (default: the one --band column).")
    ] = None,
    floor: Annotated[int, typer.Option(help="Rows per slice (smaller slices: all).")] = 300,
    total: Annotated[
        int | None, typer.Option(help="Total rows: floors first, the rest by traffic share.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the row ranking (recorded).")] = 0,
    id_column: Annotated[
        str | None, typer.Option("--id", help="Row key column (default: the row's position).")
    ] = None,
    band: Annotated[
        list[str] | None,
        typer.Option("--band", help="COLUMN=EDGES: a band column, e.g. input_tokens=0,500,2000."),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Keep rows on or after this date (UTC), e.g. 2026-11-01.")
    ] = None,
    time_column: Annotated[str, typer.Option(help="Timestamp column for --since.")] = "timestamp",
    format: Annotated[SampleFormat, typer.Option("--format", help="Report format.")] = (
        SampleFormat.text
    ),
    backend: Annotated[
        str, typer.Option("--backend", help="Where the ranking runs: duckdb, spark or an Ibis URL.")
    ] = "duckdb",
    table: Annotated[
        str | None,
        typer.Option(
            "--table",
            help="With --backend spark or a URL: the table there that holds the traffic "
            "log, read in place (needs --id; the sample is written in the ids' order).",
        ),
    ] = None,
) -> None:
    """Draw a stratified, seeded sample of a traffic log with sampling weights and a mix file."""
    from evaldelta.planning.sampling import parse_band, sample
    from evaldelta.report.plan import render_sample_json, render_sample_text

    with working(f"evaldelta: sampling the traffic log ({backend})..."):
        result = sample(
            traffic,
            output,
            by=by,
            floor=floor,
            total=total,
            seed=seed,
            id_column=id_column,
            bands=[parse_band(b) for b in band or []],
            since=since,
            time_column=time_column,
            backend=backend,
            table=table,
        )
    render = render_sample_json if format is SampleFormat.json else render_sample_text
    sys.stdout.write(render(result))


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``sample`` to app."""
    app.command("plan")(plan_cmd)
    app.command("sample")(sample_cmd)

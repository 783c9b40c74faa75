"""``evaldelta import FORMAT PATHS... -o rows.parquet``: other tools' logs as our rows.

Thin: parse the sources (every path is ``FORMAT:PATH`` unless FORMAT is ``auto``), call
:func:`evaldelta.sources.import_rows`, print what was mapped and what could not be.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evaldelta.commands._shared import (
    ArmOpt,
    CaseKeyOpt,
    ColumnsOpt,
    FilterOpt,
    StrictOpt,
    parse_arm_files,
    read_options,
)
from evaldelta.errors import UsageError

__all__ = ["register"]


class ImportFormat(StrEnum):
    """Report formats of ``import``."""

    text = "text"
    json = "json"


def import_cmd(
    format_name: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT",
            help="inspect, lmeval, promptfoo, helm, openai-evals, lighteval, tidy, store, or "
            "auto (recognize each path's format from its content).",
        ),
    ],
    paths: Annotated[
        list[str] | None, typer.Argument(metavar="[PATH]...", help="Logs, files or folders.")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Rows to write: .parquet (keeps pins), .csv, .jsonl."),
    ] = None,
    arm: ArmOpt = None,
    columns: ColumnsOpt = None,
    case_key: CaseKeyOpt = None,
    filter: FilterOpt = None,
    strict: StrictOpt = False,
    report: Annotated[
        ImportFormat,
        typer.Option("--format", help="How to report what was mapped: text or json."),
    ] = ImportFormat.text,
) -> None:
    """Import other tools' logs as rows in the long row format, saying what was not mapped."""
    from evaldelta.sources import Source, format_names, import_rows

    name = format_name.strip().lower()
    if name != "auto" and name not in format_names():
        known = ", ".join(sorted(format_names() | {"auto"}))
        raise UsageError(f"unknown format {format_name!r}; formats: {known}")
    if output is None:
        raise UsageError("give -o OUT (.parquet keeps the pins; .csv or .jsonl)")
    fmt = None if name == "auto" else name
    sources = [Source(Path(p), format=fmt) for p in paths or []]
    sources += [Source(Path(p), arm=n, format=fmt) for n, p in parse_arm_files(arm or [])]
    if not sources:
        raise UsageError("give at least one PATH, or --arm NAME=PATH")
    result = import_rows(sources, output, read_options(columns, case_key, filter, strict))
    if report == ImportFormat.json:
        doc = {
            "output": result.output,
            "rows": result.rows,
            "columns": list(result.columns),
            "imports": [r.to_jsonable() for r in result.reports],
        }
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    lines = []
    for rep in result.reports:
        lines.append(f"{rep.summary()}")
        lines.extend(f"  mapped: {m}" for m in rep.mapped)
        for issue in rep.issues:
            examples = f" (e.g. {', '.join(issue.examples)})" if issue.examples else ""
            lines.append(
                f"  not mapped or decided for you: {issue.message}: {issue.count:,}{examples}"
            )
        if not rep.issues:
            lines.append("  everything in the log was mapped")
    lines.append(f"wrote {result.rows:,} rows ({len(result.columns)} columns) to {result.output}")
    typer.echo("\n".join(lines))


def register(app: typer.Typer) -> None:
    """Add this module's commands to app."""
    app.command("import")(import_cmd)

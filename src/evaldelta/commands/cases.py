"""``evaldelta cases add`` and ``evaldelta cases list``: the regression set on the command line.

Thin: parse, call :mod:`evaldelta.regression`, render with :mod:`evaldelta.report.regression`.
"""

from __future__ import annotations

import datetime as _dt
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evaldelta.commands._shared import OutputOpt, write_output
from evaldelta.errors import UsageError

__all__ = ["register"]

cases_app = typer.Typer(
    name="cases",
    help="Regression cases: production failures the checks let through, kept in a reviewable "
    "file the gate treats as critical.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help, as the main app's (rich costs 0.2 s)
)

SetOpt = Annotated[
    Path,
    typer.Option("--set", help="The regression set file (TOML; created by the first add)."),
]


class ListFormat(StrEnum):
    """Output formats of ``cases list``."""

    text = "text"
    json = "json"
    jsonl = "jsonl"


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in a bare container
        return "unknown"


def _date(value: str | None) -> _dt.date | None:
    if value is None:
        return None
    try:
        return _dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--date takes an ISO date like 2026-11-30, not {value!r}") from None


@cases_app.command("add")
def add_cmd(
    source_file: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="[FORMAT:]PATH",
            help="Rows (CSV, JSONL, Parquet, another tool's log) or a run store to take the "
            "failing attempts from.",
        ),
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="What was wrong, in a sentence (required).")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="The incident, ticket or review that found it (required)."),
    ] = None,
    source_kind: Annotated[
        str,
        typer.Option("--source-kind", help="incident, ticket, review, audit or other."),
    ] = "incident",
    found_by: Annotated[
        str | None,
        typer.Option("--found-by", help="Who or what found it (default: your login name)."),
    ] = None,
    release: Annotated[
        str | None,
        typer.Option("--release", help="The arm that failed it (default: the only arm)."),
    ] = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            help="A case to add (repeatable; default: every failing attempt of the release), "
            "also one the checks passed.",
        ),
    ] = None,
    regression_set: SetOpt = Path("regression.toml"),
    metric: Annotated[str, typer.Option(help="The score column that says failing.")] = "score",
    pass_threshold: Annotated[
        float, typer.Option(help="An attempt fails when its score is below this.")
    ] = 1.0,
    by: Annotated[str, typer.Option("--by", help="The column that names a case's slice.")] = (
        "slice"
    ),
    run: Annotated[
        str | None, typer.Option("--run", help="With a run store: the run (default newest).")
    ] = None,
    date: Annotated[
        str | None, typer.Option("--date", help="The date added, YYYY-MM-DD (default today).")
    ] = None,
) -> None:
    """Append failing attempts to the regression set, with their provenance."""
    from evaldelta.regression import add_from
    from evaldelta.report.regression import render_added
    from evaldelta.sources import Source, parse_source

    if source_file is None or reason is None or source is None:
        given = (("--from FILE", source_file), ("--reason TEXT", reason), ("--source REF", source))
        missing = ", ".join(flag for flag, value in given if value is None)
        raise UsageError(f"cases add needs {missing}")
    src = parse_source(source_file)
    if run is not None:
        src = Source(src.path, run=run, format="store")
    result = add_from(
        src,
        regression_set,
        reason=reason,
        source_ref=source,
        found_by=found_by or _user(),
        source_kind=source_kind,
        release=release,
        case_ids=tuple(case or ()),
        metric=metric,
        pass_threshold=pass_threshold,
        by=by,
        added_at=_date(date),
    )
    typer.echo(render_added(result.set, result.added), nl=False)


@cases_app.command("list")
def list_cmd(
    regression_set: SetOpt = Path("regression.toml"),
    format: Annotated[
        ListFormat,
        typer.Option(
            "--format", help="text (a table), json (everything), or jsonl (cases for run)."
        ),
    ] = ListFormat.text,
    output: OutputOpt = None,
) -> None:
    """Print the regression set (jsonl: a case file `evaldelta run` can replay)."""
    from evaldelta.regression import load_set
    from evaldelta.report.regression import render_set_json, render_set_jsonl, render_set_text

    rset = load_set(regression_set)
    render = {
        ListFormat.text: render_set_text,
        ListFormat.json: render_set_json,
        ListFormat.jsonl: render_set_jsonl,
    }[format]
    write_output(render(rset), output)


def register(app: typer.Typer) -> None:
    """Add the ``cases`` group to app."""
    app.add_typer(cases_app)

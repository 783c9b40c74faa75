"""``evaldelta compare``: per-slice paired deltas, standardized and pooled; ``--policy`` gates too.

Its row options are :mod:`evaldelta.commands._shared`'s, the same declarations ``gate``
takes, and become the library's keyword arguments in one place
(:meth:`~evaldelta.commands._shared.RowOptions.compare_kwargs`).
"""

from __future__ import annotations

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
    OrderOpt,
    OutputOpt,
    PassKOpt,
    ReduceOpt,
    RowOptions,
    RunOpt,
    ScaleOpt,
    SequentialOpt,
    StoreOpt,
    StrictOpt,
    TableOpt,
    TrafficOpt,
    announce_imports,
    announce_warnings,
    write_output,
)
from evaldelta.errors import UsageError

if TYPE_CHECKING:
    from evaldelta.comparison.model import Comparison
    from evaldelta.gating.verdict import Verdict

__all__ = ["Format", "register", "resolve_format"]


def register(app: typer.Typer) -> None:
    """Add ``compare`` to ``app``."""
    app.command("compare")(compare_cmd)


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
    sequential: SequentialOpt = False,
    order: OrderOpt = None,
    k: PassKOpt = None,
) -> None:
    """Compare a baseline with candidates: per-slice paired deltas, standardized and pooled."""
    shared = RowOptions.of(locals())  # first: the parameters only
    from evaldelta.comparison import compare
    from evaldelta.report import render_json, render_markdown, render_text

    sources = shared.sources()
    options: dict[str, Any] = {
        **shared.compare_kwargs(),
        "by": tuple(by) if by else None,
        "list_limit": None if list_limit == 0 else list_limit,
        "allowed_pin_differences": tuple(allow_pin_diff or ()),
        "three_arm": tuple(three_arm.split(",")) if three_arm is not None else None,
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
        text = render_markdown(result, verdict)
    else:
        text = render_text(result, verdict)
    write_output(text, output)
    raise typer.Exit(verdict.exit_code)

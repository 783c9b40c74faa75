"""The command line: parse, call one library function, render. Errors map to exit codes here.

Exit codes: 0 ok, 1 gate fail, 2 usage or data error, 3 gate inconclusive.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from evaldelta._progress import working
from evaldelta.errors import EvaldeltaError, UsageError

__all__ = ["app", "main"]

app = typer.Typer(
    name="evaldelta",
    help="Compare LLM releases honestly: per-slice paired deltas with intervals, "
    "fixed-mix standardized rates, and the cases that moved.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Format(StrEnum):
    """Output formats of ``compare``."""

    text = "text"
    json = "json"
    markdown = "markdown"


class Interval(StrEnum):
    """Interval methods for paired binary data."""

    newcombe = "newcombe"
    wald = "wald"


def _parse_arm_files(values: list[str]) -> list[tuple[str, Path]]:
    out = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(f"--arm takes NAME=FILE, not {value!r}")
        out.append((name.strip(), Path(path.strip())))
    return out


def _parse_scale(value: str | None) -> tuple[float, float] | None:
    if value is None:
        return None
    lo, sep, hi = value.partition(",")
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        raise UsageError(f"--scale takes LOW,HIGH (for example 1,5), not {value!r}") from None
    if not sep or low >= high:
        raise UsageError(f"--scale takes LOW,HIGH with LOW < HIGH, not {value!r}")
    return low, high


def _write(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}", err=True)


@app.command("compare")
def compare_cmd(
    files: Annotated[
        list[Path] | None, typer.Argument(help="CSV, JSONL or Parquet files with an arm column.")
    ] = None,
    arm: Annotated[
        list[str] | None, typer.Option("--arm", help="NAME=FILE: a file holding one arm.")
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="The baseline arm (default: the first row's arm).")
    ] = None,
    candidate: Annotated[
        list[str] | None,
        typer.Option("--candidate", help="A candidate arm (repeatable; default: all others)."),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option("--by", help="Slicing column (repeatable; default: slice)."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", help="Score column (repeatable; default: score)."),
    ] = None,
    mix: Annotated[
        str, typer.Option(help="Chosen slice weights: actual, equal, or a CSV/JSON mix file.")
    ] = "actual",
    traffic: Annotated[
        Path | None, typer.Option(help="Traffic shares (CSV slice,weight or JSON).")
    ] = None,
    confidence: Annotated[float, typer.Option(help="Interval coverage.")] = 0.95,
    interval: Annotated[
        Interval, typer.Option(help="Paired binary interval: newcombe (default) or wald.")
    ] = Interval.newcombe,
    scale: Annotated[
        str | None,
        typer.Option(help="Declared score scale LOW,HIGH; scores outside it are errors."),
    ] = None,
    list_limit: Annotated[
        int, typer.Option(help="How many moved cases to list per comparison (0 = all).")
    ] = 50,
    format: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here.")] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy", help="Also gate on this policy (TOML): verdict and exit code 0/1/3."
        ),
    ] = None,
) -> None:
    """Compare a baseline with candidates: per-slice paired deltas, standardized and pooled."""
    from evaldelta.compare import compare
    from evaldelta.engine import Source
    from evaldelta.report import render_json, render_markdown, render_text

    sources = [Source(Path(f)) for f in files or []]
    sources += [Source(path, arm=name) for name, path in _parse_arm_files(arm or [])]
    if not sources:
        raise UsageError("give at least one FILE, or --arm NAME=FILE for each arm")
    options: dict[str, Any] = {
        "baseline": baseline,
        "candidates": candidate or None,
        "by": tuple(by or ("slice",)),
        "mix": mix,
        "traffic": traffic,
        "confidence": confidence,
        "interval": interval.value,
        "scale": _parse_scale(scale),
        "list_limit": None if list_limit == 0 else list_limit,
    }
    if policy is not None:
        _compare_and_gate(sources, policy, metric, format, output, options)
        return
    with working("evaldelta: reading rows and reducing them in DuckDB..."):
        result = compare(sources, metrics=tuple(metric or ("score",)), **options)
    renderers = {
        Format.text: render_text,
        Format.json: render_json,
        Format.markdown: render_markdown,
    }
    _write(renderers[format](result), output)


def _compare_and_gate(
    sources: Sequence[Any],
    policy: Path,
    metric: list[str] | None,
    format: Format,
    output: Path | None,
    options: Mapping[str, Any],
) -> None:
    """``compare --policy``: the comparison, then the verdict; exit with the verdict's code."""
    from evaldelta.commands.gate import compare_with_policy
    from evaldelta.report import render_markdown, render_text
    from evaldelta.report.verdict import (
        render_verdict_json,
        render_verdict_markdown,
        render_verdict_text,
    )

    result, verdict = compare_with_policy(sources, policy, metrics=metric, **options)
    if format == Format.json:
        text = render_verdict_json(verdict, result)
    elif format == Format.markdown:
        text = render_markdown(result) + "\n" + render_verdict_markdown(verdict)
    else:
        text = render_text(result) + "\n" + render_verdict_text(verdict)
    _write(text, output)
    raise typer.Exit(verdict.exit_code)


@app.command("demo")
def demo_cmd(
    output_dir: Annotated[
        Path | None, typer.Option("--out", help="Also write each report as JSON here.")
    ] = None,
) -> None:
    """Print the comparisons for the seeds' worked scenarios (bundled data, offline)."""
    from evaldelta.demo import run_demo

    sys.stdout.write(run_demo(output_dir))


from evaldelta.commands import gate as _gate_commands  # noqa: E402
from evaldelta.commands import plan as _plan_commands  # noqa: E402

_gate_commands.register(app)
_plan_commands.register(app)


def main() -> None:
    """Entry point: run the app and map evaldelta's errors to one line and exit code 2."""
    try:
        app()  # typer's own usage errors exit with code 2 inside
    except EvaldeltaError as exc:
        typer.echo(f"evaldelta: error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()

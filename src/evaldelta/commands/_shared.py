"""What the commands share: option declarations, option parsing, writing output.

Every command that reads eval rows takes the same inputs (files, ``--arm NAME=FILE``,
``--baseline``, ``--candidate``, mixes, confidence, scale); declaring them once keeps their
help text and behaviour identical across ``compare``, ``gate`` and ``plan``.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evaldelta.engine import Source
from evaldelta.errors import UsageError

__all__ = [
    "ArmOpt",
    "BaselineOpt",
    "CandidateOpt",
    "ConfidenceOpt",
    "FilesArg",
    "Interval",
    "IntervalOpt",
    "MixOpt",
    "OutputOpt",
    "RunOpt",
    "ScaleOpt",
    "StoreOpt",
    "TrafficOpt",
    "inputs_from",
    "parse_arm_files",
    "parse_scale",
    "sources_from",
    "write_output",
]


class Interval(StrEnum):
    """Interval methods for paired binary data."""

    newcombe = "newcombe"
    wald = "wald"


FilesArg = Annotated[
    list[Path] | None, typer.Argument(help="CSV, JSONL or Parquet files with an arm column.")
]
ArmOpt = Annotated[
    list[str] | None, typer.Option("--arm", help="NAME=FILE: a file holding one arm.")
]
BaselineOpt = Annotated[
    str | None, typer.Option(help="The baseline arm (default: the first row's arm).")
]
CandidateOpt = Annotated[
    list[str] | None,
    typer.Option("--candidate", help="A candidate arm (repeatable; default: all others)."),
]
MixOpt = Annotated[
    str, typer.Option(help="Chosen slice weights: actual, equal, or a CSV/JSON mix file.")
]
TrafficOpt = Annotated[Path | None, typer.Option(help="Traffic shares (CSV slice,weight or JSON).")]
ConfidenceOpt = Annotated[float, typer.Option(help="Interval coverage.")]
IntervalOpt = Annotated[
    Interval, typer.Option(help="Paired binary interval: newcombe (default) or wald.")
]
ScaleOpt = Annotated[
    str | None,
    typer.Option(help="Declared score scale LOW,HIGH; scores outside it are errors."),
]
OutputOpt = Annotated[Path | None, typer.Option("-o", "--output", help="Write here.")]
StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="Read the attempts of a run store (evaldelta run)."),
]
RunOpt = Annotated[
    str | None,
    typer.Option("--run", help="The run to read from --store (id or prefix; default newest)."),
]


def parse_arm_files(values: list[str]) -> list[tuple[str, Path]]:
    """``--arm NAME=FILE`` values as (name, path) pairs."""
    out = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(f"--arm takes NAME=FILE, not {value!r}")
        out.append((name.strip(), Path(path.strip())))
    return out


def sources_from(files: list[Path] | None, arms: list[str] | None) -> list[Source]:
    """The input files: those with an arm column, then one file per ``--arm NAME=FILE``."""
    sources = [Source(Path(f)) for f in files or []]
    sources += [Source(path, arm=name) for name, path in parse_arm_files(arms or [])]
    return sources


def inputs_from(
    files: list[Path] | None, arms: list[str] | None, store: Path | None, run: str | None
) -> list[Source]:
    """Every input of a command: files, ``--arm NAME=FILE`` and a run of a ``--store``.

    A run that is not complete (stopped by ``--max-cost``, interrupted) is read as it stands,
    with a note on stderr.
    """
    sources = sources_from(files, arms)
    if store is not None:
        from evaldelta.store import resolve_run, run_status

        run_id = resolve_run(store, run)
        status = run_status(store, run_id)
        if status != "complete":
            typer.echo(
                f"evaldelta: note: run {run_id} is {status!r}; this comparison covers the "
                "attempts recorded so far (rerun the same `evaldelta run` to finish it)",
                err=True,
            )
        sources.append(Source(store, run=run_id))
    elif run is not None:
        raise UsageError("--run needs --store PATH")
    if not sources:
        raise UsageError("give at least one FILE, --arm NAME=FILE for each arm, or --store")
    return sources


def parse_scale(value: str | None) -> tuple[float, float] | None:
    """``--scale LOW,HIGH`` as a pair of floats with LOW < HIGH."""
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


def write_output(text: str, out: Path | None) -> None:
    """Write to standard output, or to a file (saying so on stderr)."""
    if out is None:
        sys.stdout.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}", err=True)

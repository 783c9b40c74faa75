"""What the commands share: option declarations, option parsing, writing output.

Every command that reads eval rows takes the same inputs (files, ``--arm NAME=FILE``,
``--baseline``, ``--candidate``, mixes, confidence, scale); declaring them once keeps their
help text and behaviour identical across ``compare``, ``gate`` and ``plan``. ``compare`` and
``gate`` share the whole set: each lists the declarations in its signature (typer reads
the options, and their order in ``--help``, from there), and :class:`RowOptions` turns them
into the library's keyword arguments, once for both.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evaldelta.errors import UsageError

if TYPE_CHECKING:  # the readers load in the commands that read: --help does not pay for them
    from evaldelta.comparison.model import Comparison
    from evaldelta.sources import ImportReport, ReadOptions, Source

__all__ = [
    "ArmOpt",
    "BaselineOpt",
    "CandidateOpt",
    "CaseKeyOpt",
    "ColumnsOpt",
    "ConfidenceOpt",
    "FilesArg",
    "FilterOpt",
    "Interval",
    "IntervalOpt",
    "MixOpt",
    "OrderOpt",
    "OutputOpt",
    "ReduceOpt",
    "RowOptions",
    "RunOpt",
    "ScaleOpt",
    "SequentialOpt",
    "StoreOpt",
    "StrictOpt",
    "TableOpt",
    "TrafficOpt",
    "announce_imports",
    "announce_warnings",
    "inputs_from",
    "inputs_or_table",
    "mix_option",
    "parse_arm_files",
    "parse_scale",
    "read_options",
    "sources_from",
    "write_output",
]


class Interval(StrEnum):
    """Interval methods for paired binary data."""

    newcombe = "newcombe"
    wald = "wald"


FilesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Row files (CSV, JSONL, Parquet), run stores or other tools' logs (Inspect AI, "
        "lm-eval, promptfoo, ...), as PATH (format recognized from the content) or FORMAT:PATH.",
        metavar="[[FORMAT:]PATH]...",
    ),
]
ArmOpt = Annotated[
    list[str] | None,
    typer.Option("--arm", help="NAME=[FORMAT:]PATH: a file or log holding one arm."),
]
ColumnsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--columns",
        help="Map a tidy file's own column names onto ours: case_id=id,arm=model,score=correct.",
    ),
]
CaseKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--case-key",
        help="Where an imported log's case id comes from (lm-eval doc.FIELD; promptfoo "
        "description, vars.NAME or metadata.NAME).",
    ),
]
FilterOpt = Annotated[
    str | None,
    typer.Option("--filter", help="lm-eval: the filter to read (default: each task's first)."),
]
StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Fail when an importer cannot map something (errored samples, unknown score "
        "values, repeats it must number) instead of counting and reporting it.",
    ),
]
BaselineOpt = Annotated[
    str | None, typer.Option(help="The baseline arm (default: the first row's arm).")
]
CandidateOpt = Annotated[
    list[str] | None,
    typer.Option("--candidate", help="A candidate arm (repeatable; default: all others)."),
]
MixOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mix",
        help="Chosen slice weights: actual (default), equal, or a CSV/JSON mix file; "
        "NAME=SPEC names one; repeatable: the mixes side by side, each standardized.",
    ),
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
ReduceOpt = Annotated[
    str,
    typer.Option(
        "--reduce",
        metavar="REDUCER",
        help="How a case's repeats become one value: mean, median, mode, max, min, "
        "at_least_K, pass_at_K, pass_K; auto: the logs' own (an Inspect log's epochs "
        "reducer), else mean.",
    ),
]
PassKOpt = Annotated[
    int | None,
    typer.Option(
        "--k",
        min=1,
        help="With repeated attempts: the k of pass@k and pass^k (default: the most attempts "
        "every arm has on a case).",
    ),
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
BackendOpt = Annotated[
    str,
    typer.Option(
        "--backend",
        help="Where the queries run: duckdb (embedded), spark (PySpark local mode, or a "
        "cluster through Spark Connect when SPARK_REMOTE is set), or an Ibis connection URL.",
    ),
]
SequentialOpt = Annotated[
    bool,
    typer.Option(
        "--sequential",
        help="Read the cases in the order they arrived (--order): every interval a "
        "confidence sequence, valid at any stopping time (for a rollout you monitor, or an "
        "eval you peeked at while it ran).",
    ),
]
OrderOpt = Annotated[
    str | None,
    typer.Option(
        "--order",
        metavar="COLUMN",
        help="With --sequential: the column giving each row's place in time (a sequence "
        "number, epoch seconds or an ISO 8601 time; default: the one of order, sequence, "
        "timestamp, created_at the rows have).",
    ),
]
TableOpt = Annotated[
    str | None,
    typer.Option(
        "--table",
        help="With --backend spark or a URL: the table there that holds the rows (the long "
        "row format), read in place instead of files.",
    ),
]


def parse_arm_files(values: list[str]) -> list[tuple[str, str]]:
    """``--arm NAME=[FORMAT:]PATH`` values as (name, path text) pairs."""
    out = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(f"--arm takes NAME=FILE, not {value!r}")
        out.append((name.strip(), path.strip()))
    return out


def sources_from(files: list[str] | None, arms: list[str] | None) -> list[Source]:
    """The inputs: those that name their own arms, then one per ``--arm NAME=[FORMAT:]PATH``."""
    from evaldelta.sources import parse_source

    sources = [parse_source(str(f)) for f in files or []]
    sources += [parse_source(path, arm=name) for name, path in parse_arm_files(arms or [])]
    return sources


def inputs_from(
    files: list[str] | None, arms: list[str] | None, store: Path | None, run: str | None
) -> list[Source]:
    """Every input of a command: files, ``--arm NAME=FILE`` and a run of a ``--store``.

    A run that is not complete (stopped by ``--max-cost``, interrupted) is read as it stands;
    the store's reader reports it (:func:`announce_imports` prints it).
    """
    from evaldelta.sources import Source

    sources = sources_from(files, arms)
    if store is not None:
        sources.append(Source(store, run=run, format="store"))
    elif run is not None:
        raise UsageError("--run needs --store PATH")
    if not sources:
        raise UsageError("give at least one FILE, --arm NAME=FILE for each arm, or --store")
    return sources


def inputs_or_table(
    files: list[str] | None,
    arms: list[str] | None,
    store: Path | None,
    run: str | None,
    table: str | None,
) -> list[Source]:
    """:func:`inputs_from`, or no inputs when ``--table`` names the rows on the backend."""
    if table is not None and not (files or arms or store):
        return []
    return inputs_from(files, arms, store, run)


def read_options(
    columns: list[str] | None = None,
    case_key: str | None = None,
    filter: str | None = None,
    strict: bool = False,
) -> ReadOptions:
    """The readers' options from the shared flags."""
    from evaldelta.sources import ReadOptions, parse_columns

    return ReadOptions(
        columns=parse_columns(columns), case_key=case_key, filter=filter, strict=strict
    )


def announce_imports(reports: tuple[ImportReport, ...]) -> None:
    """Say on stderr what each importer read and everything it could not map."""
    for report in reports:
        if report.format != "store":
            typer.echo(f"evaldelta: read {report.summary()}", err=True)
        for issue in report.issues:
            examples = f" (e.g. {', '.join(issue.examples)})" if issue.examples else ""
            count = f": {issue.count:,}" if issue.count != 1 else ""
            typer.echo(
                f"evaldelta: note: {report.path}: {issue.message}{count}{examples}", err=True
            )


def announce_warnings(result: Comparison) -> None:
    """Say on stderr what a reader of the report must not miss.

    Pins that differ between the arms, a slicing that cuts the cases to nothing, an interval
    method asked for where it fails.
    """
    from evaldelta.report._escape import term_text
    from evaldelta.report._facts import is_loud

    if result.pin_differences:
        keys = ", ".join(d.key for d in result.pin_differences)
        typer.echo(
            f"evaldelta: WARNING: the arms differ in pins beyond the release under test: {keys} "
            "(see the report; --allow-pin-diff KEY to accept)",
            err=True,
        )
    for check in (c for c in result.upstream if c.confounded):
        typer.echo(
            f"evaldelta: WARNING: {check.differing:,} of {check.compared:,} paired cases saw a "
            f"different {check.kind} between {check.baseline} and {check.candidate} beyond "
            f"their declared difference (see the report; --expect-change {check.kind} if "
            "intended)",
            err=True,
        )
    for note in result.notes:
        if is_loud(note):
            typer.echo(f"evaldelta: WARNING: {term_text(note)}", err=True)


def parse_scale(value: str | None) -> tuple[float, float] | None:
    """``--scale LOW,HIGH`` as a pair of floats with LOW < HIGH."""
    if value is None:
        return None
    lo, sep, hi = value.partition(",")
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        raise UsageError(f"--scale takes LOW,HIGH (for example 1,5), not {value!r}") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise UsageError(f"--scale takes two finite numbers LOW,HIGH, not {value!r}")
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


def mix_option(values: Sequence[str] | None) -> str | list[str]:
    """``--mix`` as the library takes it: one spec as a string (as before), several as a list."""
    if not values:
        return "actual"
    return values[0] if len(values) == 1 else list(values)


@dataclass(frozen=True)
class RowOptions:
    """The options ``compare`` and ``gate`` share, as the command received them.

    Each field is the parameter of the same name in both commands (declared with the
    ``*Opt`` aliases above); :meth:`of` picks them out of the command's parameters, and
    :meth:`sources` and :meth:`compare_kwargs` wire them the one way both commands use.
    """

    files: list[str] | None
    arm: list[str] | None
    baseline: str | None
    candidate: list[str] | None
    mix: list[str] | None
    traffic: Path | None
    confidence: float
    interval: Interval
    scale: str | None
    expect_change: list[str] | None
    store: Path | None
    run: str | None
    columns: list[str] | None
    case_key: str | None
    filter: str | None
    strict: bool
    backend: str
    table: str | None
    reduce: str
    sequential: bool
    order: str | None
    k: int | None

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> RowOptions:
        """The shared options out of a command's parameters (its ``locals()``), by name."""
        return cls(**{f.name: params[f.name] for f in fields(cls)})

    def sources(self) -> list[Source]:
        """The inputs: files, ``--arm``, ``--store`` (none when ``--table`` names the rows)."""
        return inputs_or_table(self.files, self.arm, self.store, self.run, self.table)

    def compare_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``compare`` (and ``compare_with_policy``) they set."""
        if self.order is not None and not self.sequential:
            raise UsageError(
                f"--order {self.order} is the arrival order of a sequential comparison: "
                "add --sequential"
            )
        return {
            "baseline": self.baseline,
            "candidates": self.candidate or None,
            "mix": mix_option(self.mix),
            "traffic": self.traffic,
            "confidence": self.confidence,
            "interval": self.interval.value,
            "scale": parse_scale(self.scale),
            "expected_changes": tuple(self.expect_change or ()),
            "read_options": read_options(self.columns, self.case_key, self.filter, self.strict),
            "backend": self.backend,
            "table": self.table,
            "reduce": self.reduce,
            "order": self.order,
            "sequential": self.sequential,
            "k": self.k,
        }

"""``evaldelta sample``: a stratified, seeded sample of a traffic log.

Three steps; the two passes over the file run in the engine
(:class:`evaldelta.engine._sample.TrafficScan`), so the log is never loaded into Python:

1. count rows per slice (after ``--since``), and find the first bad value if any;
2. here, allocate the sample over slices (:func:`evaldelta.planning.allocate`): a floor per
   slice (a smaller slice is taken whole), then the rest of ``total`` in proportion to traffic;
3. keep the ``n_k`` rows of each slice with the smallest ``md5(row key, seed)`` and write
   them to the output with ``sample_weight = N_k / n_k``; the traffic mix goes beside it.

A results file with several arms (an ``arm`` column) is sampled by case, not by row: all
arms' rows of a chosen case together, so every sampled case is paired (issue 24.6;
:mod:`evaldelta.engine._sample_cases`). Counts, floors, totals and weights are then cases.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.engine._sample import Band, StrataCount, TrafficScan
from evaldelta.errors import UsageError
from evaldelta.planning.allocation import allocate_counts
from evaldelta.sources import is_default, open_backend
from evaldelta.sources._errors import reading_errors
from evaldelta.sources.tidy import output_kind

__all__ = ["Band", "SampleResult", "StratumSample", "mix_path_for", "parse_band", "sample"]


@dataclass(frozen=True)
class StratumSample:
    """One slice: population units, sampled units, traffic share and sampling weight.

    The units are rows, or cases for a log with several arms (``SampleResult.unit``).
    """

    slice: str
    population: int
    sampled: int
    share: float
    weight: float
    taken_whole: bool


@dataclass(frozen=True)
class SampleResult:
    """What ``sample`` did: per slice counts and weights, and where the files went."""

    input: str
    output: str
    mix_file: str
    by: str
    seed: int
    floor: int
    total: int | None
    id_column: str | None
    since: str | None
    time_column: str | None
    bands: tuple[Band, ...]
    population: int
    sampled: int
    excluded_before_since: int
    excluded_no_time: int
    strata: tuple[StratumSample, ...]
    notes: tuple[str, ...] = ()
    unit: str = "row"  # "row", or "case": a log with several arms is sampled by case
    rows_population: int = 0  # rows kept (on or after --since), whatever the unit
    rows_sampled: int = 0  # rows written
    arms: int = 1  # arms in the rows kept (an arm column; 1 without one)


def parse_band(text: str) -> Band:
    """Parse ``COLUMN=EDGES`` (``input_tokens=0,500,2000,8000``); UsageError when malformed."""
    column, sep, rest = text.partition("=")
    if not sep or not column.strip() or not rest.strip():
        raise UsageError(
            f"--band takes COLUMN=EDGES (for example input_tokens=0,500), not {text!r}"
        )
    try:
        edges = tuple(float(e) for e in rest.split(","))
    except ValueError:
        raise UsageError(
            f"--band edges must be numbers separated by commas, not {rest!r}"
        ) from None
    if not all(math.isfinite(e) for e in edges) or any(
        b <= a for a, b in itertools.pairwise(edges)
    ):
        raise UsageError(f"--band edges must be finite and strictly increasing, not {rest!r}")
    return Band(column.strip(), edges)


def mix_path_for(output: Path) -> Path:
    """The mix file written beside ``output``: ``<stem>.mix.csv``."""
    return output.with_name(f"{output.stem}.mix.csv")


def _parse_since(since: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(since.strip())
    except ValueError:
        raise UsageError(
            f"--since takes a date or timestamp like 2026-11-01, not {since!r}"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


@reading_errors
def sample(
    input: str | Path | None,
    output: str | Path,
    *,
    by: str | None = None,
    floor: int = 300,
    total: int | None = None,
    seed: int = 0,
    id_column: str | None = None,
    bands: Sequence[Band] = (),
    since: str | None = None,
    time_column: str = "timestamp",
    backend: Any = None,
    table: str | None = None,
) -> SampleResult:
    """Draw a stratified sample from a traffic log and write it with sampling weights.

    Strata are the values of ``by`` (null is ``(missing)``), or a derived band column
    (``bands``; ``by`` defaults to the only band). Allocation: each slice gets
    ``min(floor, N_k)`` rows (a smaller slice is taken whole); with ``total``, the rest goes
    in proportion to traffic ``N_k / N`` (proportional allocation, Cochran 1977, section 5.3),
    capped at each slice's rows, integers by largest remainder
    (:func:`evaldelta.planning.allocate`). Within a slice rows are ranked by
    ``md5(row key, seed)`` and the first ``n_k`` kept, a simple random sample without
    replacement per stratum. Each row gets ``sample_weight = N_k / n_k`` (the inverse
    inclusion probability, Horvitz and Thompson 1952), so weights sum to ``N_k`` per slice;
    the traffic shares ``N_k / N`` go to ``<stem>.mix.csv`` beside ``output``. ``since``
    keeps rows whose ``time_column`` is on or after it (UTC; rows without a time are left
    out and counted). ``backend`` is where the ranking runs: ``None``/``"duckdb"``, ``"spark"``, an
    Ibis URL or connection; the file is read on DuckDB and its prepared rows moved there
    once (:mod:`evaldelta.engine._sample`). The rank is an MD5, so every backend draws the
    same sample. ``table`` (with ``input=None``): the log is that table of ``backend``, read
    in place; it needs ``id_column``, unique among the rows kept, and the sample is written
    in the order of the ids' text (a table's rows have no order of their own).
    """
    out = Path(output)
    out_kind = output_kind(out)
    if isinstance(floor, bool) or floor < 0:
        raise UsageError(f"--floor must be a non-negative number of rows, not {floor}")
    if total is not None and total < 1:
        raise UsageError(f"--total must be a positive number of rows, not {total}")
    if by is None:
        if len(bands) != 1:
            raise UsageError("give --by COLUMN (or exactly one --band to slice by)")
        by = bands[0].name
    name = _input_name(input, table, backend, out)
    since_at = _parse_since(since) if since is not None else None
    con = None if is_default(backend) else open_backend(backend)
    path = None if input is None else Path(input)
    with TrafficScan(path, con, table) as scan:
        counted = scan.count_strata(by, tuple(bands), id_column, since_at, time_column)
        sizes, notes = _allocate(name, counted, floor, total, since, time_column)
        written = scan.write_sample(
            out, out_kind, sizes, counted.kept, tuple(bands), id_column, seed
        )
    result = _result(name, out, counted, sizes, notes, by, floor, total, seed,
                     id_column, tuple(bands), since_at, time_column)  # fmt: skip
    return dataclasses.replace(result, rows_sampled=written)


def _input_name(input: str | Path | None, table: str | None, backend: Any, out: Path) -> str:
    """What the log is called in messages and the report: its path, or the table's name."""
    if table is not None:
        if input is not None:
            raise UsageError("give either a traffic file or --table NAME, not both")
        if is_default(backend):
            raise UsageError("--table NAME reads a table of --backend spark or an Ibis URL")
        return table
    if input is None:
        raise UsageError("give a traffic file (or --backend URL --table NAME)")
    if out.resolve() == Path(input).resolve():
        raise UsageError(f"the output {out} would overwrite the input")
    return str(input)


def _allocate(
    path: str,
    counted: StrataCount,
    floor: int,
    total: int | None,
    since: str | None,
    time_column: str,
) -> tuple[dict[str, int], list[str]]:
    """Rows per slice: the floor (a smaller slice whole), then ``total`` by traffic."""
    population = counted.kept
    if not population:
        raise UsageError(
            f"{path}: no rows to sample"
            + (f" on or after {since} in column {time_column!r}" if since else "")
        )
    names = sorted(population)
    if total is None:
        return {k: min(floor, population[k]) for k in names}, []
    sizes, notes = allocate_counts(
        {k: float(population[k]) for k in names},
        dict.fromkeys(names, 1.0),
        total,
        floor,
        available=population,
    )
    return sizes, list(notes)


def _result(
    path: str,
    out: Path,
    counted: StrataCount,
    sizes: dict[str, int],
    notes: list[str],
    by: str,
    floor: int,
    total: int | None,
    seed: int,
    id_column: str | None,
    bands: tuple[Band, ...],
    since_at: dt.datetime | None,
    time_column: str,
) -> SampleResult:
    """Write the mix file beside the sample and describe what was drawn."""
    population = counted.kept
    n_all = sum(population.values())
    strata = []
    for k in sorted(population):
        n, pop = sizes[k], population[k]
        if n == 0:
            notes.append(f"slice {k!r} has no sampled {counted.unit}s; it cannot be reweighted")
        strata.append(StratumSample(k, pop, n, pop / n_all, pop / n if n else math.nan, n >= pop))
    mix = mix_path_for(out)
    with mix.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["slice", "weight"])
        writer.writerows([s.slice, repr(s.share)] for s in strata)
    unit = counted.unit
    whole = [s.slice for s in strata if s.taken_whole and s.population < floor]
    if whole:
        notes.append(
            f"taken whole (fewer than {floor} {unit}s): {', '.join(whole)}; their intervals "
            "will be wider than the floor was meant to give"
        )
    if unit == "case":
        key = id_column or "case_id"
        notes.insert(
            0,
            f"the log holds {counted.arms} arms, so sample drew whole cases (by {key}): every "
            "arm's rows of a chosen case together, so each sampled case is paired; floors, "
            "totals and weights count cases",
        )
    return SampleResult(
        input=str(path),
        output=str(out),
        mix_file=str(mix),
        by=by,
        seed=seed,
        floor=floor,
        total=total,
        id_column=id_column,
        since=since_at.isoformat() if since_at is not None else None,
        time_column=time_column if since_at is not None else None,
        bands=bands,
        population=n_all,
        sampled=sum(sizes.values()),
        excluded_before_since=counted.before_since,
        excluded_no_time=counted.no_time,
        strata=tuple(strata),
        notes=tuple(notes),
        unit=unit,
        rows_population=counted.rows,
        arms=counted.arms,
    )

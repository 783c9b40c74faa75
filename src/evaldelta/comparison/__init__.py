"""Compare a baseline arm with candidates: the library's main entry point.

``compare(["runs.parquet"], baseline="v1")`` reads the inputs through the row seam
(:mod:`evaldelta.sources`), gathers every number in one engine phase
(:func:`evaldelta.engine.evidence.gather`) and builds the
:class:`~evaldelta.comparison.model.Comparison` from that evidence without touching the data again
(:func:`evaldelta.comparison._build.build`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaldelta.comparison._build import Options, build
from evaldelta.comparison._mixes import MixArg, named_mixes
from evaldelta.comparison.model import Comparison
from evaldelta.comparison.upstream import check_kinds
from evaldelta.errors import UsageError
from evaldelta.evidence import CriticalSelector, Evidence, Request
from evaldelta.sources._errors import reading_errors
from evaldelta.sources._mix import MixFile, MixInput, fit_mix, load_mix, read_mixes
from evaldelta.sources._pins import display_path
from evaldelta.stats._reducers import Reducer

if TYPE_CHECKING:
    from evaldelta.sources import ReadOptions, Source, TableSet

__all__ = ["Evidence", "Options", "Request", "build", "compare"]

INTERVALS = ("newcombe", "wald")


def _sources(files: Sequence[Source | str | Path]) -> list[Source]:
    from evaldelta.sources import Source, parse_source

    return [f if isinstance(f, Source) else parse_source(str(f)) for f in files]


@reading_errors
def compare(
    files: Sequence[Source | str | Path],
    *,
    baseline: str | None = None,
    candidates: Sequence[str] | None = None,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    mix: MixArg = "actual",
    traffic: str | Path | None = None,
    confidence: float = 0.95,
    interval: str = "newcombe",
    scale: tuple[float, float] | None = None,
    list_limit: int | None = 50,
    critical: CriticalSelector | None = None,
    allowed_pin_differences: Sequence[str] = (),
    expected_changes: Sequence[str] = (),
    allowed_upstream_changes: Sequence[str] = (),
    three_arm: Sequence[str] | None = None,
    read_options: ReadOptions | None = None,
    backend: Any = None,
    table: str | None = None,
    reduce: str = "auto",
    order: str | None = None,
    sequential: bool = False,
    k: int | None = None,
) -> Comparison:
    """Compare a baseline arm with one or more candidates; see the README for what is reported.

    ``files`` are anything the row seam reads (:mod:`evaldelta.sources`): CSV, JSONL or
    Parquet in the long row format, a run store, or another tool's log (Inspect AI,
    lm-evaluation-harness, promptfoo, ...), as paths, ``FORMAT:PATH`` strings or
    :class:`Source` objects (which can name the arm a file holds). ``metrics`` default to
    the first source's (``score`` for tidy files, an importer's own otherwise);
    ``read_options`` are passed to the readers (column mapping, case key, filter, strict).
    ``mix`` is ``actual``, ``equal``, a mix file, or several: :mod:`evaldelta.sources._mix`;
    ``traffic`` an optional traffic file whose weights give a second standardized result;
    without one, a ``sample_weight`` column (written by ``evaldelta sample``) gives the
    traffic mix: each slice's sum of weights estimates its traffic (Horvitz-Thompson).
    ``critical`` selects critical cases (ids, a flag column, a tag): each pair then carries
    their attempts and passes (:class:`~evaldelta.comparison.model.CriticalEvidence`) for the gate.
    ``three_arm`` names the (always-cheap, cascade, always-strong) arms of a cascade run: the
    comparison then carries a :class:`~evaldelta.comparison.model.ThreeArmSummary` on the first
    metric and slicing column. Without it, the roles are read from a run store's pins when a
    compared cascade arm's cheap and strong steps are compared arms too.
    ``expected_changes`` / ``allowed_upstream_changes``: upstream kinds (``prompt``,
    ``payload``, ``retrieval``) the arms declare / a policy allows (:mod:`.upstream`).
    ``backend`` is where the queries run: ``None``/``"duckdb"`` (embedded), ``"spark"``, an
    Ibis connection URL or an Ibis connection; the files are read on DuckDB and their rows
    moved there once. With ``table``, the rows are that backend's table instead of files
    (:mod:`evaldelta.sources._backend`).
    ``reduce``: how a case's repeats become one value (:func:`resolve_reducer`).
    ``order`` (or ``sequential``: the column named ``order``, ``sequence``, ``timestamp`` or
    ``created_at``; numbers or times): every interval a confidence sequence over the cases in
    that order, valid at any stopping time (:mod:`evaldelta.comparison.sequential`).
    ``k``: with repeated attempts, the k of pass@k and pass^k (default: the largest number
    of attempts every compared arm has on some case; :mod:`.comparison._reliability`).
    ``by``: the slicing columns (default ``slice``; rows without one are one slice, ``all``,
    and the comparison's notes say so, naming columns that look like slicing columns).
    """
    from evaldelta.engine.evidence import gather  # the queries: loaded when they run

    _check_options(interval, list_limit, confidence)
    declared = _declared(allowed_pin_differences, expected_changes, allowed_upstream_changes,
                         by_given=bool(by), k=k)  # fmt: skip
    by = tuple(by or ()) or ("slice",)
    tables = _read(files, backend, table, slice_columns=by,
                   metrics=tuple(metrics) if metrics else None,
                   critical_column=critical.column if critical else None,
                   critical_tag=critical.tag if critical else None, options=read_options,
                   order=order, find_order=sequential and order is None)  # fmt: skip
    reducer, declared["reducer_chosen_by"] = resolve_reducer(reduce, tables)
    mixes = read_mixes(mix)  # the files are read with the rows, before any query
    traffic_file = (Path(traffic), load_mix(Path(traffic))) if traffic else None
    request = Request(baseline=baseline, candidates=candidates, by=by, scale=scale,
                      list_limit=list_limit, critical=critical, three_arm=three_arm,
                      reducer=reducer, order=tables.order)  # fmt: skip
    evidence = gather(tables, request)
    chosen = _options(evidence, mixes, traffic_file, confidence, interval)
    return build(evidence, dataclasses.replace(chosen, **declared))


def resolve_reducer(reduce: str, tables: TableSet) -> tuple[Reducer | None, str]:
    """The reducer of repeats to use, and why: ``--reduce``, the logs' own, or the default.

    ``mean`` (the case mean), ``median``, ``mode``, ``max``, ``min``, ``at_least_K``,
    ``pass_at_K`` or ``pass_K`` (:mod:`evaldelta.stats._reducers`). With ``auto``, the
    reducer the sources' tools record (an Inspect log's epochs reducer) is used when they
    agree; logs that reduce differently need ``--reduce`` to choose.
    """
    from evaldelta.stats._reducers import parse_reducer

    if reduce != "auto":
        try:
            return parse_reducer(reduce), "--reduce"
        except ValueError as exc:
            raise UsageError(f"--reduce: {exc}") from None
    tools = {r.path: r.reducer for r in tables.reports if r.reducer}
    if len(set(tools.values())) > 1:
        shown = "; ".join(f"{path}: {name}" for path, name in tools.items())
        raise UsageError(
            f"the logs reduce repeats differently ({shown}); choose one with --reduce "
            "(mean, max, ...)"
        )
    several = sorted({n for v in tools.values() for n in v.split("+")})
    if len(several) > 1:
        raise UsageError(
            f"the logs reduce repeats differently ({', '.join(several)}); choose one with --reduce"
        )
    if tools:
        name = next(iter(tools.values()))
        try:
            return parse_reducer(name), "the logs' own"
        except ValueError:
            return None, f"the default: the logs' reducer {name!r} is not one evaldelta applies"
    return None, "default"


def _options(
    evidence: Evidence,
    mix: tuple[MixInput, ...],
    traffic: tuple[Path, MixFile] | None,
    confidence: float,
    interval: str,
) -> Options:
    """The interval, the mixes and the traffic weights, fitted to the data's slices.

    The files were read before the queries ran; nothing is read here.
    """
    slices = set(evidence.slice_names)
    mixes = named_mixes(mix, list(evidence.slice_names))
    return Options(
        confidence=confidence,
        interval=interval,
        mix=mixes[0].name,
        mixes=mixes,
        traffic=(
            fit_mix(traffic[1], slices, complete=True, label="the traffic mix (--traffic)")
            if traffic is not None
            else None
        ),
        traffic_label=display_path(traffic[0]) if traffic is not None else None,
    )


def _declared(
    allowed_pin_differences: Sequence[str],
    expected_changes: Sequence[str],
    allowed_upstream_changes: Sequence[str],
    *,
    by_given: bool,
    k: int | None,
) -> dict[str, Any]:
    """The :class:`Options` the caller declares, checked."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise UsageError(f"--k takes a number of attempts >= 1, not {k!r}")
    return {
        "allowed_pin_differences": tuple(allowed_pin_differences),
        "expected_changes": check_kinds(expected_changes),
        "allowed_upstream_changes": check_kinds(allowed_upstream_changes, "[upstream] allow"),
        "by_given": by_given,
        "pass_k": k,
    }


def _check_options(interval: str, list_limit: int | None, confidence: float) -> None:
    if interval not in INTERVALS:
        raise UsageError(f"unknown interval {interval!r}; choose one of {', '.join(INTERVALS)}")
    if list_limit is not None and (isinstance(list_limit, bool) or list_limit < 0):
        raise UsageError(f"--list-limit takes a number of cases >= 0 (0 = all), not {list_limit}")
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must lie strictly between 0 and 1, not {confidence}")


def _read(
    files: Sequence[Source | str | Path], backend: Any, table: str | None, **kwargs: Any
) -> TableSet:
    """The canonical relation on ``backend``: files read on DuckDB and moved, or its table."""
    from evaldelta.sources import (
        ORDER_NAMES,
        ReadOptions,
        Source,
        is_default,
        move_rows,
        open_backend,
        read_sources,
    )

    options = kwargs.pop("options", None) or ReadOptions()
    # a run store joins in the attempt columns its view lacks when they are asked for
    order, find = kwargs.get("order"), kwargs.get("find_order", False)
    wanted = (order,) if order else ORDER_NAMES if find else ()
    kwargs["options"] = dataclasses.replace(options, outputs_on_demand=True, wanted=wanted)

    if table is not None and is_default(backend):
        raise UsageError("--table NAME reads a table of --backend spark or an Ibis URL")
    if table is not None and files:
        raise UsageError("give either input files or --table NAME, not both")
    con = None if is_default(backend) else open_backend(backend)  # a bad one fails first
    if table is not None:
        return read_sources([Source(Path(table), format="table")], con=con, **kwargs)
    tables = read_sources(_sources(files), **kwargs)
    return tables if con is None else move_rows(tables, con)

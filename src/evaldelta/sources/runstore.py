"""A run of the run store (``evaldelta run``): its ``eval_rows`` view, attached read-only.

The store is a DuckDB file (recognized by DuckDB's magic bytes ``DUCK`` at offset 8), so
``evaldelta compare runs.duckdb`` reads its newest run, and ``--store PATH --run ID`` a
chosen one. Each arm's pins come from the store's ``run_arms`` table and the run's own
free-form pins (``[pins]``) under ``run.``; a run that did not finish is reported.

The view holds the attempts' usual columns; a column of the ``attempts`` table it lacks
(``finished_at``, a ``sequence`` number) is joined in when the caller wants it
(:attr:`ReadOptions.wanted`: ``--order sequence``), so any column of an attempt can be named.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import Location, UnreadableFileError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder, build_report
from evaldelta.sources._source import ReadOptions, Source

__all__ = ["StoreReader"]


@register
class StoreReader(Reader):
    """A run store: one run's attempts in the long row format."""

    name = "store"
    title = "evaldelta run store (DuckDB file written by `evaldelta run`)"

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """DuckDB's database files carry ``DUCK`` at byte 8."""
        return head[8:12] == b"DUCK"

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Attach the store read-only and select one run of ``eval_rows``."""
        from evaldelta.sources._pins import run_store_pins
        from evaldelta.store import configured_arms, resolve_run, run_status

        path = source.path
        if not path.exists():
            raise UnreadableFileError("the run store does not exist", Location(str(path)))
        run_id = resolve_run(path, source.run)  # the store refuses a folder, a device, ...
        status = run_status(path, run_id)
        resolved = str(path.resolve())
        alias = "evaldelta_store_" + hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:10]
        quoted = resolved.replace("'", "''")
        con.raw_sql(f"ATTACH IF NOT EXISTS '{quoted}' AS {alias} (READ_ONLY)")
        view = con.table("eval_rows", database=(alias, "main"))
        table = _with_attempt_columns(
            con, alias, view.filter(view.run_id == run_id), run_id, options.wanted
        )
        pins = run_store_pins(path, run_id)
        builder = ReportBuilder("store", str(path), "evaldelta run", strict=options.strict)
        builder.mapped.append(f"run {run_id} ({status}) from the store's eval_rows view")
        if status != "complete":
            builder.issue(
                "incomplete_run",
                f"run {run_id} is {status!r}; this comparison covers the attempts recorded so "
                "far (rerun the same `evaldelta run` to finish it)",
            )
        report = build_report(builder, table, pins, ("score",))
        pinned = Source(path, arm=source.arm, run=run_id, format="store")
        order = configured_arms(path, run_id)

        def locate(conditions: Mapping[str, object], field: str) -> Location:
            return _locate(pinned, conditions, field)

        return Opened(
            source=pinned,
            table=table,
            locate=locate,
            unit="row",
            pins=pins,
            reports=(report,),
            arm_order=order,
        )


_KEYS = ("run_id", "arm", "case_id", "repeat")  # an attempt's key in the store


def _with_attempt_columns(
    con: Any, alias: str, table: Any, run_id: str, wanted: tuple[str, ...]
) -> Any:
    """``table`` (the run's view rows) with the ``wanted`` attempt columns the view lacks."""
    if not wanted:
        return table
    attempts = con.table("attempts", database=(alias, "main"))
    extra = [c for c in dict.fromkeys(wanted) if c in attempts.columns and c not in table.columns]
    if not extra:
        return table
    mine = attempts.filter(attempts.run_id == run_id)
    mine = mine.select(**{f"_key_{k}": mine[k] for k in _KEYS}, **{c: mine[c] for c in extra})
    joined = table.left_join(mine, [table[k] == mine[f"_key_{k}"] for k in _KEYS])
    return joined.select(*table.columns, *extra)


def _locate(source: Source, conditions: Mapping[str, object], field: str) -> Location:
    """A stored attempt is found by its key: name it (run, arm, case, repeat)."""
    shown = {k: v for k, v in conditions.items() if k in ("arm", "case_id", "repeat")}
    where = ", ".join(f"{k} {v!r}" for k, v in shown.items())
    label = f"{source.path} (run {source.run}{', ' + where if where else ''})"
    return Location(label, None, field, conditions.get(field))

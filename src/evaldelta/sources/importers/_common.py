"""What every importer shares: turning collected rows into an :class:`Opened` source.

Each imported row carries ``_where`` (the sample, line or result it came from, as a person
would find it in the log) and, for line-based logs, ``_line``; :func:`imported` builds the
locate function from them, so a later check names the log and the sample, never a
temporary file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaldelta.errors import Location
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._pins import flatten_pins
from evaldelta.sources._registry import Opened
from evaldelta.sources._report import ReportBuilder, build_report
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import Source
from evaldelta.sources._values import as_text

__all__ = ["as_mapping", "imported", "scalar_text", "upstream_columns"]


def as_mapping(value: Any) -> Mapping[str, Any]:
    """A log's value when it is an object, else an empty one (logs are not to be trusted)."""
    return value if isinstance(value, Mapping) else {}


def upstream_columns(prompt: Any = None, payload: Any = None) -> dict[str, str]:
    """``prompt_hash`` and ``rendered_prompt`` (a string or chat messages), ``payload_hash``.

    The hashes are :mod:`evaldelta.sources.hashes`'s, so a log's arms compare with a run store's.
    A value the log does not carry (None, an empty prompt, a payload that is no object) is
    left out: compare then says the hash is not recorded rather than seeing a difference.
    """
    from evaldelta.sources.hashes import payload_hash, prompt_hash, prompt_text

    out: dict[str, str] = {}
    if isinstance(prompt, str | list) and prompt:
        out["prompt_hash"] = prompt_hash(prompt)
        out["rendered_prompt"] = prompt_text(prompt)
    if isinstance(payload, Mapping):
        out["payload_hash"] = payload_hash(payload)
    return out


def scalar_text(value: Any) -> str | None:
    """A metadata value as slice text: scalars as written, anything else as compact JSON."""
    import json

    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def imported(
    source: Source,
    con: Any,
    writer: RowWriter,
    builder: ReportBuilder,
    *,
    pins: Mapping[str, Mapping[str, Any]],
    default_metrics: Sequence[str],
    unit: str = "sample",
    unscored: str | None = None,
) -> Opened:
    """The :class:`Opened` of an importer: rows on ``con``, the report, pins per arm.

    ``unscored`` is the tool's own advice for a log that holds no scores at all (no scorer
    ran): the report says so at import, and ``compare`` repeats it instead of naming a
    missing column.
    """
    table = writer.open(con, source.path)
    if not writer.metrics:
        builder.issue(
            "no_scores",
            "the log holds no scores: " + (unscored or "score its outputs with `evaldelta score`"),
        )
    report = build_report(
        builder, table, pins, tuple(default_metrics), tuple(writer.metrics), source.arm
    )
    path = str(source.path)

    def locate(conditions: Mapping[str, object], field: str) -> Location:
        pred = None
        for name, value in conditions.items():
            if name not in table.columns or (name == "arm" and source.arm is not None):
                continue
            col = as_text(table[name]).strip()
            clause = col.isnull() if value is None else (col == str(value).strip())
            pred = clause if pred is None else (pred & clause)
        query = table if pred is None else table.filter(pred)
        cols = [c for c in ("_where", "_line") if c in table.columns]
        hit = fetch_rows(query.select(*cols).limit(1)) if cols else []
        if not hit:
            return Location(path, None, field, conditions.get(field))
        line = hit[0].get("_line")
        where = hit[0].get("_where")
        label = f"{path} ({where})" if where and line is None else path
        return Location(label, int(line) if line is not None else None, field,
                        conditions.get(field), unit="line")  # fmt: skip

    flat = {arm: flatten_pins(p) for arm, p in pins.items()}
    return Opened(
        source=source,
        table=table,
        locate=locate,
        unit=unit,
        pins=flat,
        reports=(report,),
        default_metrics=tuple(default_metrics),
        arm_order=(source.arm,) if source.arm is not None else tuple(writer.arms),
    )

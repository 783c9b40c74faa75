"""Row-level, bounded: the stored ``output`` text of a few listed cases, for side-by-side views.

Only the cases a comparison already lists (the discordant cases, up to ``--list-limit``) are
looked up, so the query touches a bounded number of rows whatever the input size. Each
source's table is queried again in place (DuckDB reads only the matching rows into Python).
"""

from __future__ import annotations

from collections.abc import Sequence

import ibis

from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._values import as_text

__all__ = ["case_outputs"]


def case_outputs(
    tables: TableSet, arms: Sequence[str], case_ids: Sequence[str], *, max_chars: int
) -> dict[tuple[str, str], str]:
    """Map ``(case_id, arm)`` to that arm's output on the case (its lowest repeat).

    Sources without an ``output`` column contribute nothing, unless their reader fetches
    outputs on demand (an Inspect log read from its sample summaries); an empty result means
    no source stores outputs. Texts longer than ``max_chars`` are cut and end in ``[...]``.
    """
    if not case_ids:
        return {}
    wanted_ids = sorted(set(case_ids))
    found: dict[tuple[str, str], tuple[int, str]] = {}
    for opened in tables.opened:
        source, table = opened.source, opened.table
        if opened.fetch_outputs is not None:  # a reader that left (some) outputs in the log
            for key, text in opened.fetch_outputs(wanted_ids, list(arms), max_chars).items():
                found.setdefault(key, (0, text))
        if "output" not in table.columns:
            continue
        arm = ibis.literal(source.arm) if source.arm is not None else as_text(table.arm)
        repeat = (
            as_text(table["repeat"]).strip().try_cast("int64").fill_null(0)
            if "repeat" in table.columns
            else ibis.literal(0, type="int64")
        )
        rows = fetch_rows(
            table.select(
                case_id=as_text(table.case_id),
                arm=arm,
                repeat=repeat,
                output=as_text(table.output).substr(0, max_chars + 1),
            ).filter(lambda t: t.case_id.isin(wanted_ids) & t.arm.isin(list(arms)))
        )
        for row in rows:
            if row["output"] is None:
                continue
            key = (str(row["case_id"]), str(row["arm"]))
            rep = int(row["repeat"])
            if key not in found or rep < found[key][0]:
                found[key] = (rep, str(row["output"]))
    return {key: _cut(text, max_chars) for key, (_, text) in found.items()}


def _cut(text: str, max_chars: int) -> str:
    return text[:max_chars] + " [...]" if len(text) > max_chars else text

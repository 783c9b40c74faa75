"""One builder for the long rows tests feed evaldelta: one row per attempt, one column each.

The design's columns are ``case_id``, ``slice``, ``arm``, ``repeat`` and ``score``, then any
extra column (``cost_usd``, ``output``, ``critical``, ``metadata.*``...). Tests used to spell a
CSV header by hand and join f-strings under it, each in its own shape; here a test states its
rows (dicts, or tuples under named columns) and the builder writes them. The column order is
the one the test gives, so the bytes are what the hand-written lines were: a test about the
order of columns, or about a header the design does not use, says it by its columns.

Files that are wrong on purpose (a missing column, a truncated line, a blank id) stay written
by hand in their tests: the bytes are the point there.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

Row = Mapping[str, object] | Sequence[object]


def _names(rows: Sequence[Row], columns: str | Sequence[str] | None) -> list[str]:
    if isinstance(columns, str):
        return columns.split(",")
    if columns is not None:
        return list(columns)
    # every key any row holds, in the order first seen (csv.DictWriter's header)
    return list(dict.fromkeys(k for row in rows if isinstance(row, Mapping) for k in row))


def csv_text(
    rows: Iterable[Row], columns: str | Sequence[str] | None = None, *, eol: str = "\n"
) -> str:
    """The header and one line per row; a dict row leaves a column it lacks empty.

    ``columns`` is a list or a comma-separated header; without it, the keys of the dict rows
    in the order they first appear. A tuple row is written as it is, under ``columns``.
    ``eol`` is "\\r\\n" for a file csv.writer would have written with its defaults.
    """
    rows = list(rows)
    names = _names(rows, columns)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=eol)
    writer.writerow(names)
    for row in rows:
        if isinstance(row, Mapping):
            writer.writerow(["" if row.get(n) is None else row[n] for n in names])
        else:
            writer.writerow(row)
    return buf.getvalue()


def write_rows(
    path: Path, rows: Iterable[Row], columns: str | Sequence[str] | None = None, *, eol: str = "\n"
) -> Path:
    """Write :func:`csv_text` to ``path`` (UTF-8) and return the path."""
    path.write_bytes(csv_text(rows, columns, eol=eol).encode("utf-8"))
    return path


def paired(
    pairs: Iterable[tuple[object, object]],
    *,
    arms: Sequence[str] = ("base", "cand"),
    slice: str | None = None,
    case: str = "c{i}",
    start: int = 0,
    extra: Mapping[str, Mapping[str, object]] | None = None,
) -> list[dict[str, object]]:
    """Rows for paired cases: per (baseline score, candidate score), the baseline's row first.

    Every arm after the first takes the candidate's score. ``case`` is formatted with the
    pair's number ``i`` (counted from ``start``) and the ``slice``; the columns are
    case_id, arm, slice (when given), score, then ``extra[arm]``'s columns.
    """
    out: list[dict[str, object]] = []
    for i, (base, cand) in enumerate(pairs, start=start):
        for n, arm in enumerate(arms):
            row: dict[str, object] = {"case_id": case.format(i=i, slice=slice), "arm": arm}
            if slice is not None:
                row["slice"] = slice
            row["score"] = base if n == 0 else cand
            row.update((extra or {}).get(arm, {}))
            out.append(row)
    return out

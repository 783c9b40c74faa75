"""The order column of a sequential comparison (``--sequential [--order COLUMN]``).

Cases are read in the order they arrived: a sequence number, epoch seconds, or a time. The
canonical relation carries the column as ``_order`` (a float: the number itself, or a time
as seconds since 1970-01-01 UTC, to the microsecond), ``_bad_order`` (a value that is not
blank and is neither a finite number nor a time) and ``_raw_order`` (the text, for the
message that names it). Times are read the same on any session time zone: an ISO 8601 text
with an offset (``Z``, ``+02:00``) is that instant; one without, a date, or a time column
without a zone is read as UTC.

Without ``--order`` the column is the one of :data:`ORDER_NAMES` the rows have, when they
have exactly one (:func:`choose_order`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ibis
import ibis.expr.datatypes as dt

from evaldelta.errors import UsageError
from evaldelta.sources._values import as_text, not_finite, not_finite_row

if TYPE_CHECKING:
    import ibis.expr.types as ir

    from evaldelta.sources._registry import Opened

__all__ = ["ORDER_NAMES", "choose_order", "order_columns"]

ORDER_NAMES = ("order", "sequence", "timestamp", "created_at")
# name parts of columns that could serve as an order (named in the error when none is found)
_LOOKS = {"time", "timestamp", "date", "datetime", "seq", "sequence", "order", "created",
          "started", "finished", "ended", "at", "step", "index", "idx", "position", "ts",
          "epoch", "arrival", "arrived", "submitted", "logged"}  # fmt: skip
# a text time with an offset: HH:MM, optional seconds and fraction, then Z or +HH[:MM]
_OFFSET = r"[0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?\s*([zZ]|[+-][0-9]{2}(:?[0-9]{2})?)$"
_MICROS = 1_000_000.0


def choose_order(opened: Sequence[Opened], known: Sequence[str]) -> str:
    """The order column ``--sequential`` reads when ``--order`` names none.

    The one of :data:`ORDER_NAMES` the sources have; none or several is a usage error that
    names the columns that could serve (``known``: the long row format's own columns,
    which never do).
    """
    columns = list(dict.fromkeys(c for o in opened for c in o.table.columns))
    found = [name for name in ORDER_NAMES if name in columns]
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(
            f"--sequential: the rows have several order columns ({', '.join(found)}); "
            f"name the one to read cases by with --order {found[0]}"
        )
    could = [c for c in columns if c not in known and _looks_like_order(opened, c)]
    named = " or ".join([", ".join(ORDER_NAMES[:-1]), ORDER_NAMES[-1]])
    serve = (
        f"columns that could serve: {', '.join(could[:10])} (--order {could[0]})"
        if could
        else f"no column looks like one (columns: {', '.join(columns[:30])})"
    )
    raise UsageError(
        f"--sequential reads the cases in the order they arrived, but the rows have no "
        f"column named {named}; name one with --order COLUMN: {serve}"
    )


def _looks_like_order(opened: Sequence[Opened], column: str) -> bool:
    """A time-typed column, or one whose name reads like a time or a sequence number."""
    parts = set(re.split(r"[^a-z0-9]+", column.lower()))
    if parts & _LOOKS:
        return True
    for o in opened:
        if column in o.table.columns:
            dtype = o.table[column].type()
            if dtype.is_timestamp() or dtype.is_date():
                return True
    return False


def order_columns(col: ir.Value) -> dict[str, ir.Value]:
    """``_order``, ``_bad_order`` and ``_raw_order`` of one source's order column."""
    dtype = col.type()
    raw = as_text(col)
    if dtype.is_timestamp() or dtype.is_date():
        value = _seconds(col.cast(dt.Timestamp(timezone=getattr(dtype, "timezone", None))))
        return {"_order": value, "_bad_order": ibis.literal(False), "_raw_order": raw}
    if dtype.is_numeric() and not dtype.is_boolean():
        number = col.cast("float64")
        # tested on the text: a filter on it is not skipped by a Parquet file's min/max
        bad = not_finite_row(number).fill_null(False)
        return {
            "_order": ibis.ifelse(bad, ibis.null("float64"), number),
            "_bad_order": bad,
            "_raw_order": raw,
        }
    text = raw.strip()
    number = text.try_cast("float64")
    number = ibis.ifelse(not_finite(number).fill_null(False), ibis.null("float64"), number)
    offset = text.re_search(_OFFSET).fill_null(False)
    zoned = _seconds(text.try_cast(dt.Timestamp(timezone="UTC")))
    naive = _seconds(text.try_cast(dt.Timestamp()))
    value = number.coalesce(ibis.ifelse(offset, zoned, naive))
    blank = text.isnull() | (text == "")
    return {"_order": value, "_bad_order": ~blank & value.isnull(), "_raw_order": raw}


def _seconds(ts: ir.TimestampValue) -> ir.FloatingValue:
    """Seconds since 1970-01-01 UTC, to the microsecond, on any session time zone.

    A difference of two instants (or of two wall-clock times) does not depend on the zone
    the session shows times in; Ibis's ``epoch_seconds`` casts a zoned time to the
    session's wall clock first, and drops the fraction.
    """
    zone = ts.type().timezone
    epoch = ibis.literal("1970-01-01T00:00:00" + ("Z" if zone else "")).cast(
        dt.Timestamp(timezone=zone)
    )
    return ts.delta(epoch, unit="microsecond").cast("float64") / _MICROS

"""How raw values become ours: text, scores (numbers, booleans, pass/fail words), flags."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

__all__ = [
    "FALSE_WORDS",
    "TRUE_WORDS",
    "as_flag",
    "as_score",
    "as_text",
    "is_integer_text",
    "is_padded",
    "not_finite",
    "not_finite_row",
    "score_is_unparseable",
]

TRUE_WORDS = ("true", "t", "yes", "pass", "passed")
FALSE_WORDS = ("false", "f", "no", "fail", "failed")


def as_text(col: ir.Value) -> ir.StringValue:
    """A column as text; a JSON-typed column (mixed types in JSONL) loses its quotes."""
    text = col.cast("string")
    if col.type().is_json():
        quoted = text.startswith('"') & text.endswith('"') & (text.length() >= 2)
        text = quoted.ifelse(text.substr(1, text.length() - 2), text)
    return text


_SPACE = (" ", "\t", "\n")  # what Ibis's ``strip`` removes


def padded(text: ir.StringValue) -> ir.BooleanValue:
    """True where the text starts or ends with a space, tab or newline (so ``strip`` changes it).

    Testing the two ends is about three times cheaper in DuckDB than comparing with the
    stripped text, and every pass over the rows pays it for the case id and the arm.
    """
    ends = [text.startswith(c) | text.endswith(c) for c in _SPACE]
    return (ends[0] | ends[1] | ends[2]).fill_null(False)


def is_padded(name: str) -> bool:
    """:func:`padded` for one name in Python (a group key): also True for an empty name."""
    return not name or name.startswith(_SPACE) or name.endswith(_SPACE)


def stripped(text: ir.StringValue) -> ir.StringValue:
    """``text.strip()``, computed only where :func:`padded` says it changes anything."""
    return padded(text).ifelse(text.strip(), text)


def as_score(col: ir.Value) -> ir.FloatingValue:
    """Parse a score: numbers as they are, booleans and pass/fail words as 1/0, blank as null."""
    dtype = col.type()
    if dtype.is_boolean():
        return col.cast("int64").cast("float64")
    if dtype.is_numeric():
        return col.cast("float64")
    text = as_text(col).strip().lower()
    return (
        ibis.cases(
            (text.isin(TRUE_WORDS), ibis.literal(1.0)),
            (text.isin(FALSE_WORDS), ibis.literal(0.0)),
            else_=text.try_cast("float64"),
        )
    ).cast("float64")


def score_is_unparseable(col: ir.Value) -> ir.BooleanValue:
    """True where a non-blank value does not parse as a score."""
    if col.type().is_boolean() or col.type().is_numeric():
        return ibis.literal(False)
    text = as_text(col).strip()
    return text.notnull() & (text != "") & as_score(col).isnull()


def as_flag(col: ir.Value) -> ir.BooleanValue:
    """A yes/no column as a boolean: true/1/yes/pass are true, false/0/no are false, else null."""
    if col.type().is_boolean():
        return col
    if col.type().is_numeric():
        return col != 0
    text = as_text(col).strip().lower()
    return ibis.cases(
        (text.isin([*TRUE_WORDS, "1", "1.0", "y"]), ibis.literal(True)),
        (text.isin([*FALSE_WORDS, "0", "0.0", "n"]), ibis.literal(False)),
        else_=ibis.null("boolean"),
    )


def not_finite(col: ir.FloatingValue) -> ir.BooleanValue:
    """True where a float is NaN or infinite.

    Correct only because :func:`evaldelta.sources.connect` turns DuckDB's statistics
    propagation off: DuckDB 2.0.1 otherwise folds ``isnan`` to false from a Parquet column's
    min/max, which pyarrow writes without the NaNs.
    """
    return col.notnull() & (col.isnan() | col.isinf())


def not_finite_row(col: ir.FloatingValue) -> ir.BooleanValue:
    """:func:`not_finite` for a row filter: tested on the value's text.

    DuckDB pushes an ``isnan`` filter down into a Parquet scan and skips every row group
    whose min/max (written without the NaNs) says it holds none; a comparison of the text
    cannot be pushed down, so the NaN row is found.
    """
    text = col.cast("string").lower()
    return col.notnull() & text.isin(("nan", "-nan", "inf", "-inf", "infinity", "-infinity"))


def is_integer_text(text: ir.StringValue) -> ir.BooleanValue:
    """True where a text is a whole number (``3``, ``-1``, ``+2``; not ``1.4`` or ``1e3``)."""
    return text.strip().re_search(r"^[+-]?[0-9]+$")

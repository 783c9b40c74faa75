"""Every source, opened by its reader, projected onto the canonical relation (DESIGN.md's rows).

Columns of the relation: ``case_id``, ``arm``, ``repeat``, ``by_<column>`` per slicing
column (``slice`` defaults to ``all`` when absent), ``m_<metric>`` per metric (float, null =
unlabeled) with ``_bad_<metric>`` and ``_raw_<metric>`` for validation, ``cluster``,
``cost_usd``, ``model_used``, ``escalated``, ``sample_weight`` and the critical-case flags
when a source has them, ``_order`` with ``_bad_order`` and ``_raw_order`` when a sequential
comparison names its order column (:mod:`evaldelta.sources._order`), and ``_src`` (the
source's index, for locating lines later).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.errors import Location, MissingColumnError, UnreadableFileError, UsageError
from evaldelta.sources._connect import connect
from evaldelta.sources._order import choose_order, order_columns
from evaldelta.sources._registry import INTERNAL_COLUMNS, Opened, reader_for
from evaldelta.sources._report import ImportReport
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources._values import (
    as_flag,
    as_score,
    as_text,
    is_integer_text,
    not_finite,
    padded,
    score_is_unparseable,
    stripped,
)

__all__ = ["TableSet", "close_column", "locate", "missing_column", "open_sources", "read_sources"]

# Names people give the required columns: a missing column with one of these beside it
# gets a "did you mean" (and the --columns spelling that maps it).
_SYNONYMS = {
    "case_id": ("id", "case", "sample_id", "doc_id", "example_id", "question_id", "instance_id",
                "item_id", "task_id", "ticket_id", "caseid", "case-id"),
    "arm": ("model", "system", "variant", "release", "model_name", "run", "provider", "version"),
    "score": ("correct", "passed", "pass", "success", "accuracy", "acc", "value", "result",
              "label", "grade", "is_correct"),
}  # fmt: skip
# the long row format's own columns: never an order column
_KNOWN = ("case_id", "arm", "repeat", "slice", "score", "cluster", "cost_usd", "output",
          "model_used", "escalated", "sample_weight", "tags", "critical")  # fmt: skip


@dataclass(frozen=True)
class TableSet:
    """The canonical relation over all sources, with the facts needed to describe it."""

    con: Any
    rows: ir.Table
    opened: tuple[Opened, ...]
    slice_columns: tuple[str, ...]
    metrics: tuple[str, ...]
    has_cluster: bool
    has_cost: bool
    critical_flags: tuple[str, ...] = ()  # "column" / "tag": flag columns that were projected
    has_weight: bool = False  # a sample_weight column (written by `evaldelta sample`)
    has_model_used: bool = False  # a model_used column (the model that answered an attempt)
    has_escalated: bool = False  # an escalated column (a cascade sent the attempt onwards)
    upstream: tuple[str, ...] = ()  # kinds with a hash column (evaldelta.sources.hashes): up_<kind>
    order: str | None = None  # the order column of a sequential comparison (``_order``)
    # ``rows`` without the stripping of case ids and arms, for once validation has found
    # that no row needs it (:meth:`unpadded`); None where the rows are not read here
    plain_rows: ir.Table | None = None

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources, in the order given."""
        return tuple(o.source for o in self.opened)

    @property
    def reports(self) -> tuple[ImportReport, ...]:
        """What each importer mapped and could not map (tidy files have no report)."""
        return tuple(r for o in self.opened for r in o.reports)

    def unpadded(self) -> TableSet:
        """These rows, read without stripping case ids and arms: for when none is padded.

        Validation counts the rows whose case id or arm has a space, tab or newline at
        either end; where it counts none, stripping changes nothing, and skipping it saves
        every later pass over the rows the test (about 0.5 s of the per-case pivot of 10M
        cases, bench/README.md).
        """
        if self.plain_rows is None:
            return self
        return replace(self, rows=self.plain_rows, plain_rows=None)

    def pins(self, arms: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each compared arm's pins from the first source that records them."""
        out: dict[str, dict[str, Any]] = {}
        for opened in self.opened:
            for arm, pins in opened.pins.items():
                if arm in arms and arm not in out:
                    out[arm] = dict(pins)
        return {arm: out[arm] for arm in arms if arm in out}


def open_sources(
    sources: Sequence[Source], options: ReadOptions | None = None, con: Any | None = None
) -> tuple[Any, list[Opened]]:
    """Open every source with its reader on one connection (made here unless given)."""
    if not sources:
        raise UnreadableFileError("no input files were given")
    options = options or ReadOptions()
    con = con if con is not None else connect()
    pairs = [(s, reader_for(s)) for s in sources]
    _check_options(options, [r for _, r in pairs])
    opened = [reader.open(source, con, options) for source, reader in pairs]
    return con, opened


def _check_options(options: ReadOptions, readers: Sequence[Any]) -> None:
    for name in sorted(options.given()):
        if not any(name in r.options for r in readers):
            takers = ", ".join(sorted({type(r).name for r in readers})) or "none"
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} does not apply to the formats read here ({takers})")


def default_metrics(opened: Sequence[Opened]) -> tuple[str, ...]:
    """The metrics a comparison uses when none is named: the first source's defaults."""
    return opened[0].default_metrics if opened else ("score",)


def read_sources(
    sources: Sequence[Source],
    *,
    slice_columns: tuple[str, ...] = ("slice",),
    metrics: tuple[str, ...] | None = ("score",),
    con: Any | None = None,
    critical_column: str | None = None,
    critical_tag: str | None = None,
    options: ReadOptions | None = None,
    order: str | None = None,
    find_order: bool = False,
) -> TableSet:
    """Open every source and return one canonical relation (see the module docstring).

    ``metrics=None`` takes the first source's default metrics (``score`` for tidy files; an
    importer's own, such as the first scorer of an Inspect log). ``order`` names the order
    column of a sequential comparison; ``find_order`` looks for one when it names none
    (:func:`~evaldelta.sources._order.choose_order`).
    """
    con, opened = open_sources(sources, options, con)
    if metrics is None:
        metrics = default_metrics(opened)
    if order is None and find_order:
        order = choose_order(opened, (*_KNOWN, *slice_columns, *metrics))
    tables = [o.table for o in opened]
    has_cluster = any("cluster" in t.columns for t in tables)
    has_cost = any("cost_usd" in t.columns for t in tables)
    flags: dict[str, str] = {}
    if critical_column is not None and any(critical_column in t.columns for t in tables):
        flags["column"] = critical_column
    if critical_tag is not None and any("tags" in t.columns for t in tables):
        flags["tag"] = critical_tag
    has_weight = any("sample_weight" in t.columns for t in tables)
    has_model_used = any("model_used" in t.columns for t in tables)
    has_escalated = any("escalated" in t.columns for t in tables)
    upstream = _upstream_kinds(tables)
    ties = [m for m in metrics if any(f"raw.{m}" in t.columns for t in tables)]
    projected: dict[bool, list[ir.Table]] = {True: [], False: []}
    for index, item in enumerate(opened):
        table = item.table
        extra = _critical_flags(table, flags)
        if has_weight:
            extra.update(_weight_columns(table))
        extra.update(_routing_columns(table, has_model_used, has_escalated))
        extra.update(_upstream_columns(table, upstream))
        extra.update(_tie_columns(table, ties))
        if order is not None:
            extra.update(_order_columns(item, order, find_order))
        for strip in (True, False):
            projected[strip].append(
                _project(index, item, slice_columns, metrics, has_cluster, has_cost, extra, strip)
            )
    rows, plain = (
        (p[0] if len(p) == 1 else ibis.union(*p, distinct=False))
        for p in (projected[True], projected[False])
    )
    return TableSet(
        con=con,
        rows=rows,
        plain_rows=plain,
        opened=tuple(opened),
        slice_columns=slice_columns,
        metrics=tuple(metrics),
        has_cluster=has_cluster,
        has_cost=has_cost,
        critical_flags=tuple(flags),
        has_weight=has_weight,
        has_model_used=has_model_used,
        has_escalated=has_escalated,
        upstream=upstream,
        order=order,
    )


def _order_columns(opened: Opened, name: str, found: bool) -> dict[str, ir.Value]:
    """The order columns of one source (:func:`order_columns`); a missing one is an error."""
    if name not in opened.table.columns:
        how = " (found by --sequential in another input)" if found else " (from --order)"
        raise missing_column(name, opened.table.columns, "order column", opened, how, "--order")
    return order_columns(opened.table[name])


def _upstream_kinds(tables: Sequence[ir.Table]) -> tuple[str, ...]:
    """The upstream kinds (prompt, payload, retrieval) whose hash column some source has."""
    from evaldelta.sources.hashes import HASH_COLUMNS, KINDS

    return tuple(k for k in KINDS if any(HASH_COLUMNS[k] in t.columns for t in tables))


def _upstream_columns(table: ir.Table, kinds: tuple[str, ...]) -> dict[str, ir.Value]:
    """``up_<kind>``: the hash as text, null where blank or where a source lacks the column."""
    from evaldelta.sources.hashes import HASH_COLUMNS

    out: dict[str, ir.Value] = {}
    for kind in kinds:
        name = HASH_COLUMNS[kind]
        out[f"up_{kind}"] = (
            as_text(table[name]).strip().nullif("")
            if name in table.columns
            else ibis.null("string")
        )
    return out


def _tie_columns(table: ir.Table, metrics: Sequence[str]) -> dict[str, ir.Value]:
    """``_tie_<metric>``: the value as the tool wrote it (``raw.<metric>``), else as a number.

    An Inspect score of I and one of N are both 0, but Inspect's ``mode`` reducer counts
    them apart; its importer keeps the letter in ``raw.<metric>`` so a mode over repeats
    (``engine/_repeats.py``) counts what Inspect counts.
    """
    out: dict[str, ir.Value] = {}
    for name in metrics:
        number = as_text(as_score(table[name]))
        raw = f"raw.{name}"
        out[f"_tie_{name}"] = (
            as_text(table[raw]).fill_null(number) if raw in table.columns else number
        )
    return out


def _routing_columns(
    table: ir.Table, has_model_used: bool, has_escalated: bool
) -> dict[str, ir.Value]:
    """``model_used`` as text and ``escalated`` as a boolean (null where absent or unparsed)."""
    out: dict[str, ir.Value] = {}
    if has_model_used:
        out["model_used"] = (
            as_text(table.model_used).strip().nullif("")
            if "model_used" in table.columns
            else ibis.null("string")
        )
    if has_escalated:
        out["escalated"] = (
            as_flag(table.escalated) if "escalated" in table.columns else ibis.null("boolean")
        )
    return out


def _weight_columns(table: ir.Table) -> dict[str, ir.Value]:
    """``sample_weight`` as a float (null where a source lacks it) and its raw text."""
    if "sample_weight" not in table.columns:
        return {"sample_weight": ibis.null("float64"), "_raw_sample_weight": ibis.null("string")}
    col = table.sample_weight
    value = (
        col.cast("float64") if col.type().is_numeric() else as_text(col).strip().try_cast("float64")
    )
    return {"sample_weight": value, "_raw_sample_weight": as_text(col)}


def _critical_flags(table: ir.Table, flags: dict[str, str]) -> dict[str, ir.Value]:
    """Boolean flag columns for critical cases (false where a source lacks the column)."""
    out: dict[str, ir.Value] = {}
    if "column" in flags:
        name = flags["column"]
        if name not in table.columns:
            out["_crit_col"] = ibis.literal(False)
        else:
            out["_crit_col"] = as_flag(table[name]).fill_null(False)
    if "tag" in flags:
        if "tags" not in table.columns:
            out["_crit_tag"] = ibis.literal(False)
        else:
            sep = r"""[\s,;|"'\[\]]"""
            pattern = f"(^|{sep}){re.escape(flags['tag'])}($|{sep})"
            out["_crit_tag"] = table["tags"].cast("string").re_search(pattern).fill_null(False)
    return out


def close_column(name: str, columns: Sequence[str]) -> str | None:
    """The column ``name`` was most likely meant to be, or None.

    A usual synonym of a required column (``correct`` for ``score``), a dotted column whose
    last part is the name (``vars.topic`` for ``topic``), the name with a suffix
    (``case_id`` for ``case``), or a close spelling.
    """
    lowered = {c.lower(): c for c in columns}
    low = name.lower()
    close = [lowered[s] for s in _SYNONYMS.get(name, ()) if s in lowered]
    close += [c for c in columns if c != name and c.lower().rsplit(".", 1)[-1] == low]
    close += [c for c in columns if c.lower().startswith((f"{low}_", f"{low}."))]
    close += difflib.get_close_matches(name, list(columns), n=1, cutoff=0.75)
    return close[0] if close else None


def missing_column(
    name: str,
    columns: Sequence[str],
    what: str,
    opened: Opened,
    field_hint: str = "",
    flag: str = "--columns",
) -> MissingColumnError:
    """The error for a missing column, with a close name as "did you mean" when there is one.

    ``flag`` is the option that named the column, so the suggestion is the one to type:
    ``--by slice`` for a slicing column, ``--metric score`` for a score column named with
    ``--metric``, and for a required column (which the file may call otherwise)
    ``--columns case_id=id``, which maps the file's own name onto ours.
    """
    columns = [c for c in columns if c not in INTERNAL_COLUMNS]
    shown = ", ".join(columns[:30]) + (", ..." if len(columns) > 30 else "")
    if not opened.reports:  # a tidy file: say what it is when it is a harness's other file
        from evaldelta.sources._lookalike import describe

        looks = describe(opened.source.path)
        if looks is not None:
            return MissingColumnError(
                f"{looks} (it has no {name!r} column; columns: {shown})",
                Location(str(opened.source.path)),
            )
    unscored = _unscored(opened) if name not in ("case_id", "arm") else None
    if unscored is not None:
        return MissingColumnError(unscored, Location(str(opened.source.path)))
    hint = ""
    close = close_column(name, columns)
    if close is not None:
        typed = f"--columns {name}={close}" if flag == "--columns" else f"{flag} {close}"
        hint = f"; did you mean {close!r}? ({typed})"
    line = 1 if opened.unit == "line" and opened.source.format in (None, "tidy", "csv") else None
    return MissingColumnError(
        f"{what} {name!r}{field_hint} is missing (columns: {shown}){hint}",
        Location(str(opened.source.path), line, name),
    )


def _unscored(opened: Opened) -> str | None:
    """The import report's sentence when a log holds no scores at all, else None."""
    for report in opened.reports:
        for issue in report.issues:
            if issue.kind == "no_scores":
                return issue.message
    return None


def _project(
    index: int,
    opened: Opened,
    slice_columns: tuple[str, ...],
    metrics: tuple[str, ...],
    has_cluster: bool,
    has_cost: bool,
    extra: dict[str, ir.Value] | None = None,
    strip: bool = True,
) -> ir.Table:
    table = opened.table
    source = opened.source
    columns = set(table.columns)
    required = ["case_id"] + (["arm"] if source.arm is None else [])
    for name in required:
        if name not in columns:
            raise missing_column(name, table.columns, "required column", opened)
    for name in metrics:  # "score" is the default's name; any other was named (--metric)
        if name not in columns and name == "score":
            raise missing_column(name, table.columns, "required column", opened)
        if name not in columns:
            raise missing_column(
                name, table.columns, "score column", opened, " (from --metric)", "--metric"
            )
    for name in slice_columns:
        if name not in columns and name != "slice":
            raise missing_column(
                name, table.columns, "slicing column", opened, " (from --by)", "--by"
            )
    # Names are trimmed: "a " and "a" are one arm (validate() counts how many were trimmed).
    case_raw = as_text(table.case_id)
    arm_raw = ibis.literal(source.arm) if source.arm is not None else as_text(table.arm)
    out: dict[str, ir.Value] = (
        {
            "case_id": stripped(case_raw),
            "arm": stripped(arm_raw),
            "_trimmed": padded(case_raw) | padded(arm_raw),
        }
        if strip  # else as read: for rows where validation found nothing to strip
        else {"case_id": case_raw, "arm": arm_raw, "_trimmed": ibis.literal(False)}
    )
    out.update(_repeat_columns(table))
    for name in slice_columns:
        out[f"by_{name}"] = (
            as_text(table[name]).fill_null("(missing)") if name in columns else ibis.literal("all")
        )
    for name in metrics:
        out[f"m_{name}"] = as_score(table[name])
        out[f"_bad_{name}"] = score_is_unparseable(table[name])
        out[f"_raw_{name}"] = as_text(table[name])
    if has_cluster:
        out["cluster"] = as_text(table.cluster) if "cluster" in columns else ibis.null("string")
    if has_cost:
        out.update(_cost_columns(table))
    out.update(extra or {})
    out["_src"] = ibis.literal(index, type="int64")
    return table.select(**out)


def _repeat_columns(table: ir.Table) -> dict[str, ir.Value]:
    """``repeat`` as an integer, and ``_bad_repeat`` where it is not a whole number >= 0.

    A fractional repeat is never rounded: 1 and 1.4 would silently become one attempt.
    """
    if "repeat" not in table.columns:
        return {"repeat": ibis.literal(0, type="int64"), "_bad_repeat": ibis.literal(False),
                "_raw_repeat": ibis.null("string")}  # fmt: skip
    col = table["repeat"]
    if col.type().is_integer():
        return {"repeat": col.cast("int64").fill_null(0), "_bad_repeat": (col < 0).fill_null(False),
                "_raw_repeat": as_text(col)}  # fmt: skip
    text = as_text(col)
    blank = text.isnull() | (text.strip() == "")
    if col.type().is_floating():
        bad = col.notnull() & (not_finite(col) | (col < 0) | (col != col.floor()))
        value = col.floor().cast("int64")
    else:
        bad = ~blank & ~(is_integer_text(text) & (text.strip().try_cast("int64") >= 0)).fill_null(
            False
        )
        value = text.strip().try_cast("int64")
    return {"repeat": ibis.ifelse(bad, ibis.literal(0, type="int64"), value).fill_null(0),
            "_bad_repeat": bad.fill_null(False), "_raw_repeat": text}  # fmt: skip


def _cost_columns(table: ir.Table) -> dict[str, ir.Value]:
    """``cost_usd`` as a float, and ``_bad_cost`` where it is not a finite number >= 0.

    A cost of -10 or ``$0.10`` or ``free`` is bad input, never a cost of 0 or a credit.
    """
    if "cost_usd" not in table.columns:
        return {"cost_usd": ibis.null("float64"), "_bad_cost": ibis.literal(False),
                "_raw_cost_usd": ibis.null("string")}  # fmt: skip
    col = table.cost_usd
    text = as_text(col)
    if col.type().is_numeric():  # no text to parse: blank is null (and no cast per row)
        value, blank = col.cast("float64"), col.isnull()
    else:
        value = text.strip().try_cast("float64")
        blank = text.isnull() | (text.strip() == "")
    bad = ~blank & (value.isnull() | not_finite(value) | (value < 0)).fill_null(True)
    return {"cost_usd": ibis.ifelse(bad, ibis.null("float64"), value), "_bad_cost": bad,
            "_raw_cost_usd": text}  # fmt: skip


def locate(
    tables: TableSet, source_index: int, conditions: Mapping[str, object], field: str
) -> Location:
    """Where one source's first row with these identifying values is (only after a failure)."""
    return tables.opened[source_index].locate(conditions, field)

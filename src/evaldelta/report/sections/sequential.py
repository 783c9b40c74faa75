"""A sequential comparison, said first: its intervals are confidence sequences (issue 26).

Shown only when ``Comparison.sequential`` is set (``compare --sequential``, ``run
--until-decided``); a fixed comparison's reports do not change. It says that every interval
in the report is an anytime-valid confidence sequence over the cases in the order of a
column, what that buys (valid however often it was looked at and whenever the looking
stopped) and costs (wider than a fixed-sample interval on the same cases), that the p-values
are anytime-valid too, and which fixed-sample figures are left out. A run that stopped once
decided adds its stopping rule, why it stopped, the calls it spent beside the fixed design's,
and its looks: at most :data:`MAX_LOOKS` rows (the first, the last, and each where the gate's
outcome or the decided slices changed), saying how many are not shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.table import Table

from evaldelta.comparison.model import Comparison, Look, Sequential
from evaldelta.report._escape import md_code, md_text
from evaldelta.report._format import fmt, fmt_pct
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import table, term, terminal_lines

__all__ = ["MAX_LOOKS", "SEQUENTIAL", "SequentialView", "sequential_lines", "shown_looks"]

MAX_LOOKS = 12  # look rows a report shows; the rest are counted
_NAMES = 4  # newly decided slices named in one look row; the rest are counted


def _changed(before: Look, look: Look) -> bool:
    return (before.outcome, set(before.decided)) != (look.outcome, set(look.decided))


def shown_looks(looks: tuple[Look, ...]) -> tuple[tuple[Look, ...], int]:
    """The looks a report shows, and how many it leaves out.

    Every look when there are at most :data:`MAX_LOOKS`; otherwise the first, the last and
    the looks where the gate's outcome or the decided slices changed (the earliest and the
    latest of those changes when they are too many for the rows).
    """
    if len(looks) <= MAX_LOOKS:
        return looks, 0
    last = len(looks) - 1
    changes = [i for i in range(1, last) if _changed(looks[i - 1], looks[i])]
    room = MAX_LOOKS - 2
    if len(changes) > room:
        changes = changes[: room // 2] + changes[len(changes) - (room - room // 2) :]
    keep = sorted({0, last, *changes})
    return tuple(looks[i] for i in keep), len(looks) - len(keep)


def _decided(look: Look, before: Look | None) -> str:
    """How many slices are decided after the look, naming those new since the row before."""
    earlier = set(before.decided) if before is not None else set()
    new = [s for s in look.decided if s not in earlier]
    if not look.decided:
        return "none"
    if not new:
        return str(len(look.decided))
    named = ", ".join(new[:_NAMES])
    more = f" and {len(new) - _NAMES} more" if len(new) > _NAMES else ""
    return f"{len(look.decided)} (+{named}{more})"


@dataclass(frozen=True)
class SequentialView:
    """The section's sentences and look rows, every number formatted; names still raw."""

    seq: Sequential | None
    lead: str = ""
    left_out: str = ""
    stopped: str = ""
    calls: str = ""
    look_head: tuple[str, ...] = ()
    look_rows: tuple[tuple[str, ...], ...] = ()
    looks_note: str = ""


def _lead(seq: Sequential, column: str, method: str) -> str:
    """The opening sentences; ``column`` and ``method`` as the caller's format writes them."""
    conf = fmt_pct(seq.confidence)
    return (
        f"Sequential: every interval in this report is an anytime-valid {conf} confidence "
        f"sequence (CS) over the cases in the order of {column}, not a fixed-sample "
        "interval: it stays valid however often it was looked at and whenever the looking "
        "stopped, and it is wider than a fixed-sample interval on the same cases. Every p-value "
        f"is anytime-valid too. Method: {method}. It assumes the cases came in random "
        "order (each a fresh draw from one population), as a run's stratified random order "
        "does; a log ordered by difficulty or source does not, and a sequence that then "
        "excludes its own mean is flagged in the notes."
    )


def _stopped(seq: Sequential) -> str:
    """Why the run stopped, and under which rule (``--stop verdict``, ``all``, a budget)."""
    rule = f" (stopping rule: {seq.stopping})" if seq.stopping else ""
    if seq.stopped_because:
        return f"Stopped: {seq.stopped_because}{rule}."
    return f"Stopping rule: {seq.stopping}." if seq.stopping else ""


def _usd(usd: float | None) -> str:
    """A look's spend so far: cents once it reaches a dollar, else four decimals."""
    return "" if usd is None else f"${fmt(usd, 2 if usd >= 1 else 4)}"


def _calls(seq: Sequential) -> str:
    if seq.calls is None:
        return ""
    spent = f"Calls spent: {seq.calls:,}"
    if not seq.fixed_calls:
        return spent + "."
    saved = 1.0 - seq.calls / seq.fixed_calls
    way = f"saved {fmt_pct(saved)}" if saved >= 0 else f"{fmt_pct(-saved)} more"
    return f"{spent} of the fixed design's {seq.fixed_calls:,} (every case on every arm; {way})."


def _look_rows(seq: Sequential) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], str]:
    shown, left = shown_looks(seq.looks)
    usd = any(look.usd is not None for look in seq.looks)
    head = ("look", "cases", "calls", *(("usd",) if usd else ()), "gate", "slices decided")
    rows = []
    for k, look in enumerate(shown):
        cost = (_usd(look.usd),) if usd else ()
        before = shown[k - 1] if k else None
        rows.append(
            (
                str(look.index),
                f"{look.cases:,}",
                f"{look.calls:,}",
                *cost,
                look.outcome,
                _decided(look, before),
            )
        )
    note = ""
    if left:
        note = (
            f"{len(shown)} of {len(seq.looks)} looks shown ({left} not shown): the first, the "
            "last and each where the gate's outcome or the decided slices changed"
        )
    return head, tuple(rows), note


def sequential_view(comparison: Comparison) -> SequentialView:
    """The section's view of ``comparison`` (empty for a fixed comparison)."""
    seq = comparison.sequential
    if seq is None:
        return SequentialView(None)
    left_out = "; ".join(seq.left_out)
    head, rows, note = _look_rows(seq) if seq.looks else ((), (), "")
    return SequentialView(
        seq,
        lead=_lead(seq, f"'{seq.column}'", seq.method),
        left_out=f"Not shown (fixed-sample only): {left_out}." if left_out else "",
        stopped=_stopped(seq),
        calls=_calls(seq),
        look_head=head,
        look_rows=rows,
        looks_note=note,
    )


def sequential_lines(view: SequentialView) -> list[str]:
    """The plain text lines (also the JUnit suite's ``system-out``)."""
    if view.seq is None:
        return []
    out = [view.lead]
    if view.left_out:
        out.append(f"  {view.left_out}")
    out += [x for x in (view.stopped, view.calls) if x]
    if view.look_rows:
        out.append(f"Looks ({len(view.seq.looks)}):")
        n = len(view.look_head)
        out += table(list(view.look_head), [list(r) for r in view.look_rows], left=(n - 2, n - 1))
        if view.looks_note:
            out.append(f"  ({view.looks_note})")
    return out


class _Sequential(Section[SequentialView]):
    name = "sequential"

    def view(self, report: Report) -> SequentialView:
        return sequential_view(report.comparison)

    def text(self, view: SequentialView) -> list[str] | None:
        if view.seq is None:
            return None
        return [*sequential_lines(view), ""]

    def terminal(self, view: SequentialView) -> list[RenderableType] | None:
        if view.seq is None:
            return None
        head = [view.lead]
        if view.left_out:
            head.append(f"  {view.left_out}")
        head += [x for x in (view.stopped, view.calls) if x]
        out: list[RenderableType] = [term(head[0], style="bold"), *terminal_lines(head[1:])]
        if view.look_rows:
            t = Table(title=term(f"Looks ({len(view.seq.looks)})"), title_justify="left")
            left = len(view.look_head) - 2
            for i, name in enumerate(view.look_head):
                t.add_column(term(name), justify="left" if i >= left else "right")
            for row in view.look_rows:
                t.add_row(*(term(cell) for cell in row))
            if view.looks_note:
                t.caption, t.caption_justify = term(view.looks_note), "left"
            out.append(t)
        return [*out, term("")]

    def markdown(self, view: SequentialView) -> list[str] | None:
        seq = view.seq
        if seq is None:
            return None
        out = [f"> {_lead(seq, md_code(seq.column), md_text(seq.method))}"]
        if view.left_out:
            out += [">", f"> {md_text(view.left_out)}"]
        out.append("")
        stop = " ".join(md_text(x) for x in (view.stopped, view.calls) if x)
        if stop:
            out += [stop, ""]
        if view.look_rows:
            n = len(view.look_head)
            out.append("| " + " | ".join(view.look_head) + " |")
            out.append("|" + "|".join(["---:"] * (n - 2) + ["---", "---"]) + "|")
            out += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in view.look_rows]
            if view.looks_note:
                out += ["", f"_{md_text(view.looks_note)}._"]
            out.append("")
        return out

    def html(self, view: SequentialView) -> str | None:
        if view.seq is None:
            return None
        return piece("sections/sequential.html.j2", v=view)


SEQUENTIAL = _Sequential()

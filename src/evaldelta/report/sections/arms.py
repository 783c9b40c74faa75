"""Each arm on its own cases: counts, the rate or mean, and its interval (text, terminal).

Per arm and slice; with one slice, the all-cases rows alone (the slice's rows would repeat
them). The HTML shows the arms' rates in its rates table and its all-arms summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import ALL_CASES, ArmSlice
from evaldelta.report._format import fmt, fmt_pct
from evaldelta.report._sequential import CS_WORD, interval_word
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._lines import table, terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["ARMS"]


@dataclass(frozen=True)
class ArmsView:
    head: str
    arms: tuple[ArmSlice, ...]  # every arm's rows (they decide the optional columns)
    names: tuple[str, str]  # the two arms shown
    interval: str = "interval"  # the interval column's head


def _row(a: ArmSlice, has_traffic: bool, has_cluster: bool) -> list[str]:
    row = [
        a.arm,
        a.slice,
        str(a.cases),
        str(a.attempts),
        str(a.reviewed),
        str(a.unlabeled),
        fmt(a.estimate.estimate),
        f"[{fmt(a.estimate.ci.low)}, {fmt(a.estimate.ci.high)}]",
    ]
    if has_traffic:
        row.append(fmt_pct(a.traffic_share) if a.traffic_share is not None else "")
    if has_cluster:
        row.append(fmt(a.clustered_se, 4) if a.clustered_se is not None else "")
    return row


class _Arms(PairSection[ArmsView]):
    name = "arms"
    formats = frozenset(("text", "terminal"))

    def view(self, pair: PairContext) -> ArmsView:
        seq = pair.comparison.sequential
        if seq is not None:
            method = seq.method
        elif pair.single:
            method = "Wilson, Poisson-edged at 1-3 passes or fails"
        elif pair.binary:
            method = "Wilson at the effective n of the repeats"
        else:
            method = "t on case means"
        arms = pair.arms
        what = f"{pair.conf} {CS_WORD}s" if seq is not None else f"{pair.conf} intervals"
        # one slice: its rows would repeat the all-cases rows (issue 24.1)
        if len({a.slice for a in arms if a.slice != ALL_CASES}) == 1:
            arms = tuple(a for a in arms if a.slice == ALL_CASES)
            head = f"Per arm, each on its own cases ({what}: {method}):"
        else:
            head = f"Per arm and slice, each on its own cases ({what}: {method}):"
        names = (pair.pair.baseline, pair.pair.candidate)
        return ArmsView(head, arms, names, interval_word(pair.comparison))

    def text(self, view: ArmsView) -> list[str]:
        header = ["arm", "slice", "cases", "attempts", "reviewed", "unlabeled", "rate/mean"]
        header.append(view.interval)
        has_traffic = any(a.traffic_share is not None for a in view.arms)
        has_cluster = any(a.clustered_se is not None for a in view.arms)
        if has_traffic:
            header.append("traffic")
        if has_cluster:
            header.append("clustered SE")
        rows = [_row(a, has_traffic, has_cluster) for a in view.arms if a.arm in view.names]
        return ["", view.head, *table(header, rows, left=(0, 1, 7))]

    def terminal(self, view: ArmsView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))


ARMS = _Arms()

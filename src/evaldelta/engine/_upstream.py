"""Upstream evidence: per arm pair, the paired cases whose prompt, payload or retrieval differ.

The canonical relation carries ``up_<kind>`` (the hash columns of :mod:`evaldelta.sources.hashes`)
when a source has them. Per case and pair, the set of one arm's hashes (over its repeats) is
compared with the other's: the two sets are equal when each arm has as many distinct hashes
as the two arms together, so one grouped query per pair counts, for every kind at once, the
cases both arms attempted (``paired``), those where both recorded the hash (``compared``)
and those whose hash sets differ (``differing``). Then, bounded, the first few differing
cases (by case id) with each arm's hash and, where a source stores it, the text behind it
(``rendered_prompt``, ``request_payload``, ``retrieved_ids``) for a diff in the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import ibis

from evaldelta.evidence import UpstreamCounts, UpstreamKind
from evaldelta.sources import TableSet
from evaldelta.sources._values import as_text
from evaldelta.sources.hashes import DISPLAY_COLUMNS

__all__ = ["EXAMPLES", "upstream_counts"]

EXAMPLES = 3  # differing cases listed per pair and kind
TEXT_CHARS = 4000  # longest text kept for a diff


def upstream_counts(
    tables: TableSet, arms: Sequence[str], *, limit: int = EXAMPLES
) -> tuple[UpstreamCounts, ...]:
    """For each candidate against ``arms[0]``, one :class:`UpstreamCounts` per recorded kind."""
    if not tables.upstream:
        return ()
    out: list[UpstreamCounts] = []
    for candidate in arms[1:]:
        out.extend(_pair(tables, arms[0], candidate, limit))
    return tuple(out)


def _pair(tables: TableSet, base: str, cand: str, limit: int) -> list[UpstreamCounts]:
    t = tables.rows.filter(tables.rows.arm.isin([base, cand]))
    is_a, is_b = t.arm == base, t.arm == cand
    aggs: dict[str, Any] = {"in_a": t.count(where=is_a), "in_b": t.count(where=is_b)}
    for kind in tables.upstream:
        col = t[f"up_{kind}"]
        aggs[f"na_{kind}"] = col.nunique(where=is_a)
        aggs[f"nb_{kind}"] = col.nunique(where=is_b)
        aggs[f"nu_{kind}"] = col.nunique()
        aggs[f"ha_{kind}"] = col.min(where=is_a)
        aggs[f"hb_{kind}"] = col.min(where=is_b)
    cases = t.group_by("case_id").aggregate(**aggs)
    cases = cases.filter((cases.in_a > 0) & (cases.in_b > 0))
    marks: dict[str, Any] = {}
    for kind in tables.upstream:
        both = (cases[f"na_{kind}"] > 0) & (cases[f"nb_{kind}"] > 0)
        same = (cases[f"na_{kind}"] == cases[f"nu_{kind}"]) & (
            cases[f"nb_{kind}"] == cases[f"nu_{kind}"]
        )
        marks[f"cmp_{kind}"] = both
        marks[f"dif_{kind}"] = both & ~same
    cases = cases.mutate(**marks)
    sums: dict[str, Any] = {"paired": cases.count()}
    for kind in tables.upstream:
        sums[f"cmp_{kind}"] = cases[f"cmp_{kind}"].cast("int64").sum()
        sums[f"dif_{kind}"] = cases[f"dif_{kind}"].cast("int64").sum()
    total = cases.aggregate(**sums).to_pyarrow().to_pylist()[0]
    out = []
    for kind in tables.upstream:
        differing = int(total[f"dif_{kind}"] or 0)
        examples: tuple[Any, ...] = ()
        if differing and limit:
            examples = _examples(tables, cases, kind, base, cand, limit)
        out.append(
            UpstreamCounts(
                baseline=base,
                candidate=cand,
                kind=cast(UpstreamKind, kind),
                paired=int(total["paired"] or 0),
                compared=int(total[f"cmp_{kind}"] or 0),
                differing=differing,
                examples=examples,
            )
        )
    return out


def _examples(
    tables: TableSet, cases: Any, kind: str, base: str, cand: str, limit: int
) -> tuple[tuple[str, str | None, str | None, str | None, str | None], ...]:
    rows = (
        cases.filter(cases[f"dif_{kind}"])
        .select("case_id", a=cases[f"ha_{kind}"], b=cases[f"hb_{kind}"])
        .order_by("case_id")
        .limit(limit)
        .to_pyarrow()
        .to_pylist()
    )
    ids = [str(r["case_id"]) for r in rows]
    texts = _texts(tables, DISPLAY_COLUMNS[kind], (base, cand), ids)
    return tuple(
        (
            str(r["case_id"]),
            r["a"],
            r["b"],
            texts.get((str(r["case_id"]), base)),
            texts.get((str(r["case_id"]), cand)),
        )
        for r in rows
    )


def _texts(
    tables: TableSet, column: str, arms: Sequence[str], case_ids: Sequence[str]
) -> Mapping[tuple[str, str], str]:
    """``(case_id, arm)`` -> the text in ``column`` of its lowest repeat (bounded: few ids)."""
    found: dict[tuple[str, str], tuple[int, str]] = {}
    for opened in tables.opened:
        source, table = opened.source, opened.table
        if column not in table.columns:
            continue
        arm = ibis.literal(source.arm) if source.arm is not None else as_text(table.arm)
        repeat = (
            as_text(table["repeat"]).strip().try_cast("int64").fill_null(0)
            if "repeat" in table.columns
            else ibis.literal(0, type="int64")
        )
        picked = table.select(
            case_id=as_text(table.case_id).strip(),
            arm=arm.strip(),
            repeat=repeat,
            text=as_text(table[column]).substr(0, TEXT_CHARS),
        )
        picked = picked.filter(picked.case_id.isin(list(case_ids)) & picked.arm.isin(list(arms)))
        for row in picked.to_pyarrow().to_pylist():
            if row["text"] is None:
                continue
            key = (str(row["case_id"]), str(row["arm"]))
            if key not in found or int(row["repeat"]) < found[key][0]:
                found[key] = (int(row["repeat"]), str(row["text"]))
    return {key: text for key, (_, text) in found.items()}

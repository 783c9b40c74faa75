"""What an importer mapped and what it could not: counted, with examples, never silent.

Every importer fills an :class:`ImportReport` while it reads: which fields became which
columns (``mapped``), and each thing it could not map or had to decide (``issues``: an
errored sample kept as unlabeled, an unknown score value, repeats it numbered itself), with
a count and the first few examples. ``--strict`` turns any issue into an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaldelta.errors import BadValueError, Location
from evaldelta.sources._fetch import rows as fetch_rows

__all__ = ["EXAMPLES", "ImportIssue", "ImportReport", "ReportBuilder", "build_report"]

EXAMPLES = 5  # examples kept per issue; the count is always complete


@dataclass(frozen=True)
class ImportIssue:
    """One kind of thing an importer could not map, or decided on the user's behalf."""

    kind: str
    count: int
    message: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportReport:
    """An imported source: what it held, how it was mapped, what could not be mapped."""

    format: str
    path: str
    tool: str
    tool_version: str | None
    arms: tuple[str, ...]
    cases: int
    attempts: int
    metrics: tuple[str, ...]
    default_metrics: tuple[str, ...]
    mapped: tuple[str, ...] = ()
    issues: tuple[ImportIssue, ...] = ()
    reported: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # how the tool reduces a case's repeats for its own figures (Inspect's epochs reducer,
    # in stats._reducers' names); None where the tool records none or has no repeats
    reducer: str | None = None

    def summary(self) -> str:
        """One line: what was read, for stderr and the report header."""
        arms = ", ".join(self.arms)
        metrics = ", ".join(self.metrics[:8]) or "none"
        if len(self.metrics) > 8:
            metrics += f" and {len(self.metrics) - 8} more"
        return (
            f"{self.format}: {self.path}: {self.attempts:,} attempts of {self.cases:,} cases "
            f"(arm{'s' if len(self.arms) != 1 else ''} {arms}; metrics {metrics}; "
            f"default {', '.join(self.default_metrics)})"
        )

    def to_jsonable(self) -> dict[str, Any]:
        """The report as JSON-ready values (kept in an imported Parquet file's metadata)."""
        return {
            "format": self.format,
            "path": self.path,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "arms": list(self.arms),
            "cases": self.cases,
            "attempts": self.attempts,
            "metrics": list(self.metrics),
            "default_metrics": list(self.default_metrics),
            "mapped": list(self.mapped),
            "issues": [
                {
                    "kind": i.kind,
                    "count": i.count,
                    "message": i.message,
                    "examples": list(i.examples),
                }
                for i in self.issues
            ],
            "reported": {k: dict(v) for k, v in self.reported.items()},
            "reducer": self.reducer,
        }

    @classmethod
    def from_jsonable(cls, data: Mapping[str, Any], *, path: str | None = None) -> ImportReport:
        """Read back :meth:`to_jsonable`'s output (raises KeyError/TypeError when damaged)."""
        return cls(
            format=str(data["format"]),
            path=path if path is not None else str(data["path"]),
            tool=str(data["tool"]),
            tool_version=data.get("tool_version"),
            arms=tuple(str(a) for a in data["arms"]),
            cases=int(data["cases"]),
            attempts=int(data["attempts"]),
            metrics=tuple(str(m) for m in data["metrics"]),
            default_metrics=tuple(str(m) for m in data["default_metrics"]),
            mapped=tuple(str(m) for m in data.get("mapped", ())),
            issues=tuple(
                ImportIssue(
                    str(i["kind"]),
                    int(i["count"]),
                    str(i["message"]),
                    tuple(str(e) for e in i.get("examples", ())),
                )
                for i in data.get("issues", ())
            ),
            reported={
                str(k): {str(m): float(x) for m, x in v.items()}
                for k, v in data.get("reported", {}).items()
            },
            reducer=str(data["reducer"]) if data.get("reducer") else None,
        )


@dataclass
class ReportBuilder:
    """Collects issues while an importer reads; :meth:`build` freezes them."""

    format: str
    path: str
    tool: str
    strict: bool = False
    tool_version: str | None = None
    reducer: str | None = None
    mapped: list[str] = field(default_factory=list)
    reported: dict[str, dict[str, float]] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)
    _messages: dict[str, str] = field(default_factory=dict)
    _examples: dict[str, list[str]] = field(default_factory=dict)

    def issue(
        self,
        kind: str,
        message: str,
        example: str | None = None,
        count: int = 1,
        *,
        note: bool = False,
    ) -> None:
        """Count one occurrence of an issue; ``--strict`` makes the first one an error.

        ``note`` marks something worth saying that was nonetheless mapped faithfully (a
        sample that hit a token limit and was scored): it never fails ``--strict``.
        """
        if self.strict and not note:
            detail = f" ({example})" if example else ""
            raise BadValueError(
                f"{message}{detail} (--strict: nothing may be left unmapped)",
                Location(self.path),
            )
        self._counts[kind] = self._counts.get(kind, 0) + count
        self._messages.setdefault(kind, message)
        examples = self._examples.setdefault(kind, [])
        if example is not None and len(examples) < EXAMPLES and example not in examples:
            examples.append(example)

    def count(self, kind: str) -> int:
        """How often an issue was seen so far."""
        return self._counts.get(kind, 0)

    def build(
        self,
        *,
        arms: tuple[str, ...],
        cases: int,
        attempts: int,
        metrics: tuple[str, ...],
        default_metrics: tuple[str, ...],
    ) -> ImportReport:
        """The frozen report."""
        return ImportReport(
            format=self.format,
            path=self.path,
            tool=self.tool,
            tool_version=self.tool_version,
            arms=arms,
            cases=cases,
            attempts=attempts,
            metrics=metrics,
            default_metrics=default_metrics,
            mapped=tuple(self.mapped),
            issues=tuple(
                ImportIssue(k, self._counts[k], self._messages[k], tuple(self._examples[k]))
                for k in self._counts
            ),
            reported={k: dict(v) for k, v in self.reported.items()},
            reducer=self.reducer,
        )


def build_report(
    builder: ReportBuilder,
    table: Any,
    pins: Mapping[str, Any],
    default_metrics: tuple[str, ...],
    metrics: tuple[str, ...] = (),
    arm: str | None = None,
) -> ImportReport:
    """Freeze ``builder`` with the counts of ``table`` (one small aggregate query)."""
    scored = {f"_n{i}": table[m].notnull().sum() for i, m in enumerate(metrics)
              if m in table.columns}  # fmt: skip
    counts = table.aggregate(cases=table.case_id.nunique(), attempts=table.count(), **scored)
    row = fetch_rows(counts)[0]
    if scored and row["attempts"] and not any(row[k] for k in scored):
        builder.issue(
            "no_scores",
            f"every score in the log is empty ({', '.join(metrics[:5])}"
            + (", ..." if len(metrics) > 5 else "")
            + "): nothing to compare until the attempts are scored",
        )
    if "arm" in table.columns:
        found = fetch_rows(table.select("arm").distinct().order_by("arm"))
        arms = tuple(str(r["arm"]) for r in found)
    else:
        arms = (arm,) if arm is not None else tuple(sorted(pins))
    return builder.build(
        arms=arms,
        cases=int(row["cases"]),
        attempts=int(row["attempts"]),
        metrics=metrics,
        default_metrics=default_metrics,
    )

"""Score rows (any file with an ``output`` column) on a checks file, and write them back.

Columns written: ``check.<id>`` (1/0, blank = not scored) for every check,
``reason.<id>`` (why a check failed), ``pass`` (1 when every included check passes, 0 when
any fails, blank when none fails but one could not be scored), ``judge_score.<id>`` for a
graded judge (and ``judge_score`` when there is exactly one). Pairwise judges write
``pairwise.<id>`` (1 win, 0 loss, 0.5 tie or position flip). Both the binary predicate and
the graded score stay separate metrics, so a rubric never softens a failure.

A user pattern that times out on a reply leaves that row's check blank with the reason
"not scored: the regular expression ... timed out"; :attr:`ScoreResult.timed_out` counts
those rows per check (and ``<out>.meta.json`` records the counts).
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaldelta.checks._judge import (
    JudgeCheck,
    JudgePins,
    PairItem,
    build_judge,
    judge_pairwise,
    judge_single,
)
from evaldelta.checks._mechanical import Check, CheckResult, build_check, timed_out
from evaldelta.checks._patterns import TimeBudget
from evaldelta.checks._spec import CheckSpec, read_checks
from evaldelta.errors import (
    JudgeError,
    Location,
    MissingColumnError,
    UsageError,
)
from evaldelta.provider import Provider
from evaldelta.sources import Source, read_records

__all__ = [
    "CheckSet",
    "ScoreResult",
    "load_checks",
    "metric_names",
    "metric_values",
    "missing_field",
    "read_rows",
    "score_rows",
    "score_rows_async",
    "write_rows",
]

Row = dict[str, Any]
NAME_COLUMNS = ("arm", "model", "model_used", "model_version")


@dataclass(frozen=True)
class CheckSet:
    """The compiled checks of one file, in declaration order."""

    path: str
    sha256: str
    mechanical: tuple[Check, ...]
    judges: tuple[JudgeCheck, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        """Every check id, mechanical first (as declared), then judges."""
        return tuple(c.id for c in self.mechanical) + tuple(j.id for j in self.judges)

    def fields(self, include_judges: bool = True) -> tuple[str, ...]:
        """The case columns the checks read."""
        out = [f for c in self.mechanical for f in c.fields]
        if include_judges:
            out += [f for j in self.judges for f in j.fields]
        return tuple(dict.fromkeys(out))

    def spec_line(self, field_name: str) -> CheckSpec | None:
        """The first check that reads ``field_name``."""
        for c in self.mechanical:
            if field_name in c.fields:
                return c.spec
        for j in self.judges:
            if field_name in j.fields:
                return j.spec
        return None


def load_checks(path: str | Path) -> CheckSet:
    """Read, validate and compile a checks file."""
    specs = read_checks(path)
    budget = TimeBudget.for_checks_file()  # the regex time all its checks share
    mechanical = tuple(build_check(s, budget) for s in specs if s.kind != "judge")
    judges = tuple(build_judge(s) for s in specs if s.kind == "judge")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return CheckSet(str(path), digest, mechanical, judges)


def read_rows(path: str | Path | Source) -> list[Row]:
    """Read any source the row seam reads (CSV, JSONL, Parquet, an imported log) into dicts.

    CSV values stay text.
    """
    return read_records(path if isinstance(path, Source) else Source(Path(path)))


def write_rows(rows: Sequence[Row], path: str | Path) -> None:
    """Write rows as CSV, JSONL or Parquet (by suffix), columns in first-seen order."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        with p.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({c: r.get(c) for c in columns}, ensure_ascii=False) + "\n")
    elif suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows]), str(p))
    elif suffix in (".csv", ".tsv"):
        with p.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(
                fh, lineterminator="\n", delimiter="\t" if suffix == ".tsv" else ","
            )
            writer.writerow(columns)
            for r in rows:
                writer.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    else:
        raise UsageError(
            f"cannot tell the output format from {p.name!r}; use .csv, .jsonl or .parquet"
        )


@dataclass(frozen=True)
class ScoreResult:
    """Scored rows, and what the scores rest on (written beside them as ``<out>.meta.json``)."""

    rows: tuple[Row, ...]
    checks_file: str
    checks_sha256: str
    included: tuple[str, ...]
    skipped: tuple[str, ...]
    seed: int
    judges: tuple[JudgePins, ...] = ()
    pairwise: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    timed_out: Mapping[str, int] = field(default_factory=dict)
    """Rows left unscored because a check's pattern timed out, by check id (none: empty)."""

    def meta(self) -> dict[str, Any]:
        """The JSON-able record of pins (checks file hash, judge pins, seed, flips)."""
        return {
            "checks_file": self.checks_file,
            "checks_sha256": self.checks_sha256,
            "included_checks": list(self.included),
            "skipped_checks": list(self.skipped),
            "shuffle_seed": self.seed,
            "judges": [p.__dict__ for p in self.judges],
            "pairwise": {k: dict(v) for k, v in self.pairwise.items()},
            "timed_out_checks": dict(self.timed_out),
        }


def join_cases(rows: list[Row], cases: Sequence[Row], where: str) -> list[Row]:
    """Add case fields (from a cases file keyed by ``case_id``) to each row; rows win ties."""
    by_id: dict[str, Row] = {}
    for c in cases:
        if "case_id" not in c:
            raise MissingColumnError("the cases file needs a case_id column", Location(where))
        by_id[str(c["case_id"])] = c
    return [{**by_id.get(str(r.get("case_id")), {}), **r} for r in rows]


def _require(
    rows: Sequence[Mapping[str, Any]], checks: CheckSet, where: str, with_judges: bool
) -> None:
    columns = set().union(*(r.keys() for r in rows)) if rows else set()
    if "output" not in columns:
        raise MissingColumnError(
            "scoring needs an 'output' column", Location(where, None, "output")
        )
    for name in checks.fields(with_judges):
        if name not in columns:
            spec = checks.spec_line(name)
            used = f" (check {spec.id!r}, {spec.path} line {spec.line})" if spec else ""
            raise MissingColumnError(
                f"the checks read case field {name!r}, which no input column or --cases file "
                f"provides{used}",
                Location(where, None, name),
            )


def _put(row: Row, result: CheckResult) -> None:
    row[f"check.{result.check_id}"] = None if result.passed is None else int(result.passed)
    row[f"reason.{result.check_id}"] = result.reason


def metric_names(
    checks: CheckSet, *, skip_judge: bool = False, pairwise: bool = True
) -> tuple[str, ...]:
    """The numeric columns scoring writes: pass, check.<id>, judge_score[.<id>], pairwise.<id>."""
    judges: list[JudgeCheck] = (
        [] if skip_judge else [j for j in checks.judges if pairwise or j.mode == "single"]
    )
    single = [j for j in judges if j.mode == "single"]
    graded = [j for j in single if j.graded is not None]
    ids = [c.id for c in checks.mechanical] + [j.id for j in single]
    names = ["pass", *(f"check.{i}" for i in ids)]
    names += [f"judge_score.{j.id}" for j in graded]
    names += ["judge_score"] if len(graded) == 1 else []
    names += [f"pairwise.{j.id}" for j in judges if j.mode == "pairwise"]
    return tuple(names)


def metric_values(
    row: Mapping[str, Any], names: Sequence[str]
) -> dict[str, tuple[float | None, str | None]]:
    """``{metric: (value, reason)}`` of one scored row (reason from ``reason.<id>``)."""
    out: dict[str, tuple[float | None, str | None]] = {}
    for name in names:
        value = row.get(name)
        reason = row.get("reason." + name[6:]) if name.startswith("check.") else None
        out[name] = (None if value is None else float(value), reason)
    return out


def missing_field(checks: CheckSet, columns: Sequence[str], with_judges: bool = True) -> str | None:
    """The first case field the checks read that ``columns`` lacks, described; or None."""
    for name in checks.fields(with_judges):
        if name not in columns:
            spec = checks.spec_line(name)
            used = f" (check {spec.id!r}, {spec.path} line {spec.line})" if spec else ""
            return f"the checks read case field {name!r}{used}"
    return None


def score_rows(
    rows: Sequence[Mapping[str, Any]],
    checks: CheckSet,
    *,
    provider: Provider | None = None,
    skip_judge: bool = False,
    seed: int = 0,
    where: str = "<rows>",
    concurrency: int = 4,
    close_provider: bool = False,
    redact_names: Sequence[str] = (),
) -> ScoreResult:
    """Score every row on every check; see the module docstring for the columns written."""
    scoring = _Scoring(rows, checks, provider, skip_judge, where, True, redact_names)
    if scoring.judges and provider is not None:
        asyncio.run(scoring.judge(provider, seed, concurrency, close_provider))
    return scoring.finish(seed)


async def score_rows_async(
    rows: Sequence[Mapping[str, Any]],
    checks: CheckSet,
    *,
    provider: Provider | None = None,
    seed: int = 0,
    where: str = "<rows>",
    redact_names: Sequence[str] = (),
    pairwise: bool = False,
) -> ScoreResult:
    """:func:`score_rows` inside a running event loop (the runner's, per attempt).

    Pairwise judges are left out unless ``pairwise`` (they need two arms' outputs at once).
    """
    scoring = _Scoring(rows, checks, provider, False, where, pairwise, redact_names)
    if scoring.judges and provider is not None:
        await scoring.judge(provider, seed, 4, False)
    return scoring.finish(seed)


class _Scoring:
    """One scoring pass: mechanical checks on construction, judges on demand, then pass."""

    def __init__(
        self,
        rows: Sequence[Mapping[str, Any]],
        checks: CheckSet,
        provider: Provider | None,
        skip_judge: bool,
        where: str,
        pairwise: bool,
        redact_names: Sequence[str],
    ) -> None:
        self.checks = checks
        self.judges = (
            () if skip_judge else tuple(j for j in checks.judges if pairwise or j.mode == "single")
        )
        if self.judges and provider is None:
            raise JudgeError(
                f"{checks.path} declares judge checks ({', '.join(j.id for j in self.judges)}) "
                "but no provider was given; pass one, or skip the judge checks"
            )
        _require(rows, checks, where, not skip_judge)
        self.out = out = [dict(r) for r in rows]
        self.scored = [i for i, r in enumerate(out) if r.get("output") is not None]
        for r in out:
            for c in checks.mechanical:
                _put(r, CheckResult(c.id, None))
        self.timed_out: dict[str, int] = {}
        for i in self.scored:
            for c in checks.mechanical:
                result = c.evaluate(str(out[i]["output"]), out[i])
                if timed_out(result):
                    self.timed_out[c.id] = self.timed_out.get(c.id, 0) + 1
                _put(out[i], result)
        names = {str(r[k]) for r in out for k in NAME_COLUMNS if r.get(k) not in (None, "")}
        self.names = sorted(names | {str(n) for n in redact_names if n})
        self.pins: list[JudgePins] = []
        self.pairwise: dict[str, dict[str, Any]] = {}

    async def judge(
        self, provider: Provider, seed: int, concurrency: int, close_provider: bool
    ) -> None:
        judged = _Judged(self.out, self.scored, provider, seed, self.names, concurrency)
        await judged.all(self.judges, close=close_provider)
        self.pins, self.pairwise = judged.pins, judged.pairwise

    def finish(self, seed: int) -> ScoreResult:
        single = [j for j in self.judges if j.mode == "single"]
        included = tuple(c.id for c in self.checks.mechanical) + tuple(j.id for j in single)
        for r in self.out:
            values = [r.get(f"check.{cid}") for cid in included]
            unscored = not values or None in values or r.get("output") is None
            r["pass"] = 0 if 0 in values else (None if unscored else 1)
        skipped = tuple(j.id for j in self.checks.judges if j not in self.judges)
        return ScoreResult(
            tuple(self.out),
            self.checks.path,
            self.checks.sha256,
            included,
            skipped,
            seed,
            tuple(self.pins),
            self.pairwise,
            self.timed_out,
        )


class _Judged:
    """Runs every judge check in one event loop (a provider's client belongs to one loop)."""

    def __init__(
        self,
        out: list[Row],
        scored: list[int],
        provider: Provider,
        seed: int,
        names: Sequence[str],
        concurrency: int,
    ) -> None:
        self.out, self.scored, self.provider = out, scored, provider
        self.seed, self.names, self.concurrency = seed, names, concurrency
        self.pins: list[JudgePins] = []
        self.pairwise: dict[str, dict[str, Any]] = {}

    async def all(self, judges: Sequence[JudgeCheck], *, close: bool) -> None:
        graded = [j for j in judges if j.mode == "single" and j.graded is not None]
        try:
            for j in judges:
                if j.mode == "pairwise":
                    await self.pair(j)
                else:
                    await self.single(j, only_graded=len(graded) == 1)
        finally:
            if close:
                await self.provider.aclose()

    async def single(self, j: JudgeCheck, *, only_graded: bool) -> None:
        out = self.out
        items = [(out[i], str(out[i]["output"])) for i in self.scored]
        run = await judge_single(
            j,
            items,
            self.provider,
            seed=self.seed,
            redact_names=self.names,
            concurrency=self.concurrency,
        )
        self.pins.append(run.pins)
        for r in out:
            _put(r, CheckResult(j.id, None))
        for i, res in zip(self.scored, run.results, strict=True):
            _put(out[i], res)
            if j.graded is not None:
                out[i][f"judge_score.{j.id}"] = res.score
                if only_graded:
                    out[i]["judge_score"] = res.score

    async def pair(self, j: JudgeCheck) -> None:
        """Pair the first two arms on each (case_id, repeat); write ``pairwise.<id>``."""
        out, scored = self.out, self.scored
        arms = list(dict.fromkeys(str(out[i].get("arm")) for i in scored))
        if len(arms) != 2:
            raise UsageError(f"pairwise judge {j.id!r} needs exactly two arms, found {len(arms)}")
        index = {
            (str(out[i].get("case_id")), str(out[i].get("repeat", 0)), str(out[i].get("arm"))): i
            for i in scored
        }
        keys = sorted({(c, r) for c, r, _ in index})
        pairs = [
            (index[(c, r, arms[0])], index[(c, r, arms[1])])
            for c, r in keys
            if (c, r, arms[0]) in index and (c, r, arms[1]) in index
        ]
        items = [PairItem(out[x], str(out[x]["output"]), str(out[y]["output"])) for x, y in pairs]
        run = await judge_pairwise(
            j,
            items,
            self.provider,
            seed=self.seed,
            redact_names=self.names,
            concurrency=self.concurrency,
        )
        value = {"x": (1.0, 0.0), "y": (0.0, 1.0), "tie": (0.5, 0.5), "flipped": (0.5, 0.5)}
        for (x, y), winner in zip(pairs, run.winners, strict=True):
            vx, vy = value.get(winner, (None, None))
            out[x][f"pairwise.{j.id}"], out[y][f"pairwise.{j.id}"] = vx, vy
        self.pins.append(run.pins)
        self.pairwise[j.id] = {
            "arms": arms,
            "pairs": len(pairs),
            "flips": run.flips,
            "readable": run.readable,
            "flip_rate": run.flip_rate,
        }

"""Reference-bias audit (seed 002): does one of the contestants author the yardstick.

* **Self-agreement**: score each arm's fresh outputs against goldens recorded from one arm
  by exact match after whitespace normalization. The recording arm's count is the number
  its "N/N" never was (seed: 14/40 for the incumbent, 11/40 for the candidate).
* **Triage precision**: of an arm's exact-match failures, which are *substantive* and which
  *cosmetic*. Substantive: the reply fails a requirement check, or it states different
  values than the golden under an ``allowed_values`` check (a different remedy or
  timeframe, even one the policy permits: somebody has to decide which one they want).
  Cosmetic: passes every check and states the same values; split into *sign-off only*
  (equal once the last paragraph is dropped) and *rephrased*. Precision = substantive /
  failures (seed: 2 of 29, about 7%).
* **Symmetry test**: with a yardstick from each arm, does the winner follow authorship?
* **Retrieval form**: relevance labels with an ``origin`` column (which system surfaced
  each labelled document): does each system win on the labels it surfaced?

Requirement checks here are the mechanical ones (the audit runs offline); the library's
:func:`evaldelta.checks.score_rows` runs judge checks when a provider is given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.checks import CheckSet, read_rows, score_rows
from evaldelta.comparison.leakage import CHECK_PREFIX, leakage_from_rows
from evaldelta.comparison.model import RubricLeakage
from evaldelta.errors import (
    InputError,
    Location,
    MissingColumnError,
    UnreadableFileError,
    UsageError,
)
from evaldelta.stats._leakage import LeakageRule

__all__ = [
    "Agreement",
    "AuditResult",
    "CrossTab",
    "RetrievalAudit",
    "RetrievalScore",
    "Triage",
    "TriageCase",
    "Yardstick",
    "audit",
    "normalize_whitespace",
    "read_goldens",
    "retrieval_audit",
]

Row = Mapping[str, Any]


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Yardstick:
    """Reference outputs keyed by case id, and the arm that produced (authored) them."""

    author: str
    texts: Mapping[str, str]
    source: str


def read_goldens(path: str | Path, author: str, column: str = "reference") -> Yardstick:
    """Goldens from a folder of ``<case_id>.txt`` files, or a file's ``column`` by case_id."""
    p = Path(path)
    if p.is_dir():
        texts = {f.stem: f.read_text(encoding="utf-8") for f in sorted(p.glob("*.txt"))}
        if not texts:
            raise UnreadableFileError("the goldens folder holds no .txt files", Location(str(p)))
        return Yardstick(author, texts, str(p))
    rows = read_rows(p)
    if rows and ("case_id" not in rows[0] or column not in rows[0]):
        missing = "case_id" if "case_id" not in rows[0] else column
        raise MissingColumnError(
            f"goldens need columns case_id and {column!r}", Location(str(p), None, missing)
        )
    texts = {str(r["case_id"]): str(r[column]) for r in rows if r.get(column) is not None}
    return Yardstick(author, texts, f"{p}:{column}")


@dataclass(frozen=True)
class Agreement:
    """One arm's outputs scored against one yardstick by normalized exact match."""

    yardstick: str  # the author arm
    arm: str
    matched: int
    compared: int
    raw_matched: int  # equality after strip() only, for contrast
    matched_cases: tuple[str, ...]
    missing: int  # attempts whose case has no golden

    @property
    def rate(self) -> float:
        """The share matched: matched / compared (NaN when nothing was compared)."""
        return self.matched / self.compared if self.compared else float("nan")


@dataclass(frozen=True)
class TriageCase:
    """One exact-match failure: ``substantive`` or ``cosmetic``, and why."""

    case_id: str
    kind: str
    detail: str
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triage:
    """An arm's exact-match failures on one yardstick, split by whether they matter."""

    yardstick: str
    arm: str
    cases: tuple[TriageCase, ...]

    @property
    def failures(self) -> int:
        """How many exact-match failures there are."""
        return len(self.cases)

    @property
    def substantive(self) -> tuple[TriageCase, ...]:
        """The failures worth reading."""
        return tuple(c for c in self.cases if c.kind == "substantive")

    @property
    def cosmetic(self) -> tuple[TriageCase, ...]:
        """The failures that pass every check and state the same values as the golden."""
        return tuple(c for c in self.cases if c.kind == "cosmetic")

    @property
    def precision(self) -> float:
        """Substantive / failures: the share of red cases worth an engineer's time."""
        return len(self.substantive) / self.failures if self.failures else float("nan")


@dataclass(frozen=True)
class CrossTab:
    """Requirement pass/fail of two arms on shared attempts."""

    baseline: str
    candidate: str
    both_pass: int
    only_baseline: int
    only_candidate: int
    both_fail: int


@dataclass(frozen=True)
class AuditResult:
    """Everything the audit found; rendered by :mod:`evaldelta.report.audit`."""

    arms: tuple[str, ...]
    cases: int
    agreements: tuple[Agreement, ...]
    triage: tuple[Triage, ...]
    requirements: Mapping[str, tuple[int, int]]  # arm -> (passed, scored)
    cross_tab: CrossTab | None
    winners: Mapping[str, str]  # yardstick author -> arm with the most matches ("tie" if tied)
    follows_authorship: bool | None
    checks: tuple[str, ...]
    checks_file: str | None
    leakage: RubricLeakage | None = None  # the rubric leakage flag, per criterion

    def agreement(self, yardstick: str, arm: str) -> Agreement:
        """The agreement of ``arm`` on the yardstick authored by ``yardstick``."""
        return next(a for a in self.agreements if a.yardstick == yardstick and a.arm == arm)


def _body(text: str) -> str:
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return normalize_whitespace("\n\n".join(paras[:-1] if len(paras) > 1 else paras))


def _arms(rows: Sequence[Row]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(r["arm"]) for r in rows))


def audit(
    outputs: Sequence[Row],
    yardsticks: Sequence[Yardstick],
    *,
    checks: CheckSet | None = None,
    where: str = "<outputs>",
    leakage_rule: LeakageRule | None = None,
) -> AuditResult:
    """Self-agreement, triage, requirements and the symmetry test; see the module docstring.

    ``outputs`` are rows with ``case_id``, ``arm`` and ``output`` (and the case fields the
    checks read). Each yardstick's author must be one of the arms. With checks and two
    arms, every criterion is also screened for rubric leakage (:mod:`evaldelta.comparison.leakage`)
    under ``leakage_rule``, the first yardstick's author as the baseline.
    """
    if not outputs:
        raise InputError("no outputs to audit", Location(where))
    for column in ("case_id", "arm", "output"):
        if column not in outputs[0]:
            raise MissingColumnError(
                f"the audit needs a {column!r} column", Location(where, None, column)
            )
    arms = _arms(outputs)
    if not yardsticks:
        raise UsageError("give goldens (--goldens ARM=PATH) for at least one arm")
    for y in yardsticks:
        if y.author not in arms:
            raise UsageError(
                f"goldens author {y.author!r} is not an arm of the outputs ({', '.join(arms)})"
            )
    scored = score_rows(outputs, checks, skip_judge=True, where=where).rows if checks else None
    agreements = [_agreement(y, arm, outputs) for y in yardsticks for arm in arms]
    triage: list[Triage] = []
    if checks is not None and scored is not None:
        for y in yardsticks:
            for arm in arms:
                if arm != y.author:
                    triage.append(_triage(y, arm, scored, checks))
    requirements: dict[str, tuple[int, int]] = {}
    cross = None
    if scored is not None:
        for arm in arms:
            values = [r["pass"] for r in scored if str(r["arm"]) == arm and r["pass"] is not None]
            requirements[arm] = (sum(values), len(values))
        if len(arms) == 2:
            cross = _cross_tab(scored, yardsticks[0].author, arms)
    winners = {}
    for y in yardsticks:
        counts = {a.arm: a.rate for a in agreements if a.yardstick == y.author}
        best = max(counts.values())
        top = [arm for arm, v in counts.items() if v == best]
        winners[y.author] = top[0] if len(top) == 1 else "tie"
    follows = None
    if len(yardsticks) >= 2:
        follows = all(w == author for author, w in winners.items())
    return AuditResult(
        arms,
        len({str(r["case_id"]) for r in outputs}),
        tuple(agreements),
        tuple(triage),
        requirements,
        cross,
        winners,
        follows,
        tuple(c.id for c in checks.mechanical) if checks else (),
        checks.path if checks else None,
        _leakage(scored, checks, yardsticks[0].author, arms, where, leakage_rule),
    )


def _leakage(
    scored: Sequence[Row] | None,
    checks: CheckSet | None,
    baseline: str,
    arms: tuple[str, ...],
    where: str,
    rule: LeakageRule | None,
) -> RubricLeakage | None:
    """Every scored criterion: the mechanical checks, and check.<id> columns the rows carry.

    A judge check the rows hold no column for (the audit runs offline) is named as not
    assessed rather than left out silently.
    """
    if scored is None or checks is None or len(arms) != 2:
        return None
    ids = [c.id for c in checks.mechanical]
    present = {
        k.removeprefix(CHECK_PREFIX) for r in scored for k in r if k.startswith(CHECK_PREFIX)
    }
    ids += sorted(present - set(ids))
    specs = {c.id: c.spec.spec for c in checks.mechanical}
    specs.update({j.id: j.spec.spec for j in checks.judges})
    skipped = {
        j.id: "judge checks, not run by the audit (score the rows with evaldelta score first)"
        for j in checks.judges
        if j.id not in ids
    }
    candidate = next(a for a in arms if a != baseline)
    return leakage_from_rows(
        scored, ids, baseline, candidate, specs=specs, not_assessed=skipped, rule=rule, where=where
    )


def _agreement(y: Yardstick, arm: str, rows: Sequence[Row]) -> Agreement:
    matched, raw, compared, missing = [], 0, 0, 0
    for r in rows:
        if str(r["arm"]) != arm or r.get("output") is None:
            continue
        golden = y.texts.get(str(r["case_id"]))
        if golden is None:
            missing += 1
            continue
        compared += 1
        out = str(r["output"])
        if normalize_whitespace(out) == normalize_whitespace(golden):
            matched.append(str(r["case_id"]))
        raw += out.strip() == golden.strip()
    return Agreement(y.author, arm, len(matched), compared, raw, tuple(matched), missing)


def _triage(y: Yardstick, arm: str, scored: Sequence[Row], checks: CheckSet) -> Triage:
    cases = []
    valued = [c for c in checks.mechanical if c.kind == "allowed_values"]
    for r in scored:
        cid = str(r["case_id"])
        golden = y.texts.get(cid)
        if str(r["arm"]) != arm or golden is None or r.get("output") is None:
            continue
        out = str(r["output"])
        if normalize_whitespace(out) == normalize_whitespace(golden):
            continue
        failing = tuple(c.id for c in checks.mechanical if r.get(f"check.{c.id}") == 0)
        if failing:
            why = "; ".join(f"{c}: {r.get(f'reason.{c}')}" for c in failing)
            cases.append(TriageCase(cid, "substantive", f"fails {why}", failing))
            continue
        differs = []
        for c in valued:
            mine, theirs = c.evaluate(out, r).stated, c.evaluate(golden, r).stated
            if set(mine) != set(theirs):
                differs.append(
                    (
                        c.id,
                        f"{c.id}: states {', '.join(mine) or 'nothing'} where the golden "
                        f"states {', '.join(theirs) or 'nothing'} (both permitted)",
                    )
                )
        if differs:
            cases.append(
                TriageCase(
                    cid,
                    "substantive",
                    "; ".join(d for _, d in differs),
                    tuple(i for i, _ in differs),
                )
            )
        elif _body(out) == _body(golden):
            cases.append(TriageCase(cid, "cosmetic", "sign-off only"))
        else:
            cases.append(TriageCase(cid, "cosmetic", "rephrased"))
    return Triage(y.author, arm, tuple(sorted(cases, key=lambda c: c.case_id)))


def _cross_tab(scored: Sequence[Row], baseline: str, arms: tuple[str, ...]) -> CrossTab:
    cand = next(a for a in arms if a != baseline)
    by: dict[tuple[str, str, str], Any] = {
        (str(r["arm"]), str(r["case_id"]), str(r.get("repeat", 0))): r["pass"] for r in scored
    }
    cells = [0, 0, 0, 0]
    for (arm, cid, rep), b in by.items():
        c = by.get((cand, cid, rep))
        if arm != baseline or b is None or c is None:
            continue
        cells[(0 if b else 2) + (0 if c else 1)] += 1
    return CrossTab(baseline, cand, cells[0], cells[1], cells[2], cells[3])


@dataclass(frozen=True)
class RetrievalScore:
    """One system's retrieval scored on the labels from one origin (or ``all``)."""

    labels_from: str
    arm: str
    relevant_found: int
    relevant_labelled: int
    retrieved: int
    unjudged: int  # retrieved documents with no label at all

    @property
    def recall(self) -> float:
        """Relevant labelled documents found / relevant labelled documents."""
        return (
            self.relevant_found / self.relevant_labelled if self.relevant_labelled else float("nan")
        )


@dataclass(frozen=True)
class RetrievalAudit:
    """Reference bias in retrieval labels: who surfaced the labelled documents, who wins."""

    origins: Mapping[str, int]  # labelled documents per origin system
    scores: tuple[RetrievalScore, ...]
    winners: Mapping[str, str]  # labels_from -> best arm by recall
    dominant_origin: str | None  # an origin surfacing >= 80% of the labels
    follows_authorship: bool | None


def retrieval_audit(
    labels: Sequence[Row], runs: Sequence[Row], *, k: int | None = None
) -> RetrievalAudit:
    """Score each system's top-k on all labels and on each origin's labels.

    ``labels``: ``query_id``, ``doc_id``, ``relevant`` (0/1), ``origin`` (the system(s) that
    surfaced the document, ``|``-separated). ``runs``: ``query_id``, ``arm``, ``doc_id``
    and optionally ``rank`` (used with ``k``).
    """
    for name, rows, cols in (
        ("labels", labels, ("query_id", "doc_id", "relevant", "origin")),
        ("runs", runs, ("query_id", "arm", "doc_id")),
    ):
        if not rows:
            raise InputError(f"the {name} file has no rows", Location(name))
        for col in cols:
            if col not in rows[0]:
                raise MissingColumnError(
                    f"the {name} file needs a {col!r} column", Location(name, None, col)
                )
    origin_of: dict[tuple[str, str], tuple[str, ...]] = {}
    relevant: set[tuple[str, str]] = set()
    for r in labels:
        key = (str(r["query_id"]), str(r["doc_id"]))
        origin_of[key] = tuple(o.strip() for o in str(r["origin"]).split("|") if o.strip())
        if str(r["relevant"]).strip().lower() in ("1", "1.0", "true", "yes", "relevant"):
            relevant.add(key)
    arms = _arms(runs)
    got: dict[str, set[tuple[str, str]]] = {a: set() for a in arms}
    for r in runs:
        rank = r.get("rank")
        if k is not None and rank is not None and int(str(rank)) > k:
            continue
        got[str(r["arm"])].add((str(r["query_id"]), str(r["doc_id"])))
    origins: dict[str, int] = {}
    for o in origin_of.values():
        for name in o:
            origins[name] = origins.get(name, 0) + 1
    scores, winners = [], {}
    for subset in ["all", *sorted(origins)]:
        rel = {d for d in relevant if subset == "all" or subset in origin_of[d]}
        row = []
        for arm in arms:
            docs = got[arm]
            row.append(
                RetrievalScore(
                    subset,
                    arm,
                    len(docs & rel),
                    len(rel),
                    len(docs),
                    sum(1 for d in docs if d not in origin_of),
                )
            )
        scores += row
        best = max(s.recall for s in row)
        top = [s.arm for s in row if s.recall == best]
        winners[subset] = top[0] if len(top) == 1 else "tie"
    total = len(origin_of)
    dominant = next((o for o, n in origins.items() if n >= 0.8 * total), None)
    systems = [o for o in origins if o in arms]
    follows: bool | None = None
    if len(systems) >= 2:
        follows = all(winners[o] == o for o in systems)
    elif dominant is not None and dominant in arms:
        follows = winners["all"] == dominant
    return RetrievalAudit(origins, tuple(scores), winners, dominant, follows)

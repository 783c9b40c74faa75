"""Rubric leakage: is one criterion's failures concentrated in one arm (seed 002).

Seed 002: "the incumbent's house style leaks into what feels like a requirement: a preferred
sign-off becomes 'ends with a next step' [...] The candidate then loses points for not
sounding like its predecessor." A criterion shaped like that shows a lopsided discordant
split: the arm whose style it encodes almost always passes, and the pairs where the arms
disagree nearly all go its way.

The rule (:class:`LeakageRule`, every threshold a parameter) flags a criterion when all three
hold, in whichever direction the split leans (the rule is symmetric in the arms):

1. the favoured arm passes it on at least ``min_pass_rate`` of the shared pairs (default
   0.9: "passes almost always");
2. at least ``min_share`` of the discordant pairs go the favoured arm's way (default 0.8:
   the failures sit in one arm, not merely more in one);
3. the exact two-sided McNemar test of the split (McNemar 1947; a binomial test of ``b`` in
   ``b + c`` at 0.5, ``scipy.stats.binomtest``), Holm-adjusted over the criteria of one
   rubric (Holm 1979: every criterion is screened, so the family is the rubric), is below
   ``alpha`` (default 0.05). With no pair in the other direction this needs at least six
   discordant pairs (``2 * 0.5**6 = 0.031``; five give 0.0625) before any adjustment.

A flag is a request for review, not a verdict: a real requirement one arm keeps breaking
(the candidate promising "delivery by Friday") trips it too when it is lopsided enough.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evaldelta.stats._multiple import holm
from evaldelta.stats._validate import check_count, warn_degenerate

__all__ = ["Asymmetry", "LeakageRule", "criterion_asymmetry"]

Favoured = Literal["baseline", "candidate", "neither"]
NAN = float("nan")


@dataclass(frozen=True)
class LeakageRule:
    """When a criterion is flagged "review: possibly style, not requirement" (module doc)."""

    min_pass_rate: float = 0.9
    min_share: float = 0.8
    alpha: float = 0.05

    def __post_init__(self) -> None:
        for name in ("min_pass_rate", "min_share", "alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number; got {value!r}.")
            if not 0.0 <= float(value) <= 1.0 or math.isnan(value):
                raise ValueError(f"{name} must be between 0 and 1; got {value!r}.")
        if self.min_share <= 0.5:
            raise ValueError(
                f"min_share must be above 0.5 (a share of the discordant pairs in one "
                f"direction); got {self.min_share!r}."
            )


@dataclass(frozen=True)
class Asymmetry:
    """One criterion's paired 2x2 table, its discordant split, the exact test and the flag.

    ``only_baseline`` is b (the baseline passes, the candidate fails), ``only_candidate`` c.
    ``share`` is the favoured direction's share of the b + c discordant pairs (NaN with
    none); ``pvalue`` the exact two-sided McNemar p, ``pvalue_holm`` adjusted over the
    criteria assessed together.
    """

    n: int
    both_pass: int
    only_baseline: int
    only_candidate: int
    both_fail: int
    baseline_rate: float
    candidate_rate: float
    favoured: Favoured
    share: float
    pvalue: float
    pvalue_holm: float
    flagged: bool

    @property
    def discordant(self) -> int:
        """The pairs on which the arms disagree: b + c."""
        return self.only_baseline + self.only_candidate


def criterion_asymmetry(
    tables: Sequence[tuple[int, int, int, int]], rule: LeakageRule | None = None
) -> tuple[Asymmetry, ...]:
    """Screen each criterion of one rubric for a one-sided discordant split (module doc).

    ``tables`` holds one ``(both_pass, only_baseline, only_candidate, both_fail)`` per
    criterion, counted on the pairs both arms were scored on. A criterion with no pair has
    NaN rates and p-value (with a :class:`DegenerateDataWarning`) and is never flagged.
    """
    from evaldelta.stats._paired import mcnemar_exact

    rule = rule or LeakageRule()
    checked = []
    for i, table in enumerate(tables):
        if len(table) != 4:
            raise ValueError(f"tables[{i}] must be four counts; got {table!r}.")
        checked.append(tuple(check_count(f"tables[{i}][{k}]", v) for k, v in enumerate(table)))
    pvalues = []
    for a, b, c, d in checked:
        if a + b + c + d == 0:
            warn_degenerate("a criterion has no pair scored under both arms; its p-value is nan")
            pvalues.append(NAN)
        else:
            pvalues.append(mcnemar_exact(b, c).pvalue)
    adjusted = holm(pvalues)
    return tuple(_one(t, p, q, rule) for t, p, q in zip(checked, pvalues, adjusted, strict=True))


def _one(table: tuple[int, ...], pvalue: float, holm_p: float, rule: LeakageRule) -> Asymmetry:
    a, b, c, d = table
    n = a + b + c + d
    base_rate = (a + b) / n if n else NAN
    cand_rate = (a + c) / n if n else NAN
    favoured: Favoured = "baseline" if b > c else "candidate" if c > b else "neither"
    share = max(b, c) / (b + c) if b + c else NAN
    rate = base_rate if favoured == "baseline" else cand_rate
    flagged = (
        favoured != "neither"
        and rate >= rule.min_pass_rate
        and share >= rule.min_share
        and holm_p < rule.alpha
    )
    return Asymmetry(
        n, a, b, c, d, base_rate, cand_rate, favoured, share, pvalue, holm_p, bool(flagged)
    )

"""The standardized rule under several mixes, and the shares at which its outcome changes.

Which mixes a ``[standardized]`` rule judges
-------------------------------------------
``mix = "traffic"`` or a mix's name judges that one mix. ``mix = "chosen"`` (the default)
judges every mix given with ``--mix`` (``compare(mix=[...])``), one rule each: the
conservative choice, since the gate passes only when every rule passes, a release passes
the standardized rule only if it holds under every mix the team named (today's traffic, a
projected one, equal weights). No adjustment is needed for that pass decision
(intersection-union, Berger 1982); each mix's fail decision joins the family whose fail
decisions are Holm-adjusted (:mod:`evaldelta.gating.verdict`). With one ``--mix`` this is
the single rule it always was.

Break-even shares of the rule
-----------------------------
The fixed-mix delta is linear in one slice's share and the ends of its normal interval
cross a bound at the roots of a quadratic (:func:`evaldelta.stats.break_even` with
``bound = -margin``). Between two crossings the rule's outcome is constant, so the nearest
crossing on either side of today's share at which the outcome differs is where the rule
would change, and to what. These are the rule's own outcomes before the fail decisions are
adjusted across rules (an adjusted fail needs a share beyond the one given), and only for a
rule judged on its numbers (not one made inconclusive by a zero-width interval or too few
informative pairs, which no share changes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from evaldelta import stats
from evaldelta.comparison.model import PairComparison, Standardized

__all__ = ["RuleBreakEven", "rule_break_even", "standardized_for"]


@dataclass(frozen=True)
class RuleBreakEven:
    """Where one slice's share of the mix would change a standardized rule's outcome.

    ``outcome`` is the rule's outcome at today's ``share``; ``up`` the nearest larger share
    at which it becomes ``up_outcome`` (None: no share up to 100% changes it), ``down`` the
    nearest smaller one (down to 0%).
    """

    slice: str
    share: float
    outcome: str
    up: float | None
    up_outcome: str | None
    down: float | None
    down_outcome: str | None


def standardized_for(pair: PairComparison, mix: str) -> list[Standardized]:
    """The standardized results a rule on ``mix`` judges: every --mix one for ``chosen``."""
    if mix == "chosen":
        chosen = [s for s in pair.standardized if s.mix != "traffic"]
        return chosen or list(pair.standardized[:1])
    return [s for s in pair.standardized if s.mix in (mix, f"file:{mix}")][:1]


def rule_break_even(
    std: Standardized,
    bound: float,
    basis: str,
    confidence: float,
    judge: Callable[[float, stats.ConfidenceInterval, float, str], tuple[str, str | None]],
) -> tuple[RuleBreakEven, ...]:
    """Each used slice's nearest shares, up and down, at which the rule's outcome changes."""
    est, ses = std.slice_deltas, std.slice_ses
    names = [s for s in std.delta.used_slices if s in est and s in ses]
    if len(names) < 2 or not all(math.isfinite(ses[s]) and math.isfinite(est[s]) for s in names):
        return ()
    weights = {s: std.delta.weights[s] for s in names}
    out = []
    for name in names:
        be = stats.break_even(
            est, ses, weights, name, confidence=confidence, bound=bound, df=std.mix_df
        )
        crossings = [be.sign_flip] if basis == "point" else list(be.interval_flips)
        points = sorted({p for p in crossings if p is not None})

        def outcome(share: float, name: str = name) -> str:
            d, low, high = stats.delta_at_share(
                est, ses, weights, name, share, confidence, std.mix_df
            )
            return judge(d, stats.ConfidenceInterval(low, high), bound, basis)[0]

        now = outcome(be.share)
        up = _first_change(now, points, be.share, outcome, upward=True)
        down = _first_change(now, points, be.share, outcome, upward=False)
        out.append(
            RuleBreakEven(
                slice=name,
                share=be.share,
                outcome=now,
                up=up[0] if up else None,
                up_outcome=up[1] if up else None,
                down=down[0] if down else None,
                down_outcome=down[1] if down else None,
            )
        )
    return tuple(out)


def _first_change(
    now: str, points: list[float], share: float, outcome: Callable[[float], str], *, upward: bool
) -> tuple[float, str] | None:
    """The nearest crossing past ``share`` beyond which the outcome is not ``now``."""
    ahead = [p for p in points if p > share] if upward else [p for p in points if p < share]
    ahead.sort(reverse=not upward)
    for i, p in enumerate(ahead):
        end = ahead[i + 1] if i + 1 < len(ahead) else (1.0 if upward else 0.0)
        beyond = outcome((p + end) / 2.0)  # constant between two crossings
        if beyond != now:
            return p, beyond
    return None

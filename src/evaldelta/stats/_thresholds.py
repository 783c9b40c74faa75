"""The reliability thresholds of the statistics, in a module that imports nothing.

The policy parser and the reports read them (``from evaldelta.stats import MIN_INFORMATIVE``),
and that must not load numpy and scipy: importing the gate's command module is on the path
of ``evaldelta --help`` (issue 12).
"""

from __future__ import annotations

MIN_CLUSTERS = 20  # below this, the warning of Cameron, Gelbach and Miller (2008)
UNEQUAL_CV = 1.0  # coefficient of variation of cluster sizes above which sizes are "very unequal"
# a clustered pass rate (Korn-Graubard) on fewer clusters than this covers 0.92 when clustering
# is strong (icc 0.3) and the rate 0.9, at 20 clusters as at 10 (docs/calibration.md); from
# 50 clusters on it held at 0.94 on that grid (issue 24, item 16)
MIN_RATE_CLUSTERS = 50

WALD_MIN_PAIRS = 100  # below this the Wald paired interval under-covers (docs/calibration.md)
# fewer informative pairs (non-zero deltas) than this: a paired t interval rests on too little
# to be trusted (docs/calibration.md, zero-inflated deltas); the gate is inconclusive there
MIN_INFORMATIVE = 10
# fewer discordant pairs than this (b + c): Newcombe's paired interval covers as little as 0.89
# when they all go one way (40 pairs, 5% discordance; docs/calibration.md, one-way grid), so
# the reports say "rests on k discordant pairs" beside it (issue 24, item 12)
MIN_DISCORDANT = 5
# a paired t on case means of pass/fail repeats with fewer cases than this: its coverage on
# the draws that print no other warning falls to 0.91 (20 cases; docs/calibration.md), so the
# reports say "rests on n cases" and the gate is inconclusive (issue 24, item 14)
MIN_REPEAT_CASES = 30

# Brown, Cai and DasGupta (2001), section 4.1.1: with x* or fewer successes (failures) the
# Wilson lower (upper) limit is widened to the one-sided Poisson limit. The paper uses x* = 2
# for n <= 50 and 3 up to n = 100; x* = 3 for every n keeps the exact coverage at or above
# 0.933 on bench/calibrate.py's grid (n 10 to 10,000, rates 0.01 to 0.99), where plain Wilson
# falls to 0.904 (n = 10, rate 0.01 or 0.99).
MIN_MINORITY_CASES = 5  # fewer cases with the rarer outcome: repeats' design effect unknown
POISSON_EDGE = 3

"""Multiple-comparison adjustment of p-values."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence


def holm(pvalues: Sequence[float]) -> tuple[float, ...]:
    """Holm step-down adjusted p-values, in the input order.

    Method: Holm (1979), "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6:65-70: with the m p-values sorted ascending,
    ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``; matches
    ``statsmodels.stats.multitest.multipletests(p, method="holm")[1]``. NaN entries pass
    through as NaN and are not counted in the family size m.
    """
    values: list[float] = []
    for i, p in enumerate(pvalues):
        if isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise ValueError(f"pvalues[{i}] must be a number; got {p!r}.")
        x = float(p)
        if not math.isnan(x) and not 0.0 <= x <= 1.0:
            raise ValueError(f"pvalues[{i}] must be between 0 and 1 or nan; got {p!r}.")
        values.append(x)
    finite = sorted((x, i) for i, x in enumerate(values) if not math.isnan(x))
    m = len(finite)
    out = [float("nan")] * len(values)
    running = 0.0
    for rank, (x, i) in enumerate(finite):
        running = max(running, min(1.0, (m - rank) * x))
        out[i] = running
    return tuple(out)

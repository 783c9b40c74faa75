"""Rounding and number formatting: the only place numbers are rounded.

Rounding is half-up on the decimal value a person would write (0.8325 -> 0.833,
0.8015 -> 0.802), after removing binary floating-point noise at 12 significant digits,
so that display never depends on how a sum happened to round in binary.

Where a decision hangs on a figure (a cost ratio against its bound, an interval's end
against zero or a margin, a p-value against alpha), the figure gets as many more digits as
it needs to print differently from what it is judged against (:func:`places_apart`): a
ratio of 1.503 failing ``<= 1.5`` reads ``1.503 <= 1.500``, never ``1.50 <= 1.50``
(issue 24.2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

__all__ = [
    "MORE_PLACES",
    "fmt",
    "fmt_ci",
    "fmt_delta",
    "fmt_p",
    "fmt_pct",
    "fmt_rate",
    "fmt_signed",
    "places_apart",
]

MORE_PLACES = 4  # at most this many decimals more than usual, to tell a figure from its bound


def _round(x: float, places: int) -> Decimal:
    clean = Decimal(f"{x:.12g}")
    return clean.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def places_apart(
    values: Iterable[float | None], bound: float | None, places: int, scale: float = 1.0
) -> int:
    """The fewest decimals, from ``places``, at which each value prints unlike ``bound``.

    Values equal to the bound (or undefined) are left out: nothing tells them apart. The
    search stops :data:`MORE_PLACES` decimals on; a value still not apart there differs by
    rounding noise, and keeps ``places``. ``scale`` is the display unit's factor (100 for
    points).
    """
    if not _finite(bound):
        return places
    b = float(bound) * scale  # type: ignore[arg-type]
    differ = [float(v) * scale for v in values if _finite(v) and float(v) * scale != b]  # type: ignore[arg-type]
    for p in range(places, places + MORE_PLACES + 1):
        if all(_round(v, p) != _round(b, p) for v in differ):
            return p
    return places


def fmt(x: float | None, places: int = 3) -> str:
    """A number rounded half-up to ``places`` decimals; ``n/a`` when undefined."""
    if x is None or not math.isfinite(x):
        return "n/a"
    out = _round(x, places)
    return f"{out:.{places}f}" if places > 0 else f"{out:.0f}"


def fmt_signed(x: float | None, places: int = 3) -> str:
    """Like :func:`fmt` with an explicit sign (``+0.050``, ``-0.070``)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{_round(x, places):+.{places}f}"


def fmt_delta(x: float | None, binary: bool, places: int | None = None) -> str:
    """A difference: percentage points for rates, score units for graded metrics."""
    if binary:
        return f"{fmt_signed(None if x is None else x * 100, 1 if places is None else places)} pts"
    return fmt_signed(x, 3 if places is None else places)


def fmt_ci(low: float | None, high: float | None, binary: bool, places: int | None = None) -> str:
    """An interval in the same units as :func:`fmt_delta`.

    Whether an interval excludes zero is a decision, so an end that is not zero never
    prints as zero: it gets the decimals it needs (``[-0.7, -0.02]``, not ``[-0.7, -0.0]``).
    """
    scale = 100 if binary else 1
    p = (1 if binary else 3) if places is None else places
    lo = None if low is None else low * scale
    hi = None if high is None else high * scale
    lo_p, hi_p = (places_apart([x], 0.0, p) for x in (lo, hi))
    return f"[{fmt_signed(lo, lo_p)}, {fmt_signed(hi, hi_p)}]"


def fmt_rate(x: float | None, binary: bool) -> str:
    """A rate (3 decimals) or a graded mean (3 decimals)."""
    return fmt(x, 3)


def fmt_pct(x: float | None, places: int = 0) -> str:
    """A share as a percentage (``45%``)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{fmt(x * 100, places)}%"


def fmt_p(p: float | None, alpha: float | None = None) -> str:
    """A p-value: three decimals (``2.5e-04`` below 0.001), ``<1e-16`` at the floor.

    With ``alpha`` (the level it is judged against), a p-value that is not alpha never
    prints as alpha: 0.0496 is ``0.0496``, not ``0.050``.
    """
    if p is None or not math.isfinite(p):
        return "n/a"
    if p < 1e-16:
        return "<1e-16"
    if p < 0.001:
        return f"{p:.2e}"
    return fmt(p, places_apart([p], alpha, 3))

"""Rounding and number formatting: the only place numbers are rounded.

Rounding is half-up on the decimal value a person would write (0.8325 -> 0.833,
0.8015 -> 0.802), after removing binary floating-point noise at 12 significant digits,
so that display never depends on how a sum happened to round in binary.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["fmt", "fmt_ci", "fmt_delta", "fmt_p", "fmt_pct", "fmt_rate", "fmt_signed"]


def _round(x: float, places: int) -> Decimal:
    clean = Decimal(f"{x:.12g}")
    return clean.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


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
    """An interval in the same units as :func:`fmt_delta`."""
    scale = 100 if binary else 1
    p = (1 if binary else 3) if places is None else places
    lo = None if low is None else low * scale
    hi = None if high is None else high * scale
    return f"[{fmt_signed(lo, p)}, {fmt_signed(hi, p)}]"


def fmt_rate(x: float | None, binary: bool) -> str:
    """A rate (3 decimals) or a graded mean (3 decimals)."""
    return fmt(x, 3)


def fmt_pct(x: float | None, places: int = 0) -> str:
    """A share as a percentage (``45%``)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{fmt(x * 100, places)}%"


def fmt_p(p: float | None) -> str:
    """A p-value: three significant digits, ``<1e-16`` at the floor."""
    if p is None or not math.isfinite(p):
        return "n/a"
    if p < 1e-16:
        return "<1e-16"
    if p < 0.001:
        return f"{p:.2e}"
    return fmt(p, 3)

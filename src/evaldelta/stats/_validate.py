"""Argument checks shared by the statistics functions.

Each check raises :class:`ValueError` with a full sentence naming the argument and its value.
"""

from __future__ import annotations

import math
import numbers
import warnings

from evaldelta.stats._results import DegenerateDataWarning

ALTERNATIVES = ("two-sided", "larger", "smaller")


def warn_degenerate(message: str) -> None:
    """Emit a :class:`DegenerateDataWarning` attributed to the public caller."""
    warnings.warn(message, DegenerateDataWarning, stacklevel=3)


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {value!r}.")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    return out


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a finite float >= 0, or raise ValueError naming it."""
    out = check_real(name, value)
    if out < 0:
        raise ValueError(f"{name} must be non-negative; got {value!r}.")
    return out


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a finite float > 0, or raise ValueError naming it."""
    out = check_real(name, value)
    if out <= 0:
        raise ValueError(f"{name} must be positive; got {value!r}.")
    return out


def check_count(name: str, value: object) -> int:
    """Return ``value`` as a non-negative int, or raise ValueError naming it."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}.")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)):
        if not float(value).is_integer():
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}.")
        out = int(float(value))
    else:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}.")
    if out < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}.")
    return out


def check_probability(name: str, value: object, *, open_interval: bool = True) -> float:
    """Return ``value`` as a float in (0, 1) (or [0, 1]), or raise ValueError naming it."""
    out = check_real(name, value)
    if open_interval and not 0.0 < out < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1; got {value!r}.")
    if not open_interval and not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1 inclusive; got {value!r}.")
    return out


def check_confidence(confidence: object) -> float:
    """Return the confidence level as a float in (0, 1), or raise ValueError."""
    return check_probability("confidence", confidence)


def check_alternative(alternative: object) -> str:
    """Return the alternative if it is one of ALTERNATIVES, or raise ValueError."""
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}."
        )
    return str(alternative)


def check_sd(name: str, value: object, n: int) -> float:
    """A standard deviation: finite and >= 0, except that it is undefined (nan) when n < 2."""
    if n < 2 and isinstance(value, float) and math.isnan(value):
        return value
    return check_nonnegative(name, value)


def check_mean(name: str, value: object, n: int) -> float:
    """A mean: finite, except that it is undefined (nan) when n == 0."""
    if n == 0 and isinstance(value, float) and math.isnan(value):
        return value
    return check_real(name, value)

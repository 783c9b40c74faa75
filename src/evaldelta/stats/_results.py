"""Result types and the warning raised for undefined statistics.

Every public function in :mod:`evaldelta.stats` returns one of these frozen dataclasses.
Rounding and formatting never happen here; an undefined value is ``float('nan')`` and is
accompanied by a :class:`DegenerateDataWarning`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

__all__ = [
    "BreakEven",
    "ConfidenceInterval",
    "DegenerateDataWarning",
    "Estimate",
    "FixedMix",
    "FrozenDict",
    "PairedResult",
    "PowerResult",
    "ReliabilityWarning",
    "SimpsonResult",
    "Standardization",
    "StandardizedRate",
    "StatisticsWarning",
    "TestResult",
    "UnpairedResult",
]


K = TypeVar("K")
V = TypeVar("V")


class StatisticsWarning(UserWarning):
    """Base of the warnings the statistics raise; a comparison keeps each as a note."""


class DegenerateDataWarning(StatisticsWarning):
    """A statistic is undefined for the data given (for example n = 0 or a single cluster).

    The statistic is returned as ``float('nan')``, never as 0.
    """


class ReliabilityWarning(StatisticsWarning):
    """A statistic is computed, but its interval may not hold its coverage for these data.

    Raised for few clusters, very unequal clusters, a Wald interval on few pairs.
    """


class FrozenDict(dict[K, V]):
    """A read-only dict, so results stay immutable.

    ``dataclasses.asdict`` and ``json`` still treat it as the dict it is (a
    ``MappingProxyType`` is neither copied by ``asdict`` nor encoded by ``json``).
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a result's mapping is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise TypeError("a result's mapping is read-only")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=repr)))


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval ``[low, high]``."""

    low: float
    high: float


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test: its statistic, two-sided p-value and the method used."""

    __test__ = False  # not a pytest test class despite the name

    statistic: float
    pvalue: float
    method: str


@dataclass(frozen=True)
class Estimate:
    """One arm's rate or mean in one slice, with its standard error and interval."""

    estimate: float
    se: float
    ci: ConfidenceInterval
    n: int
    method: str
    df: float | None = None

    def ci_at(self, confidence: float) -> ConfidenceInterval:
        """The interval at another confidence level, by the method that made it."""
        from evaldelta.stats._inference import interval_at

        return interval_at(self, confidence)


@dataclass(frozen=True)
class PairedResult:
    """Candidate minus baseline on the same cases.

    ``informative`` is the number of pairs whose delta is non-zero (for binary data the
    discordant pairs ``b + c``). ``b`` counts pairs only the baseline passed and ``c`` pairs
    only the candidate passed, ``a`` pairs both passed; ``interval`` names the binary
    interval (``newcombe`` or ``wald``). :meth:`ci_at` recomputes the interval at another
    confidence level.
    """

    estimate: float
    se: float
    ci: ConfidenceInterval
    pvalue: float
    n: int
    informative: int | None
    method: str
    confidence: float
    b: int | None = None
    c: int | None = None
    statistic: float | None = None
    df: float | None = None
    a: int | None = None
    interval: str | None = None

    def ci_at(self, confidence: float) -> ConfidenceInterval:
        """The interval at another confidence level, by the method that made it."""
        from evaldelta.stats._inference import interval_at

        return interval_at(self, confidence)


@dataclass(frozen=True)
class UnpairedResult:
    """Candidate minus baseline on independent samples, shown as a contrast."""

    estimate: float
    se: float
    ci: ConfidenceInterval
    pvalue: float
    method: str
    confidence: float
    statistic: float | None = None
    df: float | None = None


@dataclass(frozen=True)
class FixedMix:
    """A directly standardized combination ``sum_k w_k x_k`` of per-slice estimates.

    ``weights`` are renormalized over ``used_slices`` (they sum to 1). ``dropped_weight`` is
    the share of the original total weight carried by ``dropped_slices``. ``df`` is the
    Satterthwaite degrees of freedom of the Student t interval (None: a normal interval) and
    ``center`` the interval's centre when it is not ``estimate`` (the pseudo-count-adjusted
    rate of Price and Bonett 2004); the interval is ``center +/- t_df * se``, clipped to the
    parameter's range.
    """

    estimate: float
    se: float
    ci: ConfidenceInterval
    weights: Mapping[str, float]
    used_slices: tuple[str, ...]
    dropped_slices: tuple[str, ...]
    dropped_weight: float
    method: str
    df: float | None = None
    center: float | None = None


@dataclass(frozen=True)
class StandardizedRate:
    """One arm's fixed-mix rate beside its pooled rate (the arm on its own mix)."""

    arm: str
    standardized: FixedMix
    pooled: float
    pooled_n: int


@dataclass(frozen=True)
class Standardization:
    """Fixed-mix rates for every arm over the slices where every arm has evidence."""

    rates: Mapping[str, StandardizedRate]
    weights: Mapping[str, float]
    common_slices: tuple[str, ...]
    dropped_slices: tuple[str, ...]
    dropped_weight: float


@dataclass(frozen=True)
class SimpsonResult:
    """Whether the pooled delta disagrees with the per-slice or standardized deltas.

    ``strict_reversal``: every common slice moves one way (all > 0 or all < 0) and the pooled
    delta strictly the other way. ``mix_shift``: the pooled and standardized deltas strictly
    disagree in sign (also True whenever ``strict_reversal`` is).
    """

    common_slices: tuple[str, ...]
    slice_deltas: Mapping[str, float]
    pooled_delta: float
    standardized_delta: float | None
    strict_reversal: bool
    mix_shift: bool

    @property
    def kind(self) -> str:
        """``"reversal"``, ``"mix_shift"`` or ``"none"``, the strongest finding first."""
        if self.strict_reversal:
            return "reversal"
        if self.mix_shift:
            return "mix_shift"
        return "none"


@dataclass(frozen=True)
class PowerResult:
    """A sample-size calculation.

    ``n`` is the rounded-up requirement, ``n_exact`` the unrounded solution of the method,
    ``n_normal`` the normal-approximation answer, and ``unpaired_n_per_arm`` the per-arm size
    an unpaired design would need (when the method has one).
    """

    n: int
    n_exact: float
    n_normal: float
    unpaired_n_per_arm: int | None
    effect: float
    power: float
    alpha: float
    alternative: str
    method: str


@dataclass(frozen=True)
class BreakEven:
    """One slice's break-even shares of a fixed-mix delta (shares in [0, 1], or None).

    ``sign_flip``: the share at which the delta is 0 (None when no share in [0, 1] is);
    ``interval_flips``: the shares, ascending, at which an end of the interval crosses 0.
    Both are against ``bound`` instead of 0 when one is given (a gate's ``-margin``).
    """

    slice: str
    share: float  # today's share of the mix (normalized)
    delta: float  # the fixed-mix delta at today's share
    sign_flip: float | None
    interval_flips: tuple[float, ...]
    slice_delta: float  # d_j
    rest_delta: float  # A: the delta of the other slices, mixed among themselves
    bound: float = 0.0  # what the delta and its interval ends are compared with

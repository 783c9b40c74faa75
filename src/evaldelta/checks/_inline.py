"""An inline check on one output: a regex or a Python callable, written in a run config.

A run's scorer (``[score] regex`` or ``python``, ``--score-regex``) and a cascade's verifier
(``verifier = { regex = ... }`` or ``{ python = ... }``) may be one check written inline
instead of a checks file: a regex passes when it matches anywhere in the output; a callable
``module:function`` is called as ``function(output, case)`` and returns a bool or a number
(with ``threshold``, a number passes at ``>= threshold``). Its value is the attempt's score,
so a callable may grade (0.7), where a checks file's ``python`` check passes or fails.

It differs from a checks file's ``regex_required`` check on purpose, and what runs already
recorded depends on it (the check's pins are part of the run id): the pattern sees the raw
output, case-sensitively (a checks file's pattern sees the NFKC-normalized reply and
ignores case by default), and a pattern that times out is the attempt's error, not an
unscored check.

A regex is compiled and matched by :mod:`evaldelta.checks._patterns` (the ``regex`` package:
size limits at load time, a timeout on every match). An invalid or too large pattern is a
:class:`~evaldelta.errors.ConfigError` when the config loads. A pattern that times out on an
output raises a one-line :class:`~evaldelta.errors.ConfigError` naming the config, line,
field and pattern from :meth:`OutputCheck.value`; the run records it as that attempt's error
(a scorer's: the attempt is unscored; a verifier's: the cascade attempt fails), rather than
guessing a pass or a fail, and goes on with the other attempts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from evaldelta.checks import _patterns
from evaldelta.checks._patterns import PatternTimeout, UserPattern, compile_pattern
from evaldelta.errors import ConfigError, Location

__all__ = ["OUTPUT_CHECK_KINDS", "OutputCheck", "OutputCheckKind"]

OutputCheckKind = Literal["regex", "python"]
OUTPUT_CHECK_KINDS: tuple[OutputCheckKind, ...] = ("regex", "python")


@dataclass(frozen=True)
class OutputCheck:
    """``kind`` is ``regex`` or ``python``; ``spec`` the pattern or ``module:function``."""

    kind: OutputCheckKind
    spec: str
    threshold: float | None = None
    where: str = "<config>"

    def __post_init__(self) -> None:
        if self.kind == "regex":
            _ = self.pattern  # compile now: a bad pattern fails before any paid call
        elif self.kind == "python":
            self.callable()  # import now: a typo fails before any paid call
        else:
            raise ConfigError(
                f"a check is 'regex' or 'python', not {self.kind!r}", Location(self.where)
            )

    @cached_property
    def pattern(self) -> UserPattern:
        """The compiled regex (``kind`` regex only)."""
        try:
            return compile_pattern(self.spec)
        except ValueError as exc:
            raise ConfigError(str(exc), Location(self.where, value=_short(self.spec))) from None

    def callable(self) -> Callable[[str, Mapping[str, Any]], Any]:
        """The Python function named by ``spec`` (``module:function``)."""
        module_name, sep, attr = self.spec.partition(":")
        if not sep or not module_name or not attr:
            raise ConfigError(
                "a python check is 'module:function'", Location(self.where, value=self.spec)
            )
        try:
            fn = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"cannot import the python check ({exc})", Location(self.where, value=self.spec)
            ) from None
        if not callable(fn):
            raise ConfigError("the python check is not callable", Location(self.where))
        return fn  # type: ignore[no-any-return]

    def value(self, output: str, case: Mapping[str, Any]) -> float:
        """The check's value on ``output``: 1.0/0.0, or the callable's number."""
        if self.kind == "regex":
            try:
                return 1.0 if self.pattern.search(output) is not None else 0.0
            except PatternTimeout:
                raise ConfigError(
                    f"the regular expression timed out after {_patterns.MATCH_TIMEOUT:g} s on "
                    "this output (it backtracks too much; simplify it)",
                    Location(self.where, value=_short(self.spec)),
                ) from None
        result = self.callable()(output, case)
        return float(result)

    def passes(self, output: str, case: Mapping[str, Any]) -> bool:
        """Whether ``output`` passes (``value >= threshold``, default threshold 1 = true)."""
        bar = self.threshold if self.threshold is not None else 1.0
        return self.value(output, case) >= bar

    def describe(self) -> dict[str, Any]:
        """The check as recorded in a run's pins."""
        out: dict[str, Any] = {"kind": self.kind, "spec": self.spec}
        if self.threshold is not None:
            out["threshold"] = self.threshold
        return out


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."

"""Checks on one output: a regex or a Python callable, used as a cascade verifier or a scorer.

A stopgap until the requirement checks and the judge (``evaldelta score``) land: a regex
passes when it matches anywhere in the output; a callable ``module:function`` is called as
``function(output, case)`` and returns a bool or a number (with ``threshold``, a number
passes at ``>= threshold``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evaldelta.errors import ConfigError, Location

__all__ = ["OutputCheck"]


@dataclass(frozen=True)
class OutputCheck:
    """``kind`` is ``regex`` or ``python``; ``spec`` the pattern or ``module:function``."""

    kind: str
    spec: str
    threshold: float | None = None
    where: str = "<config>"

    def __post_init__(self) -> None:
        if self.kind == "regex":
            try:
                re.compile(self.spec)
            except re.error as exc:
                raise ConfigError(
                    f"not a valid regular expression ({exc})", Location(self.where, value=self.spec)
                ) from None
        elif self.kind == "python":
            self.callable()  # import now: a typo fails before any paid call
        else:
            raise ConfigError(
                f"a check is 'regex' or 'python', not {self.kind!r}", Location(self.where)
            )

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
            return 1.0 if re.search(self.spec, output) else 0.0
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

"""Read a gate policy (TOML) into a typed, frozen :class:`Policy`, validating every key first.

The general keys are read here; every rule's key is read and validated by its rule kind in
:mod:`evaldelta.gating.rules` (:data:`~evaldelta.gating.rules.RULES`), in the registry's
order, so a new rule brings its own keys.

The schema (``examples/gate.toml`` is the commented reference)::

    metric = "score"            # optional: the metric to gate on (default: the first)
    basis = "interval"          # "interval" (default) or "point"
    on_inconclusive = "warn"    # "fail" -> exit 1, "warn" -> exit 3 (default), "pass" -> exit 0
    fail_adjust = "holm"        # "holm" (default), "bonferroni" or "none": the fail decisions'
                                # family-wise rate across every rule and slice
    min_informative = 10        # a delta rule on fewer informative pairs is inconclusive
    max_cost_ratio = 1.5        # candidate cost / baseline cost
    [defaults]                  # slice rules for every slice (they may also sit at the top level)
    max_regression = 0.15       # non-inferiority margin on the slice's paired delta (>= 0)
    min_score = 4.0             # acceptance bar for the candidate's slice rate or mean
    min_cases = 30              # fewer paired cases than this: the slice is inconclusive
    [slices.extraction]         # per-slice overrides of the same three keys
    max_regression = 0.05
    [standardized]              # non-inferiority of the fixed-mix delta under a named mix
    mix = "traffic"             # "traffic", "chosen" (every --mix mix, each must hold: one
                                # rule per mix, gating/_mix_rules.py), or a mix's name
    margin = 0.02
    [critical]                  # cases that must pass in the candidate, whatever their weight
    cases = ["R00112"]          # case ids, and/or
    column = "critical"         # rows with a truthy value in this column, and/or
    tag = "critical"            # rows whose `tags` column contains this tag
    require = "all"             # every scored attempt passes, or "K of N"
    pass_threshold = 1.0        # an attempt passes when score >= this (default 1: binary)
    regression_set = "regression.toml"  # every case of this set is critical too (the path is
                                # relative to the policy file); see evaldelta.regression

``tomllib`` reports line numbers only for syntax errors, so semantic errors are located by
the house's one scanner over the text (:func:`evaldelta._util._toml.locate_keys`): every message
names the file, line, key and value, e.g. ``gate.toml, line 7, field
'defaults.max_regression', value -0.1: a margin must be >= 0``.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from evaldelta._util import _toml
from evaldelta.errors import Location, PolicyError
from evaldelta.evidence import CriticalSelector
from evaldelta.gating.results import Basis, FailAdjust, OnInconclusive
from evaldelta.gating.rules import RULES, Rule
from evaldelta.gating.rules.critical import CriticalRule
from evaldelta.gating.rules.standardized import StandardizedRule
from evaldelta.stats import MIN_INFORMATIVE  # the report's "rests on k pairs" threshold

__all__ = [
    "BASES",
    "FAIL_ADJUST",
    "MIN_INFORMATIVE",
    "ON_INCONCLUSIVE",
    "Policy",
    "PolicyReader",
    "SliceRules",
    "critical_selector",
    "load_policy",
    "parse_policy",
]

BASES: tuple[Basis, ...] = ("interval", "point")
ON_INCONCLUSIVE: tuple[OnInconclusive, ...] = ("fail", "warn", "pass")
FAIL_ADJUST: tuple[FailAdjust, ...] = ("holm", "bonferroni", "none")
PINS_KEYS = ("allow",)
UpstreamKind = Literal["prompt", "payload", "retrieval"]  # evaldelta.sources.hashes.KINDS


def _listed(shape: str) -> list[Rule]:
    """The registered rules of one shape, in the order the policy's messages list them."""
    return sorted((r for r in RULES if r.shape == shape), key=lambda r: r.listed)


def slice_keys() -> tuple[str, ...]:
    """The keys of the slice rules (top level, ``[defaults]``, ``[slices.NAME]``)."""
    return tuple(r.key for r in _listed("slice"))


def top_keys() -> tuple[str, ...]:
    """Every key the top level of a policy may hold."""
    return (
        "metric",
        "basis",
        "on_inconclusive",
        "fail_adjust",
        "min_informative",
        *(r.key for r in _listed("value")),
        *slice_keys(),
        "defaults",
        "slices",
        *(r.key for r in _listed("table")),
        "pins",
        "upstream",
    )


@dataclass(frozen=True)
class SliceRules:
    """The slice rules' settings for one slice, by key; a key not set is absent."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        """One rule's setting (None: not set)."""
        return self.values.get(key)

    def over(self, base: SliceRules) -> SliceRules:
        """These rules, falling back to ``base`` for every key not set here."""
        return SliceRules({**base.values, **self.values})

    @property
    def empty(self) -> bool:
        """True when no rule is set."""
        return not self.values

    @property
    def max_regression(self) -> float | None:
        """The non-inferiority margin of the slice's delta."""
        value: float | None = self.get("max_regression")
        return value

    @property
    def min_score(self) -> float | None:
        """The acceptance bar of the candidate's slice rate or mean."""
        value: float | None = self.get("min_score")
        return value

    @property
    def min_cases(self) -> int | None:
        """The fewest cases that judge the slice."""
        value: int | None = self.get("min_cases")
        return value


@dataclass(frozen=True)
class Policy:
    """A parsed gate policy. ``lines`` maps dotted key paths to their line in ``path``.

    ``settings`` holds the pair rules' settings by key (``max_cost_ratio``,
    ``standardized``, ``critical``, and any rule registered in
    :data:`evaldelta.gating.rules.RULES`); ``defaults`` and ``slices`` the slice rules'.
    """

    path: str
    metric: str | None = None
    basis: Basis = "interval"
    on_inconclusive: OnInconclusive = "warn"
    fail_adjust: FailAdjust = "holm"
    min_informative: int = MIN_INFORMATIVE
    defaults: SliceRules = field(default_factory=SliceRules)
    slices: Mapping[str, SliceRules] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    allow_pin_differences: tuple[str, ...] = ()  # fnmatch patterns of [pins] allow
    allow_upstream_changes: tuple[UpstreamKind, ...] = ()  # [upstream] allow
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def max_cost_ratio(self) -> float | None:
        """Candidate cost over baseline cost, at most (None: not gated)."""
        value: float | None = self.settings.get("max_cost_ratio")
        return value

    @property
    def standardized(self) -> StandardizedRule | None:
        """The ``[standardized]`` rule, if set."""
        value: StandardizedRule | None = self.settings.get("standardized")
        return value

    @property
    def critical(self) -> CriticalRule | None:
        """The ``[critical]`` rule, if set (or regression sets were given)."""
        value: CriticalRule | None = self.settings.get("critical")
        return value

    def rules_for(self, slice_name: str) -> SliceRules:
        """The rules of one slice: its own table over ``[defaults]``."""
        own = self.slices.get(slice_name)
        return own.over(self.defaults) if own is not None else self.defaults

    def where(self, *keys: str, value: object = None) -> Location:
        """The location of a key path (or its nearest enclosing table) in the policy file."""
        return Location(self.path, _toml.line_of(self.lines, keys), ".".join(keys) or None, value)


# -- parsing ------------------------------------------------------------------------------
def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy file; every problem is a :class:`PolicyError`."""
    text = _toml.read_text(path, PolicyError, "the policy file")
    return parse_policy(text, str(Path(path)))


def parse_policy(text: str, path: str = "<policy>") -> Policy:
    """Parse policy TOML text; ``path`` is the name used in error messages."""
    data = _toml.loads(text, path, PolicyError)
    return PolicyReader(path, _toml.locate_keys(text)).policy(data)


@dataclass
class PolicyReader:
    """Reads a policy's values; the rules validate their keys with its checks (one message each)."""

    path: str
    lines: dict[str, int]

    def where(self, keys: tuple[str, ...], value: object = None) -> Location:
        """The location of a key path (or its nearest enclosing table)."""
        return Location(self.path, _toml.line_of(self.lines, keys), ".".join(keys), value)

    def fail(self, keys: tuple[str, ...], value: object, message: str) -> PolicyError:
        """A :class:`PolicyError` at a key path, naming its value."""
        return PolicyError(message, self.where(keys, value))

    def known(
        self, table: Mapping[str, Any], allowed: tuple[str, ...], prefix: tuple[str, ...]
    ) -> None:
        """Refuse a key the table does not know, with the nearest known one."""
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                where = f"in [{'.'.join(prefix)}]" if prefix else "at the top level"
                raise PolicyError(
                    f"unknown key {key!r} {where}{hint} (known: {', '.join(allowed)})",
                    self.where((*prefix, key)),
                )

    def table(self, value: object, keys: tuple[str, ...]) -> Mapping[str, Any]:
        """The value, which must be a table."""
        if not isinstance(value, dict):
            raise self.fail(keys, value, f"[{'.'.join(keys)}] must be a table")
        return value

    def number(self, value: object, keys: tuple[str, ...]) -> float:
        """The value, which must be a finite number."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(keys, value, "must be a number")
        if not math.isfinite(value):
            raise self.fail(keys, value, "must be a finite number")
        return float(value)

    def margin(self, value: object, keys: tuple[str, ...]) -> float:
        """The value, which must be a number >= 0 (a margin is written positive)."""
        out = self.number(value, keys)
        if out < 0:
            raise self.fail(
                keys,
                value,
                "a margin must be >= 0 (it is the size of regression "
                "allowed, written as a positive number)",
            )
        return out

    def string(self, value: object, keys: tuple[str, ...]) -> str:
        """The value, which must be a non-empty string."""
        if not isinstance(value, str) or not value.strip():
            raise self.fail(keys, value, "must be a non-empty string")
        return value

    def choice(self, value: object, keys: tuple[str, ...], options: tuple[str, ...]) -> str:
        """The value, which must be one of ``options``."""
        if value not in options:
            raise self.fail(keys, value, f"must be one of {', '.join(map(repr, options))}")
        return str(value)

    def rules(self, table: Mapping[str, Any], prefix: tuple[str, ...]) -> SliceRules:
        """The slice rules set in one table (top level, ``[defaults]`` or a slice's)."""
        out: dict[str, Any] = {}
        for rule in _listed("slice"):
            if rule.key in table:
                keys = (*prefix, rule.key)
                out[rule.key] = rule.parse(self, table[rule.key], keys)
        return SliceRules(out)

    def policy(self, data: Mapping[str, Any]) -> Policy:
        """The whole policy from its parsed TOML."""
        self.known(data, top_keys(), ())
        defaults = self._defaults(data)
        slices: dict[str, SliceRules] = {}
        if "slices" in data:
            for name, value in self.table(data["slices"], ("slices",)).items():
                keys = ("slices", name)
                table = self.table(value, keys)
                self.known(table, slice_keys(), keys)
                slices[name] = self.rules(table, keys)
        metric = self.string(data["metric"], ("metric",)) if "metric" in data else None
        basis = self.choice(data.get("basis", "interval"), ("basis",), BASES)
        on_inconclusive = self.choice(
            data.get("on_inconclusive", "warn"), ("on_inconclusive",), ON_INCONCLUSIVE
        )
        fail_adjust = self.choice(data.get("fail_adjust", "holm"), ("fail_adjust",), FAIL_ADJUST)
        min_informative = self._min_informative(data)
        settings = {
            rule.key: rule.parse(self, data[rule.key], (rule.key,))
            for rule in (*_listed("value"), *_listed("table"))
            if rule.key in data
        }
        policy = Policy(
            path=self.path,
            metric=metric,
            basis=basis,  # type: ignore[arg-type]  # one of BASES, checked above
            on_inconclusive=on_inconclusive,  # type: ignore[arg-type]
            fail_adjust=fail_adjust,  # type: ignore[arg-type]
            min_informative=min_informative,
            defaults=defaults,
            slices=slices,
            settings=settings,
            allow_pin_differences=self._pins(data),
            allow_upstream_changes=self._upstream(data),
            lines=dict(self.lines),
        )
        if policy.defaults.empty and all(r.empty for r in slices.values()) and not settings:
            names = [r.mention() for r in sorted(RULES, key=lambda r: r.listed)]
            raise PolicyError(
                f"the policy sets no rule ({', '.join(names[:-1])} or {names[-1]})",
                Location(self.path, 1),
            )
        return policy

    def _defaults(self, data: Mapping[str, Any]) -> SliceRules:
        """The slice rules of ``[defaults]`` and the top level (a key may sit in one only)."""
        top = self.rules(data, ())
        defaults = SliceRules()
        if "defaults" in data:
            table = self.table(data["defaults"], ("defaults",))
            self.known(table, slice_keys(), ("defaults",))
            defaults = self.rules(table, ("defaults",))
            for key in slice_keys():
                if top.get(key) is not None and defaults.get(key) is not None:
                    raise self.fail(
                        ("defaults", key),
                        table[key],
                        f"{key!r} is set both at the top level and in [defaults]; keep one",
                    )
        return defaults.over(top)

    def _min_informative(self, data: Mapping[str, Any]) -> int:
        value = data.get("min_informative", MIN_INFORMATIVE)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(
                ("min_informative",), value, "min_informative must be a whole number >= 0"
            )
        return value

    def _pins(self, data: Mapping[str, Any]) -> tuple[str, ...]:
        """``[pins] allow = [...]``: pin differences (fnmatch patterns) the gate accepts."""
        if "pins" not in data:
            return ()
        prefix = ("pins",)
        table = self.table(data["pins"], prefix)
        self.known(table, PINS_KEYS, prefix)
        value = table.get("allow", [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(
                (*prefix, "allow"), value, "allow must be a list of pin names (e.g. 'params.seed')"
            )
        return tuple(value)

    def _upstream(self, data: Mapping[str, Any]) -> tuple[UpstreamKind, ...]:
        """``[upstream] allow = ["prompt"]``: upstream changes the gate accepts undeclared."""
        from evaldelta.sources.hashes import KINDS

        if "upstream" not in data:
            return ()
        prefix = ("upstream",)
        table = self.table(data["upstream"], prefix)
        self.known(table, PINS_KEYS, prefix)
        value = table.get("allow", [])
        if not isinstance(value, list) or not all(v in KINDS for v in value):
            raise self.fail(
                (*prefix, "allow"), value, f"allow must be a list of {', '.join(KINDS)}"
            )
        return cast(tuple[UpstreamKind, ...], tuple(value))  # each one of KINDS, checked


def critical_selector(policy: Policy) -> CriticalSelector | None:
    """What ``compare(critical=...)`` needs to collect the policy's critical-case evidence."""
    rule = policy.critical
    if rule is None:
        return None
    origin = {
        key: policy.where("critical", key) for key in ("cases", "column", "tag", "pass_threshold")
    }
    return CriticalSelector(
        cases=rule.cases,
        column=rule.column,
        tag=rule.tag,
        pass_threshold=rule.pass_threshold,
        origin=origin,
        regression_cases=tuple(dict.fromkeys(p.case_id for p in rule.regression)),
    )

"""Read a gate policy (TOML) into a typed, frozen :class:`Policy`, validating every key first.

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
a small scanner over the text (:func:`locate_keys`): every message names the file, line,
key and value, e.g. ``gate.toml, line 7, field 'defaults.max_regression', value -0.1:
a margin must be >= 0``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaldelta._util import _toml
from evaldelta.engine import CriticalSelector
from evaldelta.errors import Location, PolicyError
from evaldelta.regression._file import Provenance
from evaldelta.stats import MIN_INFORMATIVE  # the report's "rests on k pairs" threshold

__all__ = [
    "BASES",
    "FAIL_ADJUST",
    "MIN_INFORMATIVE",
    "ON_INCONCLUSIVE",
    "CriticalRule",
    "Policy",
    "SliceRules",
    "StandardizedRule",
    "critical_selector",
    "load_policy",
    "locate_keys",
    "parse_policy",
]

BASES = ("interval", "point")
ON_INCONCLUSIVE = ("fail", "warn", "pass")
FAIL_ADJUST = ("holm", "bonferroni", "none")
RULE_KEYS = ("max_regression", "min_score", "min_cases")
TOP_KEYS = (
    "metric",
    "basis",
    "on_inconclusive",
    "fail_adjust",
    "min_informative",
    "max_cost_ratio",
    *RULE_KEYS,
    "defaults",
    "slices",
    "standardized",
    "critical",
    "pins",
    "upstream",
)
STANDARDIZED_KEYS = ("mix", "margin")
PINS_KEYS = ("allow",)
CRITICAL_KEYS = ("cases", "column", "tag", "require", "pass_threshold", "regression_set")


@dataclass(frozen=True)
class SliceRules:
    """The rules that apply to one slice (None = not set)."""

    max_regression: float | None = None
    min_score: float | None = None
    min_cases: int | None = None

    def over(self, base: SliceRules) -> SliceRules:
        """These rules, falling back to ``base`` for every key not set here."""
        return SliceRules(
            max_regression=_first(self.max_regression, base.max_regression),
            min_score=_first(self.min_score, base.min_score),
            min_cases=_first(self.min_cases, base.min_cases),
        )

    @property
    def empty(self) -> bool:
        """True when no rule is set."""
        return self.max_regression is None and self.min_score is None and self.min_cases is None


def _first(a: Any, b: Any) -> Any:
    return a if a is not None else b


@dataclass(frozen=True)
class StandardizedRule:
    """Non-inferiority of the fixed-mix delta under the named mix."""

    mix: str
    margin: float


@dataclass(frozen=True)
class CriticalRule:
    """Cases that must pass in the candidate: ids and/or a flag column and/or a tag.

    ``require_k`` of ``require_n`` attempts must pass; both None means every scored attempt.
    ``pass_threshold`` None means the default (score >= 1, for a binary metric).
    ``regression`` holds the cases of the regression sets named in ``regression_sets``
    (``[critical] regression_set``, ``gate --regression-set``), with their provenance.
    """

    cases: tuple[str, ...] = ()
    column: str | None = None
    tag: str | None = None
    require_k: int | None = None
    require_n: int | None = None
    pass_threshold: float | None = None
    regression: tuple[Provenance, ...] = ()
    regression_sets: tuple[str, ...] = ()

    @property
    def require(self) -> str:
        """``all`` or ``K of N``, as written in the policy."""
        if self.require_k is None:
            return "all"
        return f"{self.require_k} of {self.require_n}"


@dataclass(frozen=True)
class Policy:
    """A parsed gate policy. ``lines`` maps dotted key paths to their line in ``path``."""

    path: str
    metric: str | None = None
    basis: str = "interval"
    on_inconclusive: str = "warn"
    fail_adjust: str = "holm"
    min_informative: int = MIN_INFORMATIVE
    max_cost_ratio: float | None = None
    defaults: SliceRules = field(default_factory=SliceRules)
    slices: Mapping[str, SliceRules] = field(default_factory=dict)
    standardized: StandardizedRule | None = None
    critical: CriticalRule | None = None
    allow_pin_differences: tuple[str, ...] = ()  # fnmatch patterns of [pins] allow
    allow_upstream_changes: tuple[str, ...] = ()  # [upstream] allow: prompt, payload, retrieval
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def rules_for(self, slice_name: str) -> SliceRules:
        """The rules of one slice: its own table over ``[defaults]``."""
        own = self.slices.get(slice_name)
        return own.over(self.defaults) if own is not None else self.defaults

    def where(self, *keys: str, value: object = None) -> Location:
        """The location of a key path (or its nearest enclosing table) in the policy file."""
        return Location(self.path, _line_of(self.lines, keys), ".".join(keys) or None, value)


def _line_of(lines: Mapping[str, int], keys: tuple[str, ...]) -> int | None:
    parts = list(keys)
    while parts:
        hit = lines.get(".".join(parts))
        if hit is not None:
            return hit
        parts.pop()
    return None


# -- locating keys in the text ------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[(?!\[)\s*(?P<name>[^\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*(?P<key>(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=(?P<rest>.*)$"""
)
_INLINE_KEY = re.compile(r"""(?:^|[{,])\s*(?P<key>[A-Za-z0-9_-]+|"[^"]*")\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")


def _parts(dotted: str) -> list[str]:
    return [p.strip("\"'") for p in _PART.findall(dotted)]


def locate_keys(text: str) -> dict[str, int]:
    """Map every table header and key (as a dotted path) to its first 1-based line.

    A small scanner, not a TOML parser: it only runs on text ``tomllib`` already accepted,
    and it covers headers, dotted keys and one level of inline tables. Lines inside a
    multi-line string or array are skipped as far as a line-based scan can tell.
    """
    out: dict[str, int] = {}
    table: list[str] = []
    depth = 0  # open brackets of a multi-line array
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if depth > 0:
            depth += stripped.count("[") - stripped.count("]")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        header = _HEADER.match(line)
        if header is not None:
            table = _parts(header.group("name"))
            out.setdefault(".".join(table), number)
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        path = [*table, *_parts(key.group("key"))]
        out.setdefault(".".join(path), number)
        rest = key.group("rest").split("#", 1)[0].strip()
        if rest.startswith("{"):
            for inner in _INLINE_KEY.finditer(rest):
                out.setdefault(".".join([*path, inner.group("key").strip('"')]), number)
        depth = max(0, rest.count("[") - rest.count("]"))
    return out


# -- parsing ------------------------------------------------------------------------------
def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy file; every problem is a :class:`PolicyError`."""
    text = _toml.read_text(path, PolicyError, "the policy file")
    return parse_policy(text, str(Path(path)))


def parse_policy(text: str, path: str = "<policy>") -> Policy:
    """Parse policy TOML text; ``path`` is the name used in error messages."""
    data = _toml.loads(text, path, PolicyError)
    return _Parser(path, locate_keys(text)).policy(data)


@dataclass
class _Parser:
    path: str
    lines: dict[str, int]

    def where(self, keys: tuple[str, ...], value: object = None) -> Location:
        return Location(self.path, _line_of(self.lines, keys), ".".join(keys), value)

    def fail(self, keys: tuple[str, ...], value: object, message: str) -> PolicyError:
        return PolicyError(message, self.where(keys, value))

    def known(
        self, table: Mapping[str, Any], allowed: tuple[str, ...], prefix: tuple[str, ...]
    ) -> None:
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
        if not isinstance(value, dict):
            raise self.fail(keys, value, f"[{'.'.join(keys)}] must be a table")
        return value

    def number(self, value: object, keys: tuple[str, ...]) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(keys, value, "must be a number")
        if not math.isfinite(value):
            raise self.fail(keys, value, "must be a finite number")
        return float(value)

    def margin(self, value: object, keys: tuple[str, ...]) -> float:
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
        if not isinstance(value, str) or not value.strip():
            raise self.fail(keys, value, "must be a non-empty string")
        return value

    def choice(self, value: object, keys: tuple[str, ...], options: tuple[str, ...]) -> str:
        if value not in options:
            raise self.fail(keys, value, f"must be one of {', '.join(map(repr, options))}")
        return str(value)

    def rules(self, table: Mapping[str, Any], prefix: tuple[str, ...]) -> SliceRules:
        out: dict[str, Any] = {}
        for key in RULE_KEYS:
            if key not in table:
                continue
            keys, value = (*prefix, key), table[key]
            if key == "max_regression":
                out[key] = self.margin(value, keys)
            elif key == "min_score":
                out[key] = self.number(value, keys)
            else:
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise self.fail(keys, value, "min_cases must be a whole number >= 1")
                out[key] = value
        return SliceRules(**out)

    def policy(self, data: Mapping[str, Any]) -> Policy:
        self.known(data, TOP_KEYS, ())
        top = self.rules(data, ())
        defaults = SliceRules()
        if "defaults" in data:
            table = self.table(data["defaults"], ("defaults",))
            self.known(table, RULE_KEYS, ("defaults",))
            defaults = self.rules(table, ("defaults",))
            for key in RULE_KEYS:
                if getattr(top, key) is not None and getattr(defaults, key) is not None:
                    raise self.fail(
                        ("defaults", key),
                        table[key],
                        f"{key!r} is set both at the top level and in [defaults]; keep one",
                    )
        defaults = defaults.over(top)
        slices: dict[str, SliceRules] = {}
        if "slices" in data:
            for name, value in self.table(data["slices"], ("slices",)).items():
                keys = ("slices", name)
                table = self.table(value, keys)
                self.known(table, RULE_KEYS, keys)
                slices[name] = self.rules(table, keys)
        metric = self.string(data["metric"], ("metric",)) if "metric" in data else None
        policy = Policy(
            path=self.path,
            metric=metric,
            basis=self.choice(data.get("basis", "interval"), ("basis",), BASES),
            on_inconclusive=self.choice(
                data.get("on_inconclusive", "warn"), ("on_inconclusive",), ON_INCONCLUSIVE
            ),
            fail_adjust=self.choice(data.get("fail_adjust", "holm"), ("fail_adjust",), FAIL_ADJUST),
            min_informative=self._min_informative(data),
            max_cost_ratio=self._cost(data),
            defaults=defaults,
            slices=slices,
            standardized=self._standardized(data),
            critical=self._critical(data),
            allow_pin_differences=self._pins(data),
            allow_upstream_changes=self._upstream(data),
            lines=dict(self.lines),
        )
        if (
            policy.defaults.empty
            and all(r.empty for r in slices.values())
            and policy.standardized is None
            and policy.critical is None
            and policy.max_cost_ratio is None
        ):
            raise PolicyError(
                "the policy sets no rule (max_regression, min_score, min_cases, "
                "[standardized], [critical] or max_cost_ratio)",
                Location(self.path, 1),
            )
        return policy

    def _min_informative(self, data: Mapping[str, Any]) -> int:
        value = data.get("min_informative", MIN_INFORMATIVE)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(
                ("min_informative",), value, "min_informative must be a whole number >= 0"
            )
        return value

    def _cost(self, data: Mapping[str, Any]) -> float | None:
        if "max_cost_ratio" not in data:
            return None
        keys = ("max_cost_ratio",)
        out = self.number(data["max_cost_ratio"], keys)
        if out <= 0:
            raise self.fail(keys, data["max_cost_ratio"], "a cost ratio must be > 0")
        return out

    def _standardized(self, data: Mapping[str, Any]) -> StandardizedRule | None:
        if "standardized" not in data:
            return None
        prefix = ("standardized",)
        table = self.table(data["standardized"], prefix)
        self.known(table, STANDARDIZED_KEYS, prefix)
        if "margin" not in table:
            raise self.fail(prefix, None, "[standardized] needs a margin")
        return StandardizedRule(
            mix=self.string(table.get("mix", "chosen"), (*prefix, "mix")),
            margin=self.margin(table["margin"], (*prefix, "margin")),
        )

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

    def _upstream(self, data: Mapping[str, Any]) -> tuple[str, ...]:
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
        return tuple(value)

    def _critical(self, data: Mapping[str, Any]) -> CriticalRule | None:
        if "critical" not in data:
            return None
        prefix = ("critical",)
        table = self.table(data["critical"], prefix)
        self.known(table, CRITICAL_KEYS, prefix)
        cases: tuple[str, ...] = ()
        if "cases" in table:
            value = table["cases"]
            if not isinstance(value, list) or not all(isinstance(c, str) and c for c in value):
                raise self.fail(
                    (*prefix, "cases"), value, "cases must be a list of case ids (strings)"
                )
            cases = tuple(dict.fromkeys(value))
        column = self.string(table["column"], (*prefix, "column")) if "column" in table else None
        tag = self.string(table["tag"], (*prefix, "tag")) if "tag" in table else None
        regression: tuple[Provenance, ...] = ()
        sets: tuple[str, ...] = ()
        if "regression_set" in table:
            keys = (*prefix, "regression_set")
            named = self.string(table["regression_set"], keys)
            path = Path(self.path).parent / named
            if not path.is_file():
                raise self.fail(keys, named, f"the regression set {str(path)!r} does not exist")
            from evaldelta.regression._file import load_set

            regression = tuple(c.provenance() for c in load_set(path).cases)
            sets = (str(path),)
        if not cases and column is None and tag is None and not sets:
            raise self.fail(
                prefix, None, "[critical] needs cases, column or tag (or a regression_set)"
            )
        k = n = None
        if "require" in table:
            k, n = self._require(table["require"], (*prefix, "require"))
        threshold = (
            self.number(table["pass_threshold"], (*prefix, "pass_threshold"))
            if "pass_threshold" in table
            else None
        )
        return CriticalRule(cases, column, tag, k, n, threshold, regression, sets)

    def _require(self, value: object, keys: tuple[str, ...]) -> tuple[int | None, int | None]:
        if value == "all":
            return None, None
        found = re.fullmatch(r"\s*(\d+)\s+of\s+(\d+)\s*", value) if isinstance(value, str) else None
        if found is None:
            raise self.fail(keys, value, "require must be 'all' or 'K of N' (e.g. '2 of 3')")
        k, n = int(found.group(1)), int(found.group(2))
        if not 1 <= k <= n:
            raise self.fail(keys, value, "require 'K of N' needs 1 <= K <= N")
        return k, n


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

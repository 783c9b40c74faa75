"""Run configuration: a TOML file and/or the simple flags -> one frozen :class:`RunConfig`.

``examples/run.toml`` is the commented reference. Every problem is a one-line
:class:`~evaldelta.errors.ConfigError` naming the file, line, key and value (syntax errors
carry tomllib's line). Flags given on the command line override or extend the file.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evaldelta._util import _toml
from evaldelta.checks import OUTPUT_CHECK_KINDS, CheckSet, OutputCheck, load_checks
from evaldelta.errors import ConfigError, Location, UsageError
from evaldelta.provider import GenerationParams
from evaldelta.run.checking import ChecksVerifier, Verifier
from evaldelta.run.providers.registry import KINDS
from evaldelta.run.template import DEFAULT_USER, Template

__all__ = [
    "DEFAULT_STORE",
    "Arm",
    "CascadeArm",
    "ModelArm",
    "ProviderConfig",
    "RunConfig",
    "load_config",
    "parse_arm_flag",
    "parse_config",
    "with_flags",
]

DEFAULT_STORE = Path(".evaldelta/runs.duckdb")
TOP_KEYS = ("cases", "repeats", "store", "max_cost", "prices", "seed", "pins", "template",
            "providers", "arms", "score", "max_wall_seconds",
            "stop_after_identical_errors", "couple")  # fmt: skip
PROVIDER_KEYS = ("kind", "base_url", "api_key_env", "timeout", "max_concurrency",
                 "requests_per_minute", "tokens_per_minute", "max_retries", "max_retry_after",
                 "retry_budget_seconds")  # fmt: skip
LOCAL_KEYS = ("n_ctx", "n_threads", "n_batch", "repack")  # the local provider's own (LocalProvider)
MAX_SECONDS = 1e7  # about 116 days: any longer wait is a typo (and overflows socket timeouts)
MAX_CONCURRENCY = 10_000
MAX_RETRIES = 1_000
PARAM_KEYS = ("temperature", "top_p", "max_tokens", "seed", "stop")
MODEL_KEYS = ("kind", "provider", "model", "template", "system", "user", "pins", "standalone",
              *PARAM_KEYS)  # fmt: skip
CASCADE_KEYS = ("kind", "cheap", "strong", "verifier", "pins")
CHECK_KEYS = ("regex", "python", "threshold", "checks", "judge")
TEMPLATE_KEYS = ("system", "user", "system_file", "user_file")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class ProviderConfig:
    """One provider endpoint: its kind, where it is, and how hard we may call it."""

    name: str
    kind: str
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    max_concurrency: int = 4
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 4
    max_retry_after: float = 60.0  # a longer Retry-After is capped at this many seconds
    retry_budget_seconds: float = 300.0  # the most one call waits between its retries, in all
    options: Mapping[str, Any] = field(default_factory=dict)  # kind-specific (local)

    def factory_options(self) -> dict[str, Any]:
        """What :func:`~evaldelta.run.providers.registry.create_provider` takes."""
        out: dict[str, Any] = {"timeout": self.timeout, **self.options}
        if self.base_url is not None:
            out["base_url"] = self.base_url
        if self.api_key_env is not None:
            out["api_key_env"] = self.api_key_env
        return out

    def identity(self) -> dict[str, Any]:
        """What identifies the endpoint in cache keys and pins (never a key's value)."""
        return {"kind": self.kind, "base_url": self.base_url, **dict(self.options)}


@dataclass(frozen=True)
class ModelArm:
    """One model called with one template and pinned generation parameters."""

    name: str
    provider: str
    model: str
    params: GenerationParams = field(default_factory=GenerationParams)
    template: Template = field(default_factory=Template)
    pins: Mapping[str, Any] = field(default_factory=dict)
    standalone: bool = True  # False: only a step of a cascade, not an arm of its own


@dataclass(frozen=True)
class CascadeArm:
    """Call ``cheap``; when ``verifier`` fails on its output, call ``strong`` instead."""

    name: str
    cheap: str
    strong: str
    verifier: Verifier
    pins: Mapping[str, Any] = field(default_factory=dict)


Arm = ModelArm | CascadeArm


@dataclass(frozen=True)
class RunConfig:
    """Everything a run needs besides the cases themselves."""

    arms: tuple[Arm, ...] = ()
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)
    cases: Path | None = None
    repeats: int = 1
    store: Path = DEFAULT_STORE
    max_cost: float | None = None
    prices: Path | None = None
    score: OutputCheck | None = None
    checks: CheckSet | None = None  # run --checks / [score] checks: score = the overall pass
    pins: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0  # seeds the retry jitter and --couple's per-case seeds; recorded
    max_wall_seconds: float | None = None  # stop launching calls after this long (None: never)
    stop_after_identical_errors: int = 3  # 401/403/404/unknown host this often: stop (0: never)
    path: str | None = None
    couple: bool = False  # every arm sends one seed per (case, repeat): run/coupling.py

    def model_arm(self, name: str) -> ModelArm:
        """The model arm called ``name``."""
        for arm in self.arms:
            if arm.name == name and isinstance(arm, ModelArm):
                return arm
        raise UsageError(f"no model arm named {name!r}")

    @property
    def run_arms(self) -> tuple[Arm, ...]:
        """The arms that produce attempts (cascade steps marked standalone=false do not)."""
        return tuple(a for a in self.arms if not (isinstance(a, ModelArm) and not a.standalone))


class _Reader:
    """Type checks that raise ConfigError at the key's line."""

    def __init__(self, path: str, lines: Mapping[str, int]) -> None:
        self.path = path
        self.lines = lines

    def where(self, keys: Sequence[str], value: object = None) -> Location:
        return Location(self.path, _toml.line_of(self.lines, keys), ".".join(keys) or None, value)

    def fail(self, keys: Sequence[str], value: object, message: str) -> ConfigError:
        return ConfigError(message, self.where(keys, value))

    def known(self, table: Mapping[str, Any], keys: Sequence[str], allowed: Sequence[str]) -> None:
        for key in table:
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(allowed)})"
                raise self.fail([*keys, key], None, f"unknown key {key!r}{hint}")

    def table(self, value: object, keys: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(keys, value, "must be a table")
        return value

    def number(
        self, value: object, keys: Sequence[str], *, low: float = 0.0, high: float | None = None
    ) -> float:
        """A finite number in [low, high]: nan and inf are bad input like any other value."""
        least = "" if low == -math.inf else "> 0" if 0 < low <= 1e-9 else f">= {low:g}"
        span = " and ".join(x for x in (least, "" if high is None else f"<= {high:g}") if x)
        span = " " + span if span else ""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(keys, value, f"must be a number{span}")
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise self.fail(keys, value, f"must be a finite number{span}")
        return float(value)

    def integer(
        self, value: object, keys: Sequence[str], *, low: int = 0, high: int | None = None
    ) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < low
            or (high is not None and value > high)
        ):
            span = f">= {low}" if high is None else f"from {low} to {high}"
            raise self.fail(keys, value, f"must be an integer {span}")
        return value

    def string(self, value: object, keys: Sequence[str]) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(keys, value, "must be a non-empty string")
        return value

    def file(self, value: object, keys: Sequence[str]) -> Path:
        p = Path(self.string(value, keys))
        return p if p.is_absolute() else Path(self.path).parent / p


def load_config(path: str | Path) -> RunConfig:
    """Read and validate a run config file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError("the run config file does not exist", Location(str(p)))
    return parse_config(_toml.read_text(p, ConfigError, "the run config"), str(p))


def parse_config(text: str, path: str = "<run config>") -> RunConfig:
    """Parse run config TOML; ``path`` names it in messages and anchors relative paths."""
    data = _toml.loads(text, path, ConfigError)
    r = _Reader(path, _toml.locate_keys(text))
    r.known(data, (), TOP_KEYS)
    score_table = r.table(data.get("score", {}), ("score",))
    checks = None
    if "checks" in score_table:
        r.known(score_table, ("score",), ("checks",))
        checks = _load_checks(r, score_table["checks"], ("score", "checks"))
    default_template = _template(r, data.get("template", {}), ("template",), None)
    providers = {
        name: _provider(r, name, value)
        for name, value in r.table(data.get("providers", {}), ("providers",)).items()
    }
    arms_table = r.table(data.get("arms", {}), ("arms",))
    arms: list[Arm] = []
    for name, value in arms_table.items():
        keys = ("arms", name)
        table = r.table(value, keys)
        if not _NAME.match(name):
            raise r.fail(keys, name, "arm names use letters, digits, '_', '.' and '-'")
        kind = table.get("kind", "model")
        if kind == "model":
            arms.append(_model_arm(r, name, table, default_template, providers))
        elif kind == "cascade":
            arms.append(_cascade_arm(r, name, table, checks))
        else:
            raise r.fail([*keys, "kind"], kind, "an arm's kind is 'model' or 'cascade'")
    config = RunConfig(
        arms=tuple(arms),
        providers=providers,
        cases=r.file(data["cases"], ("cases",)) if "cases" in data else None,
        repeats=r.integer(data.get("repeats", 1), ("repeats",), low=1),
        store=r.file(data["store"], ("store",)) if "store" in data else DEFAULT_STORE,
        max_cost=r.number(data["max_cost"], ("max_cost",)) if "max_cost" in data else None,
        prices=r.file(data["prices"], ("prices",)) if "prices" in data else None,
        score=_check(r, score_table, ("score",)) if score_table and checks is None else None,
        checks=checks,
        pins=dict(r.table(data.get("pins", {}), ("pins",))),
        seed=r.integer(data.get("seed", 0), ("seed",)),
        max_wall_seconds=(
            r.number(data["max_wall_seconds"], ("max_wall_seconds",), low=1e-9, high=MAX_SECONDS)
            if "max_wall_seconds" in data
            else None
        ),
        stop_after_identical_errors=r.integer(
            data.get("stop_after_identical_errors", 3), ("stop_after_identical_errors",)
        ),
        path=path,
        couple=_flag(r, data.get("couple", False), ("couple",)),
    )
    _check_cascades(config, r)
    return config


def _flag(r: _Reader, value: object, keys: Sequence[str]) -> bool:
    if not isinstance(value, bool):
        raise r.fail(keys, value, "must be true or false")
    return value


def _provider(r: _Reader, name: str, value: object) -> ProviderConfig:
    keys = ("providers", name)
    table = dict(r.table(value, keys))
    kind = r.string(table.pop("kind", name), [*keys, "kind"])
    if kind not in KINDS:
        raise r.fail([*keys, "kind"], kind, f"unknown provider kind; choose {', '.join(KINDS)}")
    r.known(table, keys, PROVIDER_KEYS + (LOCAL_KEYS if kind == "local" else ()))
    out: dict[str, Any] = {"name": name, "kind": kind}
    for key in ("base_url", "api_key_env"):
        if key in table:
            out[key] = r.string(table.pop(key), [*keys, key])
    for key in ("timeout", "max_retry_after", "retry_budget_seconds"):
        if key in table:
            low = 1e-9 if key == "timeout" else 0.0
            out[key] = r.number(table.pop(key), [*keys, key], low=low, high=MAX_SECONDS)
    for key in ("requests_per_minute", "tokens_per_minute"):
        if key in table:
            out[key] = r.number(table.pop(key), [*keys, key], low=1e-9)
    for key, low, high in (
        ("max_concurrency", 1, MAX_CONCURRENCY),
        ("max_retries", 0, MAX_RETRIES),
    ):
        if key in table:
            out[key] = r.integer(table.pop(key), [*keys, key], low=low, high=high)
    if kind == "local":  # LocalProvider's own keyword arguments, checked like the rest
        for key, low in (("n_ctx", 16), ("n_threads", 1), ("n_batch", 1)):
            if key in table:
                table[key] = r.integer(table[key], [*keys, key], low=low)
        if "repack" in table and not isinstance(table["repack"], bool):
            raise r.fail([*keys, "repack"], table["repack"], "must be true or false")
    return ProviderConfig(**out, options=table)


def _template(r: _Reader, value: object, keys: Sequence[str], base: Template | None) -> Template:
    table = r.table(value, keys)
    r.known(table, keys, TEMPLATE_KEYS)
    parts: dict[str, str | None] = {
        "system": base.system if base else None,
        "user": base.user if base else DEFAULT_USER,
    }
    for role in ("system", "user"):
        if role in table:
            parts[role] = r.string(table[role], [*keys, role])
        if f"{role}_file" in table:
            file = r.file(table[f"{role}_file"], [*keys, f"{role}_file"])
            if not file.is_file():
                raise r.fail([*keys, f"{role}_file"], str(file), "the template file does not exist")
            parts[role] = file.read_text(encoding="utf-8")
    if not table and base is not None:
        return base
    where = str(r.where(keys)) if table else "default template ('{{ prompt }}')"
    return Template(user=parts["user"] or DEFAULT_USER, system=parts["system"], where=where)


def _params(r: _Reader, table: Mapping[str, Any], keys: Sequence[str]) -> GenerationParams:
    out: dict[str, Any] = {}
    if "temperature" in table:
        out["temperature"] = r.number(table["temperature"], [*keys, "temperature"])
    if "top_p" in table:
        top_p = r.number(table["top_p"], [*keys, "top_p"], low=1e-9)
        if top_p > 1:
            raise r.fail([*keys, "top_p"], top_p, "top_p must lie in (0, 1]")
        out["top_p"] = top_p
    if "max_tokens" in table:
        out["max_tokens"] = r.integer(table["max_tokens"], [*keys, "max_tokens"], low=1)
    if "seed" in table:
        out["seed"] = r.integer(table["seed"], [*keys, "seed"])
    if "stop" in table:
        stop = table["stop"]
        stop = [stop] if isinstance(stop, str) else stop
        if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
            raise r.fail([*keys, "stop"], table["stop"], "stop is a string or a list of strings")
        out["stop"] = tuple(stop)
    return GenerationParams(**out)


def _model_arm(
    r: _Reader,
    name: str,
    table: Mapping[str, Any],
    default_template: Template,
    providers: Mapping[str, ProviderConfig],
) -> ModelArm:
    keys = ("arms", name)
    r.known(table, keys, MODEL_KEYS)
    for key in ("provider", "model"):
        if key not in table:
            raise r.fail(keys, None, f"a model arm needs {key!r}")
    provider = r.string(table["provider"], [*keys, "provider"])
    if provider not in providers and provider not in KINDS:
        known = sorted({*providers, *KINDS})
        raise r.fail([*keys, "provider"], provider, f"unknown provider; known: {', '.join(known)}")
    inline = {k: table[k] for k in ("system", "user") if k in table}
    if "template" in table and inline:
        raise r.fail(keys, None, "give either a 'template' table or system/user, not both")
    template = _template(r, table.get("template", inline), keys, default_template)
    standalone = table.get("standalone", True)
    if not isinstance(standalone, bool):
        raise r.fail([*keys, "standalone"], standalone, "standalone is true or false")
    return ModelArm(
        name=name,
        provider=provider,
        model=r.string(table["model"], [*keys, "model"]),
        params=_params(r, table, keys),
        template=template,
        pins=dict(r.table(table.get("pins", {}), [*keys, "pins"])),
        standalone=standalone,
    )


def _load_checks(r: _Reader, value: object, keys: Sequence[str]) -> CheckSet:
    path = r.file(value, keys)
    if not path.is_file():
        raise r.fail(keys, str(path), "the checks file does not exist")
    return load_checks(path)


def _check(r: _Reader, value: object, keys: Sequence[str]) -> OutputCheck:
    table = r.table(value, keys)
    r.known(table, keys, CHECK_KEYS[:3] if keys == ("score",) else CHECK_KEYS)
    kinds = [k for k in OUTPUT_CHECK_KINDS if k in table]
    if len(kinds) != 1:
        raise r.fail(keys, None, "give exactly one of 'regex' or 'python'")
    threshold = table.get("threshold")
    return OutputCheck(
        kind=kinds[0],
        spec=r.string(table[kinds[0]], [*keys, kinds[0]]),
        threshold=(
            r.number(threshold, [*keys, "threshold"], low=-math.inf)
            if threshold is not None
            else None
        ),
        where=str(r.where([*keys, kinds[0]])),
    )


def _verifier(
    r: _Reader, value: object, keys: Sequence[str], default_checks: CheckSet | None
) -> Verifier:
    """``{regex | python [, threshold]}``, ``{checks}`` or ``{judge [, threshold, checks]}``."""
    table = r.table(value, keys)
    if "checks" not in table and "judge" not in table:
        return _check(r, table, keys)
    r.known(table, keys, ("checks", "judge", "threshold"))
    if "judge" not in table and "threshold" in table:
        raise r.fail([*keys, "threshold"], table["threshold"], "threshold needs judge = ID")
    if "checks" in table:
        checks = _load_checks(r, table["checks"], [*keys, "checks"])
    elif default_checks is not None:
        checks = default_checks
    else:
        raise r.fail(
            [*keys, "judge"], table["judge"], 'a judge verifier needs checks = "checks.yaml" '
            "(here or in [score])",
        )  # fmt: skip
    threshold = table.get("threshold")
    return ChecksVerifier(
        checks=checks,
        judge=r.string(table["judge"], [*keys, "judge"]) if "judge" in table else None,
        threshold=(
            r.number(threshold, [*keys, "threshold"], low=-math.inf)
            if threshold is not None
            else None
        ),
        where=str(r.where([*keys, "judge" if "judge" in table else "checks"])),
    )


def _cascade_arm(
    r: _Reader, name: str, table: Mapping[str, Any], checks: CheckSet | None
) -> CascadeArm:
    keys = ("arms", name)
    r.known(table, keys, CASCADE_KEYS)
    for key in ("cheap", "strong", "verifier"):
        if key not in table:
            raise r.fail(keys, None, f"a cascade arm needs {key!r}")
    return CascadeArm(
        name=name,
        cheap=r.string(table["cheap"], [*keys, "cheap"]),
        strong=r.string(table["strong"], [*keys, "strong"]),
        verifier=_verifier(r, table["verifier"], [*keys, "verifier"], checks),
        pins=dict(r.table(table.get("pins", {}), [*keys, "pins"])),
    )


def _check_cascades(config: RunConfig, r: _Reader) -> None:
    models = {a.name for a in config.arms if isinstance(a, ModelArm)}
    for arm in config.arms:
        if isinstance(arm, CascadeArm):
            for step in ("cheap", "strong"):
                target = getattr(arm, step)
                if target not in models:
                    raise r.fail(
                        ("arms", arm.name, step),
                        target,
                        f"a cascade's {step} step names a model arm; known: "
                        f"{', '.join(sorted(models)) or '(none)'}",
                    )


def parse_arm_flag(value: str) -> ModelArm:
    """``--arm NAME=PROVIDER:MODEL`` as a model arm with the default template."""
    name, sep, rest = value.partition("=")
    provider, colon, model = rest.partition(":")
    if not sep or not colon or not name.strip() or not provider.strip() or not model.strip():
        raise UsageError(
            f"--arm takes NAME=PROVIDER:MODEL (e.g. a=openai:gpt-4o-mini), not {value!r}"
        )
    if not _NAME.match(name.strip()):
        raise UsageError(f"arm names use letters, digits, '_', '.' and '-', not {name!r}")
    return ModelArm(name=name.strip(), provider=provider.strip(), model=model.strip())


def with_flags(
    config: RunConfig,
    *,
    arms: Sequence[str] = (),
    cases: Path | None = None,
    repeats: int | None = None,
    store: Path | None = None,
    max_cost: float | None = None,
    score_regex: str | None = None,
    checks: Path | None = None,
    couple: bool | None = None,
) -> RunConfig:
    """``config`` with the command line's flags applied (flags win; ``--arm`` adds arms)."""
    new_arms = list(config.arms)
    for value in arms:
        arm = parse_arm_flag(value)
        if arm.provider not in config.providers and arm.provider not in KINDS:
            raise UsageError(
                f"--arm {value!r}: unknown provider {arm.provider!r}; "
                f"known: {', '.join(sorted({*config.providers, *KINDS}))}"
            )
        if any(a.name == arm.name for a in new_arms):
            raise UsageError(f"arm {arm.name!r} is defined twice")
        new_arms.append(arm)
    if repeats is not None and repeats < 1:
        raise UsageError(f"--repeats must be at least 1, not {repeats}")
    if max_cost is not None and (not math.isfinite(max_cost) or max_cost < 0):
        raise UsageError(f"--max-cost takes a finite number of USD >= 0, not {max_cost}")
    out = replace(
        config,
        arms=tuple(new_arms),
        cases=cases if cases is not None else config.cases,
        repeats=repeats if repeats is not None else config.repeats,
        store=store if store is not None else config.store,
        max_cost=max_cost if max_cost is not None else config.max_cost,
        couple=couple if couple is not None else config.couple,
    )
    if score_regex is not None:
        out = replace(out, score=OutputCheck("regex", score_regex, where="--score-regex"))
    if checks is not None:
        if not checks.is_file():
            raise UsageError(f"--checks {checks}: the checks file does not exist")
        out = replace(out, checks=load_checks(checks))
    if out.checks is not None and out.score is not None:
        raise UsageError(
            "--checks scores the run (score = the overall pass); drop --score-regex or the "
            "[score] regex/python scorer, or score the run later with evaldelta score --store"
        )
    if len(out.run_arms) < 1:
        raise UsageError("no arms: give --arm NAME=PROVIDER:MODEL or a --config with [arms.*]")
    return out


def provider_for(config: RunConfig, name: str) -> ProviderConfig:
    """The named provider table, or the defaults of the provider kind of that name."""
    if name in config.providers:
        return config.providers[name]
    return ProviderConfig(name=name, kind=name)

"""What the Inspect AI hook does, without importing Inspect: settings, compare, write, one line.

:mod:`evaldelta.integrations.inspect_hook` calls :func:`report_logs` when an eval set (or a
run of several models on one task) ends. The comparison is exactly ``evaldelta compare``'s on
the same logs, with ``--by`` from the settings (default ``task``), so ``evaldelta compare
LOGDIR --by task [--baseline B] [--policy P]`` writes the same report.

Settings come from the environment, or from a TOML file named by ``EVALDELTA_CONFIG`` (keys
``baseline``, ``policy``, ``by``, ``formats``, ``enabled``); a variable wins over the file:

==========================  ==================================================================
``EVALDELTA_INSPECT``       ``off`` (or ``0``, ``false``, ``no``) turns the hook off
``EVALDELTA_BASELINE``      the baseline model (default: the first log's model)
``EVALDELTA_POLICY``        a gate policy (TOML): the verdict is written and named too
``EVALDELTA_BY``            slicing columns, comma-separated (default ``task``)
``EVALDELTA_FORMATS``       report formats, comma-separated: ``html``, ``markdown``, ``text``,
                            ``junit`` (needs a policy); default ``html,markdown``
==========================  ==================================================================

No ``.json`` is written beside the logs: Inspect reads every ``.json`` file in a log folder
as a log.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.errors import UsageError

__all__ = ["FORMATS", "Settings", "report_logs", "settings_from_env"]

FORMATS = ("html", "markdown", "text", "junit")
_SUFFIX = {"html": ".html", "markdown": ".md", "text": ".txt", "junit": ".junit.xml"}
_OFF = {"off", "0", "false", "no"}
_KEYS = {"baseline", "policy", "by", "formats", "enabled"}


@dataclass(frozen=True)
class Settings:
    """The hook's options (see the module docstring)."""

    enabled: bool = True
    baseline: str | None = None
    policy: Path | None = None
    by: tuple[str, ...] = ("task",)
    formats: tuple[str, ...] = ("html", "markdown")


def _split(text: str, name: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in text.split(",") if part.strip())
    if not items:
        raise UsageError(f"{name}={text!r}: give at least one name, comma-separated")
    return items


def _file_settings(path: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"EVALDELTA_CONFIG={path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"EVALDELTA_CONFIG={path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UsageError(
            f"EVALDELTA_CONFIG={path}: unknown key {unknown[0]!r} "
            f"(keys: {', '.join(sorted(_KEYS))})"
        )
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "enabled":
            if not isinstance(value, bool):
                raise UsageError(f"EVALDELTA_CONFIG={path}: 'enabled' must be true or false")
            out[key] = value
            continue
        if isinstance(value, list) and key in ("by", "formats"):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str):
            raise UsageError(f"EVALDELTA_CONFIG={path}: {key!r} must be text, not {value!r}")
        out[key] = value
    return out


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Read the settings; a bad value raises :class:`UsageError` in one line naming it."""
    env = os.environ if env is None else env
    raw: dict[str, Any] = (
        _file_settings(env["EVALDELTA_CONFIG"]) if "EVALDELTA_CONFIG" in env else {}
    )
    names = {key: f"EVALDELTA_{key.upper()}" for key in ("baseline", "policy", "by", "formats")}
    for key, name in names.items():
        if env.get(name, "").strip():
            raw[key] = env[name].strip()
    if "EVALDELTA_INSPECT" in env:
        raw["enabled"] = env["EVALDELTA_INSPECT"].strip().lower() not in _OFF
    by = _split(raw["by"], names["by"]) if "by" in raw else Settings.by
    formats = _split(raw["formats"], names["formats"]) if "formats" in raw else Settings.formats
    for fmt in formats:
        if fmt not in FORMATS:
            raise UsageError(
                f"{names['formats']}: unknown format {fmt!r} (formats: {', '.join(FORMATS)})"
            )
    policy = Path(raw["policy"]) if raw.get("policy") else None
    if policy is not None and not policy.is_file():
        raise UsageError(f"{names['policy']}={policy}: no such policy file")
    if "junit" in formats and policy is None:
        raise UsageError(f"{names['formats']}: junit writes a gate verdict: set EVALDELTA_POLICY")
    return Settings(
        enabled=bool(raw.get("enabled", True)),
        baseline=raw.get("baseline") or None,
        policy=policy,
        by=by,
        formats=formats,
    )


@dataclass(frozen=True)
class Written:
    """What one comparison wrote, and its answer in one line."""

    line: str
    paths: tuple[Path, ...]
    exit_code: int


def _answer(comparison: Any, verdict: Any, paths: Sequence[Path]) -> str:
    """One line: each candidate's overall paired delta on the first metric, the verdict."""
    from evaldelta.report._format import fmt_ci, fmt_delta

    metric = comparison.metrics[0]
    binary = metric.kind == "binary"
    parts = []
    for pair in metric.slicings[0].pairs:
        d = pair.overall.paired
        if d is None:
            parts.append(f"{pair.candidate} vs {pair.baseline}: no paired cases")
            continue
        ci = fmt_ci(d.ci.low, d.ci.high, binary)
        parts.append(
            f"{pair.candidate} vs {pair.baseline} on {metric.metric}: "
            f"{fmt_delta(d.estimate, binary)} {ci} ({d.n} paired cases)"
        )
    line = "evaldelta: " + "; ".join(parts)
    if verdict is not None:
        line += f"; gate {verdict.decision.upper()} (exit {verdict.exit_code})"
    if paths:
        line += f"; report: {paths[0]}"
    return line


def report_logs(
    sources: Sequence[Path], out_dir: Path, settings: Settings, stem: str = "evaldelta-report"
) -> Written:
    """Compare the models in ``sources`` (logs or a log folder) and write the reports.

    The files are ``out_dir/STEM.html``, ``STEM.md``, ``STEM.txt`` and, with a policy,
    ``STEM.verdict.md`` and ``STEM.junit.xml`` (as the formats ask).
    """
    from evaldelta.comparison import compare
    from evaldelta.gating import compare_with_policy
    from evaldelta.report import render_markdown, render_text
    from evaldelta.report.html import render_html
    from evaldelta.report.verdict import render_verdict_markdown

    options: dict[str, Any] = {"baseline": settings.baseline, "by": settings.by}
    verdict = None
    if settings.policy is not None:
        comparison, verdict = compare_with_policy(list(sources), settings.policy, **options)
    else:
        comparison = compare(list(sources), **options)
    texts: dict[str, str] = {}
    for fmt in settings.formats:
        if fmt == "html":
            texts[fmt] = render_html(comparison, verdict)
        elif fmt == "markdown":
            texts[fmt] = render_markdown(comparison)
            if verdict is not None:
                texts["verdict"] = render_verdict_markdown(verdict)
        elif fmt == "text":
            texts[fmt] = render_text(comparison, verdict)
        elif fmt == "junit" and verdict is not None:
            from evaldelta.commands.gate import render_junit

            texts[fmt] = render_junit(verdict, comparison, settings.policy)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, text in texts.items():
        suffix = ".verdict.md" if fmt == "verdict" else _SUFFIX[fmt]
        path = out_dir / f"{stem}{suffix}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    code = verdict.exit_code if verdict is not None else 0
    return Written(_answer(comparison, verdict, paths), tuple(paths), code)


def safe_stem(task: str) -> str:
    """A task name as part of a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", task).strip("._") or "task"

"""The Inspect AI extension: when an eval set ends, compare its models, task by task.

Inspect loads this module through the ``inspect_ai`` entry point group (``pyproject.toml``;
Inspect's loader is ``inspect_ai/_util/entrypoints.py``, called by ``hooks/_startup.py``
before a run), and the ``@hooks`` decorator registers :class:`EvaldeltaHooks` (the API of
``inspect_ai.hooks``, read from inspect-ai 0.3.285):

- ``on_eval_set_end(EvalSetEnd(eval_set_id, log_dir))``: when the folder holds two or more
  models of one task, compare the folder as ``evaldelta compare LOGDIR --by task`` does and
  write ``LOGDIR/evaldelta-report.html`` and ``.md`` (and the verdict with a policy);
- ``on_run_end(RunEnd(eval_set_id, run_id, exception, logs))`` of a plain ``eval()`` (not
  part of an eval set) that ran several models on one task: the same for that run's logs,
  one report per such task (``evaldelta-report-TASK.*`` when the run had several).

Options: :mod:`evaldelta.integrations._inspect_report` (``EVALDELTA_BASELINE``,
``EVALDELTA_POLICY``, ``EVALDELTA_BY``, ``EVALDELTA_FORMATS``, ``EVALDELTA_INSPECT=off``,
``EVALDELTA_CONFIG``). The answer is one line on stderr and in the ``evaldelta.inspect``
log (a warning likewise). The hook never fails the eval: anything that goes wrong is one
warning (Inspect wraps every hook call in its own try/except as well, ``hooks/_hooks.py``
``_emit_to_all``).
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from inspect_ai.hooks import EvalSetEnd, Hooks, RunEnd, hooks

from evaldelta.integrations._inspect_report import (
    Settings,
    Written,
    report_logs,
    safe_stem,
    settings_from_env,
)

__all__ = ["EvaldeltaHooks", "local_path"]

logger = logging.getLogger("evaldelta.inspect")


def local_path(location: str) -> Path | None:
    """A log location as a local path; None for a remote one (``s3://``, ``https://``)."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:  # a Windows drive letter is one letter
        return None
    return Path(location)


def _say(written: Written) -> None:
    logger.info(written.line)
    sys.stderr.write(written.line + "\n")
    sys.stderr.flush()


def _warn(what: str, exc: BaseException) -> None:
    from evaldelta.errors import EvaldeltaError

    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not isinstance(exc, EvaldeltaError | OSError):
        message = f"{type(exc).__name__}: {message}"
    line = f"evaldelta: warning: could not compare {what}: {message} (the eval is unaffected)"
    logger.warning(line)  # into Inspect's log, where its handler is set to show it
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _models_per_task(folder: Path) -> dict[str, set[str]]:
    """The models of each task among the logs in ``folder`` (headers only)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    out: dict[str, set[str]] = defaultdict(set)
    for info in list_eval_logs(str(folder), recursive=False):
        header = read_eval_log(info.name, header_only=True)
        out[header.eval.task].add(header.eval.model)
    return out


@hooks(
    name="evaldelta",
    description="Compares the models of an eval set task by task: paired deltas with "
    "intervals, and a release gate (evaldelta).",
)
class EvaldeltaHooks(Hooks):
    """Write evaldelta's report beside the logs when an eval set of several models ends."""

    def enabled(self) -> bool:
        """Off with ``EVALDELTA_INSPECT=off``; a bad setting is reported when the set ends."""
        try:
            return settings_from_env().enabled
        except Exception:
            return True  # on_*_end reports the bad setting as a warning

    async def on_eval_set_end(self, data: EvalSetEnd) -> None:
        """Compare the eval set's folder when it holds two models of one task."""
        try:
            self._eval_set(data.log_dir)
        except Exception as exc:  # never fail the eval
            _warn(f"the eval set in {data.log_dir}", exc)

    async def on_run_end(self, data: RunEnd) -> None:
        """A plain ``eval()`` of several models: compare them on each task."""
        if data.eval_set_id is not None or data.exception is not None:
            return  # an eval set's runs are compared once, when the set ends
        try:
            self._run(data.logs)
        except Exception as exc:  # never fail the eval
            _warn("the run's logs", exc)

    def _eval_set(self, log_dir: str) -> None:
        settings = settings_from_env()
        folder = local_path(log_dir)
        if folder is None:
            _warn(log_dir, OSError("the logs are not on this machine: compare a local copy"))
            return
        models = _models_per_task(folder)
        if not any(len(m) > 1 for m in models.values()):
            return  # one model per task: nothing to compare
        _say(report_logs([folder], folder, settings))

    def _run(self, logs: Any) -> None:
        by_task: dict[str, dict[str, Path]] = defaultdict(dict)
        for log in logs:
            path = local_path(log.location) if log.location else None
            if path is not None and log.status == "success":
                by_task[log.eval.task][log.eval.model] = path
        tasks = {task: files for task, files in by_task.items() if len(files) > 1}
        if not tasks:
            return
        settings: Settings = settings_from_env()
        for task, files in tasks.items():
            stem = "evaldelta-report" if len(tasks) == 1 else f"evaldelta-report-{safe_stem(task)}"
            paths = list(files.values())
            _say(report_logs(paths, paths[0].parent, settings, stem))

"""Checks inside a run: score each attempt as it finishes, and verify a cascade's cheap step.

``run --checks checks.yaml`` (or ``[score] checks = "checks.yaml"``) scores each attempt with
the checks file when it finishes: mechanical checks in-process, judge checks through the
judge's provider, blinded exactly as :mod:`evaldelta.checks._judge` does (every arm and
model name of the run is redacted). The results land in the store's ``scores`` table (so
``eval_rows`` carries ``pass``, ``check.<id>``, ``judge_score``) and ``score`` is the
overall pass. Pairwise judges need two arms at once: score them afterwards with
``evaldelta score --store``.

A cascade's verifier may come from a checks file:

* ``verifier = { checks = "checks.yaml" }``: escalate when any mechanical check fails (a
  check that cannot be scored, e.g. a missing case value or a pattern that timed out on
  the output, does not fail; it is listed under ``unscored``);
* ``verifier = { judge = "tone", threshold = 3.5 }``: escalate when that judge check's graded
  score is below the threshold, or unreadable; without ``threshold``, when its verdict is not
  pass. The judge check is looked up in ``checks`` (default: the run's scoring checks).

The verifier's result is recorded per attempt (``attempts.verifier_json``) and its checks
file's sha256 and the judge's pins go into the cascade's pins (and so into the run id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evaldelta.checks import (
    CheckSet,
    JudgeCheck,
    OutputCheck,
    judge_single,
    metric_names,
    metric_values,
    score_rows_async,
)
from evaldelta.errors import ConfigError, JudgeError, Location
from evaldelta.provider import Provider

__all__ = [
    "AttemptScore",
    "CheckRunner",
    "ChecksVerifier",
    "Verifier",
    "VerifierResult",
    "checks_pins",
]


def checks_pins(checks: CheckSet, pairwise: bool = False) -> dict[str, Any]:
    """What a checks file pins: its path, sha256, metric names, and each judge's pins."""
    judges = [j for j in checks.judges if pairwise or j.mode == "single"]
    return {
        "kind": "checks",
        "checks_file": checks.path,
        "checks_sha256": checks.sha256,
        "metrics": list(metric_names(checks, pairwise=pairwise)),
        "judges": [asdict(j.pins()) for j in judges],
    }


@dataclass(frozen=True)
class ChecksVerifier:
    """A cascade verifier built from a checks file: its mechanical checks, or one judge."""

    checks: CheckSet
    judge: str | None = None
    threshold: float | None = None
    where: str = "<config>"

    def __post_init__(self) -> None:
        if self.judge is None:
            if not self.checks.mechanical:
                raise ConfigError(
                    f"the verifier's checks file {self.checks.path} has no mechanical checks",
                    Location(self.where),
                )
            if self.threshold is not None:
                raise ConfigError(
                    "threshold belongs to a judge verifier (verifier = { judge = ID, "
                    "threshold = N })",
                    Location(self.where),
                )
            return
        check = self.judge_check
        if check.mode != "single":
            raise ConfigError(
                f"judge check {self.judge!r} is pairwise; a verifier needs a single-mode judge",
                Location(self.where, value=self.judge),
            )
        if self.threshold is not None and check.graded is None:
            raise ConfigError(
                f"judge check {self.judge!r} has no graded scale, so a threshold cannot apply "
                "(add graded: [LOW, HIGH] to it, or drop threshold)",
                Location(self.where, value=self.judge),
            )

    @property
    def judge_check(self) -> JudgeCheck:
        """The judge check named by ``judge``."""
        for j in self.checks.judges:
            if j.id == self.judge:
                return j
        known = ", ".join(j.id for j in self.checks.judges) or "(none)"
        raise ConfigError(
            f"no judge check {self.judge!r} in {self.checks.path}; its judge checks: {known}",
            Location(self.where, value=self.judge),
        )

    @property
    def fields(self) -> tuple[str, ...]:
        """The case fields the verifier reads."""
        if self.judge is None:
            return self.checks.fields(include_judges=False)
        return self.judge_check.fields

    def describe(self) -> dict[str, Any]:
        """The verifier as recorded in the cascade's pins."""
        out: dict[str, Any] = {
            "kind": "judge" if self.judge else "checks",
            "checks_file": self.checks.path,
            "checks_sha256": self.checks.sha256,
        }
        if self.judge is None:
            out["checks"] = [c.id for c in self.checks.mechanical]
        else:
            out["judge"] = self.judge
            out["threshold"] = self.threshold
            out["judge_pins"] = asdict(self.judge_check.pins())
        return out


Verifier = OutputCheck | ChecksVerifier


@dataclass(frozen=True)
class VerifierResult:
    """A verifier's result on one cheap output: pass (keep it) or not (escalate), and why."""

    passed: bool
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class AttemptScore:
    """One attempt scored on the run's checks."""

    passed: float | None
    metrics: Mapping[str, tuple[float | None, str | None]]
    error: str | None = None


class CheckRunner:
    """Runs checks and judges for one run session; judge calls go to ``providers`` by name."""

    def __init__(self, providers: Mapping[str, Provider], names: Sequence[str], seed: int) -> None:
        self.providers = providers
        self.names = tuple(names)
        self.seed = seed

    def provider(self, name: str) -> Provider:
        """The provider a judge check names."""
        return self.providers[name]

    async def verify(
        self, verifier: Verifier, output: str, case: Mapping[str, Any]
    ) -> VerifierResult:
        """Run ``verifier`` on a cheap step's output (exceptions propagate to the caller)."""
        if isinstance(verifier, OutputCheck):
            value = verifier.value(output, case)
            bar = verifier.threshold if verifier.threshold is not None else 1.0
            passed = value >= bar
            return VerifierResult(passed, {"kind": verifier.kind, "value": value, "passed": passed})
        if verifier.judge is None:
            failed: dict[str, str] = {}
            unscored: list[str] = []
            for check in verifier.checks.mechanical:
                res = check.evaluate(output, case)
                if res.passed is False:
                    failed[check.id] = res.reason
                elif res.passed is None:
                    unscored.append(check.id)
            detail = {
                "kind": "checks",
                "checks_sha256": verifier.checks.sha256,
                "passed": not failed,
                "failed": failed,
                "unscored": unscored,
            }
            return VerifierResult(not failed, detail)
        judge = verifier.judge_check
        run = await judge_single(
            judge,
            [(case, output)],
            self.provider(judge.provider),
            seed=self.seed,
            redact_names=self.names,
            concurrency=1,
        )
        res = run.results[0]
        if verifier.threshold is not None:
            passed = res.score is not None and res.score >= verifier.threshold
        else:
            passed = res.passed is True
        detail = {
            "kind": "judge",
            "check": judge.id,
            "verdict": res.passed,
            "score": res.score,
            "threshold": verifier.threshold,
            "passed": passed,
            "reason": res.reason,
            "model_versions": list(run.pins.model_versions),
        }
        return VerifierResult(passed, detail)

    async def score(
        self,
        checks: CheckSet,
        output: str | None,
        case: Mapping[str, Any],
        extra: Mapping[str, Any],
    ) -> AttemptScore:
        """Score one attempt's output on ``checks`` (single-mode judges included)."""
        names = metric_names(checks, pairwise=False)
        row = {**case, **extra, "output": output}
        judges = [j for j in checks.judges if j.mode == "single"]
        provider = self.provider(judges[0].provider) if judges and output is not None else None
        if provider is None and judges:  # nothing to judge: an errored attempt
            return AttemptScore(None, {n: (None, None) for n in names})
        try:
            result = await score_rows_async(
                [row], checks, provider=provider, seed=self.seed, redact_names=self.names
            )
        except JudgeError as exc:
            return AttemptScore(None, {n: (None, None) for n in names}, f"scoring: {exc}")
        scored = result.rows[0]
        value = scored.get("pass")
        return AttemptScore(None if value is None else float(value), metric_values(scored, names))

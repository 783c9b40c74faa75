"""The blinded LLM judge: a rubric, one reply (or two, pairwise), and nothing else.

Blinding (seed 002: "strip provenance and shuffle the order before grading"):

* the prompt holds the rubric, the case fields the check names in ``inputs``, and the
  reply text; never the arm, the model, or any other column of the row;
* arm and model names that occur inside a reply or an input are replaced by ``[redacted]``;
* every call (items x repeats, and both orders in pairwise mode) is shuffled with a seeded
  ``random.Random`` before it is sent; the seed and the order sent are recorded;
* repeats are real draws: repeat ``r`` sends ``seed = base + r`` (distinct requests, so no
  cache can answer them), and the judge keeps no cache of its own.

Pinned and recorded (:class:`JudgePins`): provider, model, parameters, sha256 of the rubric
text and of the prompt template, repeats, shuffle seed, and the model version the API
reported.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaldelta._util._json_bounds import nests_too_deep
from evaldelta.checks._mechanical import CheckResult
from evaldelta.checks._spec import CheckSpec
from evaldelta.errors import JudgeError
from evaldelta.provider import ChatMessage, GenerationParams, Provider, ProviderError

__all__ = [
    "JudgeCheck",
    "JudgePins",
    "JudgeRun",
    "PairItem",
    "PairwiseRun",
    "build_judge",
    "judge_pairwise",
    "judge_single",
    "parse_preference",
    "parse_verdict",
]

# a single judge scores one reply; a pairwise judge prefers one of two (both orders)
JudgeMode = Literal["single", "pairwise"]

SYSTEM = (
    "You grade one customer-facing reply against one rubric. You are not told who or what "
    "wrote the reply. Answer with a JSON object only."
)
SINGLE = """Rubric: {rubric}

{inputs}Reply to grade:
<<<
{output}
>>>

Answer as JSON: {{"verdict": "pass" or "fail", {score}"reason": "one sentence"}}"""
PAIRWISE = """Rubric: {rubric}

{inputs}Reply A:
<<<
{a}
>>>

Reply B:
<<<
{b}
>>>

Which reply satisfies the rubric better?
Answer as JSON: {{"preferred": "A", "B" or "tie", "reason": "one sentence"}}"""
TEMPLATE_SHA256 = hashlib.sha256((SYSTEM + SINGLE + PAIRWISE).encode()).hexdigest()
PARAM_KEYS = ("temperature", "top_p", "max_tokens", "seed")


@dataclass(frozen=True)
class JudgePins:
    """What pins a judge: recorded beside every score it produces."""

    check_id: str
    provider: str
    model: str
    params: Mapping[str, Any]
    rubric_sha256: str
    template_sha256: str
    repeats: int
    mode: JudgeMode
    graded: tuple[float, float] | None
    shuffle_seed: int | None = None
    model_versions: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeCheck:
    """A compiled judge check."""

    spec: CheckSpec
    rubric: str
    model: str
    provider: str
    params: GenerationParams
    inputs: tuple[str, ...]
    graded: tuple[float, float] | None
    pass_threshold: float | None
    repeats: int
    mode: JudgeMode

    @property
    def id(self) -> str:
        """The check's id."""
        return self.spec.id

    @property
    def kind(self) -> str:
        """Always ``judge``."""
        return "judge"

    @property
    def fields(self) -> tuple[str, ...]:
        """The case columns shown to the judge."""
        return self.inputs

    def pins(self, seed: int | None = None, versions: Sequence[str] = ()) -> JudgePins:
        """The pins of this judge (with the shuffle seed and reported versions of a run)."""
        params = {
            k: getattr(self.params, k) for k in PARAM_KEYS if getattr(self.params, k) is not None
        }
        return JudgePins(
            self.id,
            self.provider,
            self.model,
            params,
            hashlib.sha256(self.rubric.encode()).hexdigest(),
            TEMPLATE_SHA256,
            self.repeats,
            self.mode,
            self.graded,
            seed,
            tuple(sorted(set(versions))),
        )


def build_judge(spec: CheckSpec) -> JudgeCheck:
    """Compile a judge check, validating its options."""
    o = spec.options
    rubric = o.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise spec.error("rubric", "must be non-empty text")
    model, provider = o.get("model"), o.get("provider", "openai")
    if not isinstance(model, str) or not model:
        raise spec.error(
            "model", "a judge needs a pinned model id (here or in the top-level judge:)"
        )
    if not isinstance(provider, str) or not provider:
        raise spec.error("provider", "must be a provider name")
    raw = o.get("params", {}) or {}
    if not isinstance(raw, dict) or any(k not in PARAM_KEYS for k in raw):
        raise spec.error("params", f"must be a mapping with keys among {', '.join(PARAM_KEYS)}")
    try:
        params = GenerationParams(**raw)
    except TypeError as exc:
        raise spec.error("params", str(exc)) from None
    inputs = o.get("inputs", [])
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise spec.error("inputs", "must be a list of case column names")
    graded = o.get("graded")
    if graded is not None:
        ok = (
            isinstance(graded, list)
            and len(graded) == 2
            and all(isinstance(g, int | float) and not isinstance(g, bool) for g in graded)
        )
        if not ok or graded[0] >= graded[1]:
            raise spec.error("graded", "must be a scale [LOW, HIGH] with LOW < HIGH")
        graded = (float(graded[0]), float(graded[1]))
    threshold = o.get("pass_threshold")
    if threshold is not None and not isinstance(threshold, int | float):
        raise spec.error("pass_threshold", "must be a number")
    repeats = o.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise spec.error("repeats", "must be a whole number >= 1")
    mode = o.get("mode", "single")
    if mode not in ("single", "pairwise"):
        raise spec.error("mode", "must be single or pairwise")
    return JudgeCheck(
        spec,
        rubric.strip(),
        model,
        provider,
        params,
        tuple(inputs),
        graded,
        float(threshold) if threshold is not None else None,
        repeats,
        mode,
    )


def redact(text: str, names: Sequence[str]) -> str:
    """Replace arm and model names (3+ characters, whole words, any case) with [redacted]."""
    for name in sorted({n for n in names if len(n.strip()) >= 3}, key=len, reverse=True):
        text = re.sub(
            rf"(?<!\w){re.escape(name.strip())}(?!\w)", "[redacted]", text, flags=re.IGNORECASE
        )
    return text


def _inputs_block(check: JudgeCheck, case: Mapping[str, Any], names: Sequence[str]) -> str:
    lines = [f"{k}: {redact(str(case.get(k, '')), names)}" for k in check.inputs]
    return "Case:\n" + "\n".join(lines) + "\n\n" if lines else ""


def single_messages(
    check: JudgeCheck, case: Mapping[str, Any], output: str, names: Sequence[str] = ()
) -> list[ChatMessage]:
    """The exact messages the judge receives for one reply."""
    lo_hi = (
        f'"score": a number from {check.graded[0]:g} to {check.graded[1]:g}, '
        if check.graded
        else ""
    )
    body = SINGLE.format(
        rubric=check.rubric,
        inputs=_inputs_block(check, case, names),
        output=redact(output, names),
        score=lo_hi,
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", body)]


def pairwise_messages(
    check: JudgeCheck, case: Mapping[str, Any], a: str, b: str, names: Sequence[str] = ()
) -> list[ChatMessage]:
    """The exact messages the judge receives for one ordered pair."""
    body = PAIRWISE.format(
        rubric=check.rubric,
        inputs=_inputs_block(check, case, names),
        a=redact(a, names),
        b=redact(b, names),
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", body)]


def _json_object(text: str) -> dict[str, Any] | None:
    for m in re.finditer(r"\{.*?\}", text, re.DOTALL):
        if nests_too_deep(m.group(0)):  # a reply is data too: no RecursionError from json
            continue
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def parse_verdict(
    text: str, graded: tuple[float, float] | None = None, threshold: float | None = None
) -> tuple[bool | None, float | None, str]:
    """(passed, score, reason) from a judge reply; passed is None when it cannot be read."""
    obj = _json_object(text) or {}
    verdict = str(obj.get("verdict", "")).strip().lower()
    if verdict not in ("pass", "fail"):
        m = re.search(r"\b(pass|fail)(?:ed|es)?\b", text, re.IGNORECASE)
        verdict = m.group(1).lower() if m else ""
    score: float | None = None
    if graded is not None:
        raw = obj.get("score")
        if raw is None:
            m = re.search(r"score\W{0,3}(-?\d+(?:\.\d+)?)", text, re.IGNORECASE)
            raw = m.group(1) if m else None
        try:
            score = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            score = None
        if score is not None and not graded[0] <= score <= graded[1]:
            score = None
    passed: bool | None = {"pass": True, "fail": False}.get(verdict)
    if passed is None and score is not None and threshold is not None:
        passed = score >= threshold
    reason = str(obj.get("reason", "")).strip() or text.strip()[:200]
    if passed is None:
        reason = f"unreadable judge reply: {text.strip()[:120]!r}"
    return passed, score, reason


def parse_preference(text: str) -> str | None:
    """``A``, ``B`` or ``tie`` from a pairwise judge reply (None when it cannot be read)."""
    obj = _json_object(text) or {}
    pref = str(obj.get("preferred", "")).strip().lower()
    if pref not in ("a", "b", "tie"):
        m = re.search(r"\b(?:reply\s+)?(A|B|tie)\b", text)
        pref = m.group(1).lower() if m else ""
    return {"a": "A", "b": "B", "tie": "tie"}.get(pref)


@dataclass(frozen=True)
class JudgeDraw:
    """One judge call's reading."""

    passed: bool | None
    score: float | None
    reason: str
    model_version: str | None


@dataclass(frozen=True)
class JudgeRun:
    """A judge check over many replies: one result per item (in the caller's order)."""

    results: tuple[CheckResult, ...]
    draws: tuple[tuple[JudgeDraw, ...], ...]
    order: tuple[tuple[int, int], ...]  # (item, repeat) in the order sent
    pins: JudgePins


def _params(check: JudgeCheck, repeat: int) -> GenerationParams:
    base = check.params.seed if check.params.seed is not None else 0
    p = check.params
    return GenerationParams(p.temperature, p.top_p, p.max_tokens, base + repeat, p.stop)


async def _calls(
    provider: Provider,
    model: str,
    jobs: Sequence[tuple[list[ChatMessage], GenerationParams]],
    concurrency: int,
) -> list[tuple[str, str | None]]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(messages: list[ChatMessage], params: GenerationParams) -> tuple[str, str | None]:
        async with gate:
            for attempt in range(3):
                try:
                    done = await provider.complete(model, messages, params)
                    return done.text, done.model_version
                except ProviderError as exc:
                    if not exc.retryable or attempt == 2:
                        raise JudgeError(f"the judge call to {model!r} failed: {exc}") from exc
                    await asyncio.sleep(min(exc.retry_after or 0.5 * 2**attempt, 10.0))
        raise AssertionError("unreachable")  # pragma: no cover

    tasks = [asyncio.ensure_future(one(m, p)) for m, p in jobs]
    return list(await asyncio.gather(*tasks))


def _aggregate(check: JudgeCheck, draws: Sequence[JudgeDraw]) -> CheckResult:
    read = [d for d in draws if d.passed is not None]
    scores = [d.score for d in draws if d.score is not None]
    score = sum(scores) / len(scores) if scores else None
    if not read:
        return CheckResult(check.id, None, score, draws[0].reason if draws else "")
    passes = sum(1 for d in read if d.passed)
    passed = passes * 2 > len(read)  # majority of readable draws; a tie fails
    reason = next((d.reason for d in read if d.passed == passed), "")
    if len(draws) > 1:
        reason = f"{passes}/{len(read)} draws pass; {reason}"
    return CheckResult(check.id, passed, score, reason)


async def judge_single(
    check: JudgeCheck,
    items: Sequence[tuple[Mapping[str, Any], str]],
    provider: Provider,
    *,
    seed: int,
    redact_names: Sequence[str] = (),
    concurrency: int = 4,
) -> JudgeRun:
    """Judge each (case fields, reply) item ``repeats`` times, shuffled across all items."""
    order = [(i, r) for i in range(len(items)) for r in range(check.repeats)]
    random.Random(seed).shuffle(order)
    jobs = [
        (single_messages(check, items[i][0], items[i][1], redact_names), _params(check, r))
        for i, r in order
    ]
    replies = await _calls(provider, check.model, jobs, concurrency)
    per_item: list[list[JudgeDraw]] = [[] for _ in items]
    for (i, _), (text, version) in zip(order, replies, strict=True):
        passed, score, reason = parse_verdict(text, check.graded, check.pass_threshold)
        per_item[i].append(JudgeDraw(passed, score, reason, version))
    versions = [d.model_version for ds in per_item for d in ds if d.model_version]
    return JudgeRun(
        tuple(_aggregate(check, ds) for ds in per_item),
        tuple(tuple(ds) for ds in per_item),
        tuple(order),
        check.pins(seed, versions),
    )


@dataclass(frozen=True)
class PairItem:
    """One case judged pairwise: its fields and the two replies (x, y) being compared."""

    case: Mapping[str, Any]
    x: str
    y: str


@dataclass(frozen=True)
class PairwiseRun:
    """Pairwise verdicts: per pair the winner (``x``, ``y``, ``tie`` or ``flipped``)."""

    winners: tuple[str, ...]
    first: tuple[str | None, ...]  # preference with x shown as A
    second: tuple[str | None, ...]  # preference with y shown as A
    flips: int
    readable: int
    order: tuple[tuple[int, int], ...]  # (pair, 0 = x first / 1 = y first) in the order sent
    pins: JudgePins = field(repr=False)

    @property
    def flip_rate(self) -> float:
        """How often the verdict changed when the two replies swapped places (NaN if none)."""
        return self.flips / self.readable if self.readable else float("nan")


def _underlying(pref: str | None, x_first: bool) -> str | None:
    if pref is None or pref == "tie":
        return pref
    return ("x" if pref == "A" else "y") if x_first else ("y" if pref == "A" else "x")


async def judge_pairwise(
    check: JudgeCheck,
    pairs: Sequence[PairItem],
    provider: Provider,
    *,
    seed: int,
    redact_names: Sequence[str] = (),
    concurrency: int = 4,
) -> PairwiseRun:
    """Judge every pair in both orders, shuffled; count position flips."""
    order = [(i, o) for i in range(len(pairs)) for o in (0, 1)]
    random.Random(seed).shuffle(order)
    jobs = []
    for i, o in order:
        p = pairs[i]
        a, b = (p.x, p.y) if o == 0 else (p.y, p.x)
        jobs.append((pairwise_messages(check, p.case, a, b, redact_names), _params(check, 0)))
    replies = await _calls(provider, check.model, jobs, concurrency)
    got: dict[tuple[int, int], str | None] = {}
    versions = []
    for key, (text, version) in zip(order, replies, strict=True):
        got[key] = parse_preference(text)
        if version:
            versions.append(version)
    winners, first, second = [], [], []
    flips = readable = 0
    for i in range(len(pairs)):
        u1, u2 = _underlying(got[(i, 0)], True), _underlying(got[(i, 1)], False)
        first.append(got[(i, 0)])
        second.append(got[(i, 1)])
        if u1 is None or u2 is None:
            winners.append("unreadable")
            continue
        readable += 1
        if u1 == u2:
            winners.append(u1)
        else:
            flips += 1
            winners.append("flipped")
    return PairwiseRun(
        tuple(winners),
        tuple(first),
        tuple(second),
        flips,
        readable,
        tuple(order),
        check.pins(seed, versions),
    )

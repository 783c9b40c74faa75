"""The blinded judge: what it receives, shuffling, repeats, pairwise flips, HTTP and local."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evaldelta.checks import load_checks, parse_checks, score_rows
from evaldelta.checks._judge import (
    TEMPLATE_SHA256,
    JudgeCheck,
    PairItem,
    build_judge,
    judge_pairwise,
    judge_single,
    parse_preference,
    parse_verdict,
)
from evaldelta.provider import ChatMessage, Completion, GenerationParams

JUDGE_YAML = """\
checks:
  - id: order_number
    spec: Names the order.
    kind: contains_field
    field: order_number
  - id: next_step
    spec: Ends with a next step.
    kind: judge
    rubric: Pass if the reply ends with a next step.
    model: judge-model-1
    provider: fake
    params: {temperature: 0.7, max_tokens: 50, seed: 10}
    inputs: [ticket_text]
    repeats: 2
  - id: tone
    spec: Tone.
    kind: judge
    rubric: Pass if the tone is right; score 1-5.
    model: judge-model-1
    provider: fake
    graded: [1, 5]
"""


class RecordingProvider:
    """An in-process provider that records exactly what the judge sent."""

    name = "fake"

    def __init__(self, reply: Any = None) -> None:
        self.calls: list[tuple[str, list[ChatMessage], GenerationParams]] = []
        self.reply = reply or (lambda text: '{"verdict": "pass", "score": 4, "reason": "fine"}')
        self.closed = False

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        self.calls.append((model, list(messages), params))
        return Completion(self.reply(messages[-1].content), model_version="judge-model-1-0520")

    async def aclose(self) -> None:
        self.closed = True


ARM_METADATA = {
    "incumbent": {"model": "claude-opus-4-8", "run_id": "RUN-SECRET-111", "cost_usd": "0.0173"},
    "candidate": {"model": "gpt-5-turbo", "run_id": "RUN-SECRET-222", "cost_usd": "0.0291"},
}


def _rows() -> list[dict[str, Any]]:
    rows = []
    for arm in ("incumbent", "candidate"):
        for i in range(6):
            rows.append(
                {
                    "case_id": f"T{i}",
                    "arm": arm,
                    "repeat": 0,
                    "order_number": str(2200 + i),
                    "ticket_text": f"Where is order #{2200 + i}?",
                    "output": f"[{arm}-reply-{i}] Order #{2200 + i} ships soon. Reply anytime."
                    + (" As claude-opus-4-8 I think so." if arm == "incumbent" and i == 0 else ""),
                    **ARM_METADATA[arm],
                }
            )
    return rows


@pytest.fixture
def checks(tmp_path: Path) -> Any:
    path = tmp_path / "checks.yaml"
    path.write_text(JUDGE_YAML)
    return load_checks(path)


def _sent_text(provider: RecordingProvider) -> list[str]:
    return ["\n".join(m.content for m in messages) for _, messages, _ in provider.calls]


def test_judge_prompt_is_blind_to_arms_models_and_metadata(checks: Any) -> None:
    provider = RecordingProvider()
    score_rows(_rows(), checks, provider=provider, seed=7)
    sent = _sent_text(provider)
    assert len(sent) == 12 * 2 + 12  # next_step: 12 replies x 2 repeats; tone: 12 x 1
    forbidden = [
        "incumbent",
        "candidate",
        "claude-opus-4-8",
        "gpt-5-turbo",
        "RUN-SECRET",
        "0.0173",
        "0.0291",
        "cost_usd",
        "run_id",
        "arm",
    ]
    for text in sent:
        for word in forbidden:
            assert word.lower() not in text.lower().replace("[redacted]", ""), (word, text)
    # what the judge does see: the rubric, the named input field, and the reply
    first = provider.calls[0][1]
    assert [m.role for m in first] == ["system", "user"]
    assert "Rubric: Pass if the reply ends with a next step." in first[1].content
    assert "ticket_text: Where is order #" in first[1].content
    assert any("[redacted]" in t for t in sent)  # the model name inside a reply was removed


def test_judge_order_is_shuffled_with_the_recorded_seed(checks: Any) -> None:
    provider = RecordingProvider()
    res = score_rows(_rows(), checks, provider=provider, seed=7)
    judge = checks.judges[0]
    sent = [t for t in _sent_text(provider) if judge.rubric in t][: 12 * 2]
    order = [(i, r) for i in range(12) for r in range(2)]
    random.Random(7).shuffle(order)
    expected = [f"reply-{i % 6}]" for i, _ in order]
    got = [t.split("[redacted]-")[1].split(" ")[0] for t in sent]
    assert got == expected
    arms_in_order = ["incumbent" if i < 6 else "candidate" for i, _ in order]
    assert arms_in_order != sorted(arms_in_order, key=lambda a: a != "incumbent")  # interleaved
    meta = res.meta()
    assert meta["shuffle_seed"] == 7
    pins = meta["judges"][0]
    assert pins["model"] == "judge-model-1" and pins["provider"] == "fake"
    assert pins["params"] == {"temperature": 0.7, "max_tokens": 50, "seed": 10}
    assert len(pins["rubric_sha256"]) == 64 and pins["template_sha256"] == TEMPLATE_SHA256
    assert pins["model_versions"] == ("judge-model-1-0520",)
    # another seed, another order
    other = RecordingProvider()
    score_rows(_rows(), checks, provider=other, seed=8)
    assert _sent_text(other)[:24] != sent


def test_repeats_are_distinct_draws(checks: Any) -> None:
    provider = RecordingProvider()
    score_rows(_rows(), checks, provider=provider, seed=1)
    judge = checks.judges[0]
    seeds: dict[str, list[int | None]] = {}
    for _, messages, params in provider.calls:
        if judge.rubric in messages[1].content:
            seeds.setdefault(messages[1].content, []).append(params.seed)
    flat = [x for s in seeds.values() for x in s]
    assert sorted(flat) == [10] * 12 + [11] * 12
    # every reply got one draw at seed 10 and one at seed 11 (seed + repeat): no cache hit
    assert all(s.count(10) == s.count(11) for s in seeds.values())


def test_pass_and_graded_score_are_separate_columns(checks: Any) -> None:
    def reply(text: str) -> str:
        if "Pass if the tone" in text:
            return '{"verdict": "pass", "score": 3.5, "reason": "ok tone"}'
        return '{"verdict": "pass", "reason": "ends with a step"}'

    rows = _rows()
    rows[1]["output"] = "No order number here. Reply to us anytime."
    res = score_rows(rows, checks, provider=RecordingProvider(reply), seed=0)
    bad = res.rows[1]
    # the rubric's 3.5 does not soften the failed binary check
    assert bad["check.order_number"] == 0 and bad["pass"] == 0
    assert bad["judge_score"] == 3.5 and bad["judge_score.tone"] == 3.5
    assert res.rows[0]["pass"] == 1


def test_majority_of_repeats_and_unreadable_replies(checks: Any) -> None:
    answers = iter(['{"verdict": "fail", "reason": "no"}', "PASS - fine"] * 100)
    res = score_rows(_rows()[:1], checks, provider=RecordingProvider(lambda _: next(answers)))
    assert res.rows[0]["check.next_step"] == 0  # 1 of 2 pass: a tie fails
    assert "1/2 draws pass" in res.rows[0]["reason.next_step"]
    res = score_rows(_rows()[:1], checks, provider=RecordingProvider(lambda _: "I like it"))
    assert res.rows[0]["check.next_step"] is None and res.rows[0]["pass"] is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "pass", "score": 4, "reason": "r"}', (True, 4.0, "r")),
        ('Sure! {"verdict": "FAIL", "reason": "late"} done', (False, None, "late")),
        ("Verdict: fail. Score: 2", (False, 2.0, "Verdict: fail. Score: 2")),
        ('{"score": 4.5}', (True, 4.5, '{"score": 4.5}')),  # threshold 4 applies
        ('{"verdict": "pass", "score": 9}', (True, None, '{"verdict": "pass", "score": 9}')),
    ],
)
def test_parse_verdict(text: str, expected: tuple[Any, ...]) -> None:
    assert parse_verdict(text, (1.0, 5.0), 4.0) == expected


def test_parse_preference() -> None:
    assert parse_preference('{"preferred": "B", "reason": "x"}') == "B"
    assert parse_preference("Reply A is better") == "A"
    assert parse_preference("tie") == "tie"
    assert parse_preference("no idea") is None


def _judge(mode: str = "pairwise") -> JudgeCheck:
    spec = parse_checks(
        f"- {{id: pw, spec: s, kind: judge, rubric: 'Better reply?', model: m, mode: {mode}}}\n"
    )[0]
    return build_judge(spec)


def test_pairwise_judges_both_orders_and_counts_flips() -> None:
    # a judge with position bias: it always prefers whichever reply it sees first,
    # except for pair 0 where reply "good" wins in both orders
    def reply(text: str) -> str:
        a = text.split("Reply A:\n<<<\n")[1].split("\n>>>")[0]
        if "good" in text:
            return '{"preferred": "%s"}' % ("A" if a == "good" else "B")
        return '{"preferred": "A"}'

    pairs = [PairItem({}, "good", "meh")] + [PairItem({}, f"x{i}", f"y{i}") for i in range(4)]
    provider = RecordingProvider(reply)
    run = asyncio.run(judge_pairwise(_judge(), pairs, provider, seed=3))
    assert len(provider.calls) == 10
    assert run.winners == ("x", "flipped", "flipped", "flipped", "flipped")
    assert run.flips == 4 and run.flip_rate == pytest.approx(0.8)
    assert run.first[1] == "A" and run.second[1] == "A"
    assert run.pins.shuffle_seed == 3 and run.pins.mode == "pairwise"
    sent_orders = [o for _, o in run.order]
    assert sorted(sent_orders) == [0] * 5 + [1] * 5


def test_pairwise_through_score_rows_writes_columns_and_flip_rate() -> None:
    rows = [r for r in _rows()]
    check_set = load_checks_text(
        "- {id: pw, spec: s, kind: judge, rubric: 'Better?', model: m, provider: fake, "
        "mode: pairwise}\n"
    )
    res = score_rows(rows, check_set, provider=RecordingProvider(lambda _: '{"preferred": "A"}'))
    assert res.pairwise["pw"]["flips"] == 6 and res.pairwise["pw"]["flip_rate"] == 1.0
    assert {r["pairwise.pw"] for r in res.rows} == {0.5}


def load_checks_text(text: str) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checks.yaml"
        path.write_text(text)
        return load_checks(path)


def test_judge_without_provider_is_a_one_line_error(checks: Any) -> None:
    from evaldelta.errors import JudgeError

    with pytest.raises(JudgeError, match="no provider was given"):
        score_rows(_rows(), checks)
    res = score_rows(_rows(), checks, skip_judge=True)
    assert res.skipped == ("next_step", "tone") and "check.next_step" not in res.rows[0]


# --------------------------------------------------------------------------- over HTTP


def test_judge_over_http_against_the_test_server(
    fake: Any, tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.reply = lambda model, prompt, n: json.dumps(
        {"verdict": "fail" if "ships soon" not in prompt else "pass", "score": 4, "reason": "r"}
    )
    (tmp_path / "checks.yaml").write_text(JUDGE_YAML.replace("provider: fake", "provider: openai"))
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    out = tmp_path / "scored.jsonl"
    res = run_cli(
        "score",
        src,
        "--checks",
        tmp_path / "checks.yaml",
        "-o",
        out,
        "--judge-base-url",
        fake.url + "/v1",
        "--seed",
        "5",
    )
    assert res.code == 0, res.err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["check.next_step"] == 1 and r["judge_score"] == 4 for r in rows)
    assert len(fake.requests) == 36
    bodies = json.dumps([r["body"] for r in fake.requests])
    for word in ("incumbent", "candidate", "gpt-5-turbo", "RUN-SECRET"):
        assert word not in bodies
    assert {r["body"]["model"] for r in fake.requests} == {"judge-model-1"}
    meta = json.loads((tmp_path / "scored.jsonl.meta.json").read_text())
    assert meta["shuffle_seed"] == 5 and meta["judges"][0]["model"] == "judge-model-1"


# --------------------------------------------------------------------------- local model


@pytest.mark.local
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp missing")
def test_judge_with_the_local_smollm2_model() -> None:
    from evaldelta.run.providers.local import LocalProvider

    check = build_judge(
        parse_checks(
            "- {id: j, spec: s, kind: judge, rubric: Pass if the reply mentions an order number., "
            "model: smollm2, provider: local, params: {temperature: 0, max_tokens: 40}}\n"
        )[0]
    )
    items = [({}, "Your order #2214 is on its way."), ({}, "Hello.")]
    provider = LocalProvider()
    run = asyncio.run(judge_single(check, items, provider, seed=0))
    asyncio.run(provider.aclose())
    assert len(run.results) == 2
    for res in run.results:  # a 135M model's verdicts are not pinned, only that it ran
        assert res.passed in (True, False, None)
    assert run.pins.model == "smollm2"

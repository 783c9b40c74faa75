"""Provider kinds by name: ``openai``, ``anthropic``, ``litellm``, ``local``.

Each factory imports its module only when called, so a missing optional package (litellm,
llama.cpp for ``local``) is an error only for the run that asks for it, and a one-line
:class:`~evaldelta.errors.ProviderSetupError` at that.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from evaldelta.errors import ProviderSetupError
from evaldelta.run.providers.base import Provider

__all__ = ["KINDS", "create_provider"]

Factory = Callable[[Mapping[str, Any]], Provider]


def _openai(options: Mapping[str, Any]) -> Provider:
    from evaldelta.run.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        base_url=options.get("base_url"),
        api_key_env=options.get("api_key_env") or "OPENAI_API_KEY",
        timeout=float(options.get("timeout", 60.0)),
    )


def _anthropic(options: Mapping[str, Any]) -> Provider:
    from evaldelta.run.providers.anthropic import AnthropicProvider

    return AnthropicProvider(
        base_url=options.get("base_url"),
        api_key_env=options.get("api_key_env") or "ANTHROPIC_API_KEY",
        timeout=float(options.get("timeout", 60.0)),
    )


def _litellm(options: Mapping[str, Any]) -> Provider:
    from evaldelta.run.providers.litellm import LiteLLMProvider

    return LiteLLMProvider(
        base_url=options.get("base_url"), timeout=float(options.get("timeout", 60.0))
    )


def _local(options: Mapping[str, Any]) -> Provider:
    try:
        module = importlib.import_module("evaldelta.run.providers.local")
    except ImportError as exc:
        raise ProviderSetupError(
            f"provider 'local' is not available in this install ({exc})"
        ) from None
    extra = {k: v for k, v in options.items() if k not in COMMON_OPTIONS}
    provider: Provider = module.LocalProvider(**extra)
    return provider


COMMON_OPTIONS = frozenset({"base_url", "api_key_env", "timeout"})
KINDS: Mapping[str, Factory] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "litellm": _litellm,
    "local": _local,
}


def create_provider(kind: str, options: Mapping[str, Any] | None = None) -> Provider:
    """A new provider of ``kind``; ``options`` are base_url, api_key_env, timeout (+ local's)."""
    factory = KINDS.get(kind)
    if factory is None:
        raise ProviderSetupError(
            f"unknown provider kind {kind!r}; choose one of {', '.join(KINDS)}"
        )
    return factory(options or {})

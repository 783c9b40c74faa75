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
from evaldelta.provider import Provider

__all__ = ["DEFAULT_KEY_ENV", "KINDS", "create_provider", "key_variable"]

Factory = Callable[[Mapping[str, Any]], Provider]
# The environment variable a kind reads its API key from when api_key_env names none.
DEFAULT_KEY_ENV: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def key_variable(kind: str, api_key_env: str | None) -> str | None:
    """The variable a provider of ``kind`` reads its key from (None: it reads none itself)."""
    return api_key_env or DEFAULT_KEY_ENV.get(kind)


def _openai(options: Mapping[str, Any]) -> Provider:
    from evaldelta.run.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        base_url=options.get("base_url"),
        api_key_env=options.get("api_key_env") or DEFAULT_KEY_ENV["openai"],
        timeout=float(options.get("timeout", 60.0)),
    )


def _anthropic(options: Mapping[str, Any]) -> Provider:
    from evaldelta.run.providers.anthropic import AnthropicProvider

    return AnthropicProvider(
        base_url=options.get("base_url"),
        api_key_env=options.get("api_key_env") or DEFAULT_KEY_ENV["anthropic"],
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

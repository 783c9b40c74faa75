"""The one I/O seam of the runner and the judge: an async chat-completion provider.

Every provider (OpenAI-compatible, Anthropic, litellm, the in-process local model, and the
test servers' clients) implements :class:`Provider`. The runner never talks HTTP itself;
tests swap the provider or point it at a server they start on 127.0.0.1.

API keys come from environment variables inside each provider and are never part of any
value defined here, so nothing below can carry a key into the store, a log or a report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["ChatMessage", "Completion", "GenerationParams", "Provider", "ProviderError"]


@dataclass(frozen=True)
class ChatMessage:
    """One chat message: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Generation parameters, pinned and recorded with every run (None = provider default)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Completion:
    """What a provider returned for one call.

    ``model_version`` is the model the API reports having used (it may differ from the
    requested id, e.g. a dated snapshot); ``input_tokens`` / ``output_tokens`` are the usage
    the API reports (None when it reports none); ``latency_ms`` is measured by the provider.
    """

    text: str
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None


class ProviderError(Exception):
    """A failed call.

    ``retryable`` calls (429, 5xx, timeouts, dropped connections) may be retried;
    ``retry_after`` (seconds) is the server's Retry-After when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


@runtime_checkable
class Provider(Protocol):
    """An async chat-completion client for one provider kind."""

    name: str

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """Make one call; raise :class:`ProviderError` on failure (never return a partial)."""
        ...

    async def aclose(self) -> None:
        """Release connections (idempotent)."""
        ...

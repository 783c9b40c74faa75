"""Model providers, one module each, behind one async protocol (:mod:`.base`)."""

from evaldelta.run.providers.base import (
    ChatMessage,
    Completion,
    GenerationParams,
    Provider,
    ProviderError,
)

__all__ = ["ChatMessage", "Completion", "GenerationParams", "Provider", "ProviderError"]

"""Model providers, one module each, behind one async protocol (:mod:`.base`)."""

from evaldelta.provider import (
    ChatMessage,
    Completion,
    GenerationParams,
    Provider,
    ProviderError,
)

__all__ = ["ChatMessage", "Completion", "GenerationParams", "Provider", "ProviderError"]

"""Response cache keys: provider endpoint, model, parameters, rendered prompt, repeat index.

The repeat index is part of the key, so repeat 1 is a fresh draw and never a cache hit of
repeat 0, while the same repeat of the same call (a resumed run, a cascade's cheap step
that equals the always-cheap arm's call) is answered from the store without paying again.
The key never includes an API key: :meth:`ProviderConfig.identity` holds only the kind,
the endpoint and kind-specific options.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from evaldelta.provider import ChatMessage, GenerationParams

__all__ = ["cache_key"]


def cache_key(
    provider: Mapping[str, Any],
    model: str,
    params: GenerationParams,
    messages: Sequence[ChatMessage],
    repeat: int,
) -> str:
    """A hex SHA-256 over the canonical JSON of everything that determines one draw."""
    payload = {
        "provider": dict(provider),
        "model": model,
        "params": asdict(params),
        "messages": [[m.role, m.content] for m in messages],
        "repeat": repeat,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

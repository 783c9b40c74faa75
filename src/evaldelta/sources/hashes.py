"""Stable hashes of what reached the model call: the rendered prompt, the payload, the retrieval.

Seed 002 ("Recorded outputs as raw material"): recorded artefacts are legitimate change
detectors for anything upstream of the model call; "a byte-level diff on those is a signal
that code changed, because code is what produces them". Every attempt can carry three
hashes, optional columns of the long row format:

``prompt_hash``
    sha256 of the canonical JSON of the rendered prompt: the chat messages as
    ``[[role, content], ...]``, or a plain prompt string as a JSON string.
``payload_hash``
    sha256 of the canonical JSON of the rest of the request: generation parameters and any
    further request fields, *without* the model id and the messages (the model is what a
    release changes; the messages are the prompt hash) and without anything secret-looking
    (API keys, ``Authorization`` headers, tokens, passwords: :func:`strip_secrets`).
``retrieval_hash``
    sha256 of the canonical JSON of the sorted, de-duplicated retrieved document ids.

Canonical JSON: keys sorted, no spaces, UTF-8 as is (``ensure_ascii=False``). Pure: stdlib
only, so the runner, the importers and a user's own logging share one definition
(``evaldelta.sources.hashes.prompt_hash(messages)``). Compare reads the hashes per (arm,
case) and reports, per arm pair, the cases whose hashes differ beyond what the arms declare
(:mod:`evaldelta.comparison.upstream`).

The definition sits beside the row seam, where the hash columns come in, rather than in
``run/``: the importers, the engine, the comparison and the gate read it too, and none of
them may depend on the runner. :mod:`evaldelta.run.upstream` is the runner's use of it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaldelta._util._json_bounds import nests_too_deep

__all__ = [
    "DISPLAY_COLUMNS",
    "HASH_COLUMNS",
    "KINDS",
    "canonical_sha256",
    "payload_fields",
    "payload_hash",
    "prompt_hash",
    "prompt_text",
    "retrieval_hash",
    "retrieved_ids",
    "strip_secrets",
]

KINDS = ("prompt", "payload", "retrieval")
HASH_COLUMNS = {"prompt": "prompt_hash", "payload": "payload_hash", "retrieval": "retrieval_hash"}
# Optional text columns shown beside a differing case (a unified diff of the two arms').
DISPLAY_COLUMNS = {
    "prompt": "rendered_prompt",
    "payload": "request_payload",
    "retrieval": "retrieved_ids",
}

# Key names that hold a secret (normalised: lower case, '-' as '_'); max_tokens is not one.
_SECRET_KEY = re.compile(
    r"(^|_)(api_?key|secret|client_secret|password|passwd|authorization|proxy_authorization|"
    r"bearer|token|access_token|auth_token|refresh_token|id_token|session_token|cookie|"
    r"set_cookie|credentials?|private_key)$"
)
# Values that are a credential whatever their key ("Bearer ...", "sk-...").
_SECRET_VALUE = re.compile(r"^\s*(bearer|basic)\s+\S{6,}|^\s*sk-[A-Za-z0-9_-]{12,}", re.I)
_NOT_PAYLOAD = frozenset({"model", "messages", "prompt", "input", "contents", "system"})


def canonical_sha256(value: Any) -> str:
    """Hex sha256 of ``value`` as canonical JSON (sorted keys, compact, UTF-8 as is)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _message(item: Any) -> list[str]:
    if isinstance(item, Mapping):
        return [str(item.get("role", "")), _content(item.get("content", ""))]
    role = getattr(item, "role", None)
    if role is not None:
        return [str(role), _content(getattr(item, "content", ""))]
    return ["user", _content(item)]


def _content(content: Any) -> str:
    """A message's content as text: a list of parts joins its text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content]
        return "".join(str(p) for p in parts)
    return "" if content is None else str(content)


def _prompt_value(prompt: str | Sequence[Any]) -> str | list[list[str]]:
    if isinstance(prompt, str):
        return prompt
    return [_message(m) for m in prompt]


def prompt_hash(prompt: str | Sequence[Any]) -> str:
    """The hash of a rendered prompt: a string, or chat messages (objects or mappings).

    A message is its ``role`` and ``content`` (a list of content parts counts as its text
    parts joined), so the same conversation hashes alike whichever library logged it.
    """
    return canonical_sha256(_prompt_value(prompt))


def prompt_text(prompt: str | Sequence[Any]) -> str:
    """The rendered prompt as text for a diff: ``role: content`` blocks, one per message."""
    value = _prompt_value(prompt)
    if isinstance(value, str):
        return value
    return "\n".join(f"{role}: {content}" for role, content in value)


def strip_secrets(value: Any) -> Any:
    """``value`` without secret-looking keys or values, recursively (for hashing and display)."""
    if isinstance(value, Mapping):
        return {
            str(k): strip_secrets(v)
            for k, v in value.items()
            if not _SECRET_KEY.search(str(k).lower().replace("-", "_"))
            and not (isinstance(v, str) and _SECRET_VALUE.search(v))
        }
    if isinstance(value, list | tuple):
        return [
            strip_secrets(v) for v in value if not (isinstance(v, str) and _SECRET_VALUE.search(v))
        ]
    return value


def payload_fields(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a request payload that is hashed: no model, messages or secrets."""
    kept = {k: v for k, v in payload.items() if str(k) not in _NOT_PAYLOAD}
    return dict(strip_secrets(kept))


def payload_hash(payload: Mapping[str, Any]) -> str:
    """The hash of a request payload minus its model id, its messages and its secrets."""
    return canonical_sha256(payload_fields(payload))


def retrieved_ids(ids: Any) -> list[str]:
    """Document ids as a sorted list: a list, a JSON list, or text separated by ``|`` or ``,``."""
    if ids is None:
        return []
    if isinstance(ids, str):
        text = ids.strip()
        if text.startswith("[") and not nests_too_deep(text):  # no RecursionError from json
            try:
                loaded = json.loads(text)
            except ValueError:
                loaded = None
            if isinstance(loaded, list):
                return retrieved_ids(loaded)
        parts: Iterable[Any] = re.split(r"[|,]", text) if text else []
    elif isinstance(ids, Iterable):
        parts = ids
    else:
        parts = [ids]
    return sorted({str(p).strip() for p in parts if str(p).strip()})


def retrieval_hash(ids: Any) -> str:
    """The hash of the retrieved document ids, order and duplicates aside."""
    return canonical_sha256(retrieved_ids(ids))

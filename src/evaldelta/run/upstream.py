"""What reached the model call in one attempt, as the hashes of :mod:`evaldelta.sources.hashes`.

For every attempt the runner records the hash of the rendered prompt (the messages of the
attempt's first call: a cascade's cheap step), of the request payload (the generation
parameters; never the API key, which is not part of the request we build: providers add
it from the environment), of the case's retrieved document ids when the case has a
``retrieved_ids`` field, and the rendered prompt itself (masked by the run's redactor), so
``compare`` can show a diff of two arms' prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from evaldelta.run.config import Arm, ModelArm, RunConfig
from evaldelta.sources.hashes import (
    DISPLAY_COLUMNS,
    payload_hash,
    prompt_hash,
    prompt_text,
    retrieval_hash,
)

__all__ = ["RETRIEVAL_FIELD", "upstream_values"]

RETRIEVAL_FIELD = DISPLAY_COLUMNS["retrieval"]  # "retrieved_ids"


def upstream_values(
    arm: Arm,
    config: RunConfig,
    case: Mapping[str, Any],
    case_id: str,
    mask: Callable[[str], str] = lambda text: text,
) -> dict[str, str | None]:
    """The attempt's ``prompt_hash``, ``payload_hash``, ``retrieval_hash``, ``rendered_prompt``."""
    first = arm if isinstance(arm, ModelArm) else config.model_arm(arm.cheap)
    messages = first.template.render(case, case_id)
    ids = case.get(RETRIEVAL_FIELD)
    blank = ids is None or (isinstance(ids, str) and not ids.strip())
    return {
        "prompt_hash": prompt_hash(messages),
        "payload_hash": payload_hash(asdict(first.params)),
        "retrieval_hash": None if blank else retrieval_hash(ids),
        "rendered_prompt": mask(prompt_text(messages)),
    }

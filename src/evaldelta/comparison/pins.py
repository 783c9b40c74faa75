"""Which pins differ between compared arms beyond what an arm comparison declares.

Two arms are meant to differ in what the release changes: the model, the prompt template,
the provider and endpoint, the routing of a cascade, and the price that follows from them.
Anything else that differs (a generation parameter such as temperature or top_p, a judge,
a scorer, a seed, a retrieval snapshot, the evaldelta version) is a second change riding
along: the comparison then measures both at once (seed 004: "a comparison whose escalation
path silently moved to a new strong-model build is not a comparison of the cascade against
always-strong"). ``compare`` reports such differences loudly; ``gate`` refuses to decide on
them unless the policy allows them by name.

Patterns are ``fnmatch`` globs over the flat pin keys made by
:func:`evaldelta.sources.flatten_pins`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from evaldelta.comparison.model import PinDifference, PinValue

__all__ = ["DECLARED", "undeclared_differences"]

# What an arm *is*: differences here are the release under test, not a confound.
DECLARED: tuple[str, ...] = (
    "kind",
    "model",
    "provider",
    "provider_kind",
    "base_url",
    "api_key_env",
    "template_sha256",
    "template.*",
    "price_per_mtok*",
    "reported_model_versions*",
    "model_versions*",
    "cheap.*",
    "strong.*",
    "verifier*",
    "pins.*",
    # run --couple: how the arms' draws align changes no arm's distribution (an arm whose
    # provider takes no seed records couple = false beside the others' true)
    "couple*",
)


def _same(a: PinValue, b: PinValue) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return a == b


def undeclared_differences(
    pins: Mapping[str, Mapping[str, PinValue]],
    arms: Sequence[str],
    allowed: Sequence[str] = (),
) -> tuple[PinDifference, ...]:
    """The pins that differ across ``arms`` and are neither declared nor allowed.

    A pin recorded for one arm and missing for another counts as differing. Keys matching
    :data:`DECLARED` or ``allowed`` are left out; the result is sorted by key.
    """
    present = [a for a in arms if a in pins]
    if len(present) < 2:
        return ()
    patterns = (*DECLARED, *allowed)
    out = []
    for key in sorted({k for a in present for k in pins[a]}):
        if any(fnmatchcase(key, p) for p in patterns):
            continue
        values = {a: pins[a].get(key) for a in present}
        recorded = {a: key in pins[a] for a in present}
        first = present[0]
        differs = any(
            recorded[a] != recorded[first] or not _same(values[a], values[first])
            for a in present[1:]
        )
        if differs:
            out.append(PinDifference(key=key, values=values))
    return tuple(out)

"""Upstream changes between compared arms beyond what the arms declare as their difference.

Seed 002: the rendered prompt, the request payload and the retrieved document ids are
produced by code, so a difference in them between two arms is a signal that code changed.
Whether it is the release under test depends on what the arms declare: a prompt release is
expected to change the rendered prompt; a model release is not, and a model comparison
whose prompts moved measures two changes at once. ``compare`` reports every kind loudly;
``gate`` refuses a confounded comparison unless the policy allows that kind
(``[upstream] allow = ["prompt"]``), as it does for pins.

What a pair declares comes from three places, first match naming it:

- ``pins``: the arms' recorded configuration (a run store) differs in the template
  (``template_sha256``: prompt), the generation parameters (``params.*``: payload) or a pin
  naming the retrieval (``*retriev*``: retrieval); the model (``model``) is declared too;
- ``expect_change``: ``compare(expected_changes=["prompt"])`` / ``--expect-change prompt``;
- ``policy``: the gate policy's ``[upstream] allow``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaldelta.comparison.model import PinValue, UpstreamCheck, UpstreamExample
from evaldelta.errors import UsageError
from evaldelta.evidence import UpstreamCounts
from evaldelta.sources.hashes import KINDS

__all__ = ["check_kinds", "declared_by_pins", "upstream_checks"]

DECLARABLE = ("model", *KINDS)


def check_kinds(kinds: Sequence[str], flag: str = "--expect-change") -> tuple[str, ...]:
    """The upstream kinds named, checked: each is ``prompt``, ``payload`` or ``retrieval``."""
    for kind in kinds:
        if kind not in KINDS:
            raise UsageError(f"{flag} takes one of {', '.join(KINDS)}, not {kind!r}")
    return tuple(kinds)


def _kind_of(key: str) -> str | None:
    last = key.rsplit(".", 1)[-1]
    if last == "template_sha256" or key.startswith("template.") or ".template." in key:
        return "prompt"
    if key.startswith("params.") or ".params." in key:
        return "payload"
    if "retriev" in key.lower():
        return "retrieval"
    if last == "model" or "model_versions" in last:
        return "model"
    return None


def declared_by_pins(
    pins: Mapping[str, Mapping[str, PinValue]], baseline: str, candidate: str
) -> tuple[str, ...]:
    """The kinds whose pins differ between the two arms (none when either has no pins)."""
    if baseline not in pins or candidate not in pins:
        return ()
    a, b = pins[baseline], pins[candidate]
    found = set()
    for key in set(a) | set(b):
        kind = _kind_of(key)
        if kind is not None and ((key in a) != (key in b) or a.get(key) != b.get(key)):
            found.add(kind)
    return tuple(k for k in DECLARABLE if k in found)


def upstream_checks(
    counts: Sequence[UpstreamCounts],
    pins: Mapping[str, Mapping[str, PinValue]],
    expected: Sequence[str] = (),
    allowed: Sequence[str] = (),
) -> tuple[UpstreamCheck, ...]:
    """Each pair's counts with what the arms declare, and who declared each kind."""
    out = []
    for c in counts:
        by_pins = declared_by_pins(pins, c.baseline, c.candidate)
        declared = tuple(k for k in DECLARABLE if k in by_pins or k in expected or k in allowed)
        who = (
            "pins"
            if c.kind in by_pins
            else "expect_change"
            if c.kind in expected
            else "policy"
            if c.kind in allowed
            else ""
        )
        out.append(
            UpstreamCheck(
                baseline=c.baseline,
                candidate=c.candidate,
                kind=c.kind,
                paired=c.paired,
                compared=c.compared,
                differing=c.differing,
                declared=declared,
                expected_by=who,
                examples=tuple(UpstreamExample(*e) for e in c.examples),
            )
        )
    return tuple(out)

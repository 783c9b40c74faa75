"""Prompt templates: Jinja2 over a case's fields, sandboxed, strict about missing fields.

Every column of the case file is a template variable. A template naming a field the case
lacks is a one-line :class:`~evaldelta.errors.TemplateError` naming the template, the field
and the case, raised while planning, before any paid call. The template's source (system and
user) is hashed, and the hash is recorded in the run's pins.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from evaldelta.errors import Location, TemplateError
from evaldelta.run.providers.base import ChatMessage

__all__ = ["DEFAULT_USER", "Template"]

DEFAULT_USER = "{{ prompt }}"
_ENV = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
)
_UNDEFINED = re.compile(r"'(?P<name>[^']+)' is undefined")


@dataclass(frozen=True)
class Template:
    """A system (optional) and a user message template; ``where`` names it in messages."""

    user: str = DEFAULT_USER
    system: str | None = None
    where: str = "default template"

    @property
    def sha256(self) -> str:
        """The hash of the template source, as recorded in the pins."""
        payload = json.dumps({"system": self.system, "user": self.user}, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @cached_property
    def _compiled(self) -> tuple[jinja2.Template | None, jinja2.Template]:
        try:
            system = _ENV.from_string(self.system) if self.system is not None else None
            user = _ENV.from_string(self.user)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(
                f"the prompt template does not parse: {exc.message} (template line {exc.lineno})",
                Location(self.where),
            ) from None
        return system, user

    def render(self, case: Mapping[str, Any], case_id: str) -> tuple[ChatMessage, ...]:
        """The chat messages for one case."""
        system, user = self._compiled
        out = []
        for role, tmpl in (("system", system), ("user", user)):
            if tmpl is None:
                continue
            try:
                text = tmpl.render(dict(case))
            except jinja2.UndefinedError as exc:
                found = _UNDEFINED.search(str(exc))
                name = found.group("name") if found else str(exc)
                raise TemplateError(
                    f"the {role} template names field {name!r}, which case {case_id!r} lacks "
                    f"(fields: {', '.join(sorted(case))})",
                    Location(self.where),
                ) from None
            except jinja2.TemplateError as exc:
                raise TemplateError(
                    f"the {role} template failed on case {case_id!r}: {exc}", Location(self.where)
                ) from None
            out.append(ChatMessage(role, text))
        return tuple(out)

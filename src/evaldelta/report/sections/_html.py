"""The one Jinja2 environment every section's HTML piece is rendered with.

``autoescape=True``: every piece of text from the data (slice names, case ids, arm names,
outputs) is escaped where it is written, after its escape sequences and control bytes are
dropped (``finalize``: :func:`~evaldelta.report._escape.html_text`). The SVG that matplotlib
wrote is the only markup a piece marks safe (``svg(...)``). Each section's piece is
``templates/sections/<name>.html.j2``, cut from the one page at line boundaries, so the
pieces, rendered one after another, are the page.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from evaldelta.report._escape import html_text

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["piece"]


def _finalize(value: Any) -> Any:
    """Every value the template writes: text from the data loses its control bytes."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return html_text(value)
    return value


@functools.cache
def _env() -> Environment:
    """Built on the first HTML page (the text reports need no Jinja2)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=PackageLoader("evaldelta.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def piece(template: str, **context: Any) -> str:
    """Render one template under ``templates/`` (``svg`` marks matplotlib's SVG safe)."""
    return _env().get_template(template).render(svg=Markup, **context)

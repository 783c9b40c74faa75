"""Renderers only: text, Markdown and JSON. All rounding happens here."""

from evaldelta.report.json import render_json
from evaldelta.report.markdown import render_markdown
from evaldelta.report.text import render_text

__all__ = ["render_json", "render_markdown", "render_text"]

"""Untrusted text made inert: one function per output format.

Every string from the data (arm, slice, case and pin names, metric names, outputs, file
names) is untrusted. The HTML report leaves markup to Jinja2's autoescaping and passes every
value it writes through :func:`html_text` first (its ``finalize``); the other formats come
through here too:

- :func:`term_text` for anything printed to a terminal (the text, rich, gate, plan and audit
  reports): no escape sequence, carriage return or other control character from the data
  reaches the terminal;
- :func:`md_text` for GitHub-flavoured Markdown (a pull-request comment): the text renders as
  the same characters, never as markup, a link, a mention, HTML or a new block;
- :func:`md_code`, a presentation choice on top of :func:`md_text`: a name shown as inline
  code when that is safe, else as escaped text.

- :func:`html_text` for HTML: escape sequences and control characters dropped as for the
  terminal, but line breaks and tabs kept (outputs are shown in ``<pre>`` blocks).

Every format first drops control characters (:func:`strip_controls`, or
:func:`html_text`'s variant that keeps line breaks).
"""

from __future__ import annotations

import re

__all__ = ["html_text", "md_code", "md_text", "strip_controls", "term_text"]

# ANSI/ECMA-48 sequences, removed whole so that no parameter bytes are left behind:
# CSI (ESC [ or the 8-bit 0x9B) with parameters and a final byte; the string sequences OSC,
# DCS, SOS, PM and APC (ESC ] P X ^ _, or 8-bit 0x9D 0x90 0x98 0x9E 0x9F) up to BEL or ST
# (or the end of the text when unterminated: a terminal would swallow that much too); and
# the other two- and three-byte escapes (ESC 7, ESC c, ESC ( B, ...).
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
# Line and tab breaks become one space each (CRLF counts as one break).
_BREAKS = re.compile(r"\r\n|[\t\n\v\f\r\x85\u2028\u2029]")
# What is left of C0, DEL and C1, and the bidirectional embedding, override and isolate
# controls (text that displays in another order than it reads: CVE-2021-42574).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """``text`` with escape sequences and control characters removed, breaks as spaces."""
    text = _ANSI.sub("", text)
    text = _BREAKS.sub(" ", text)
    return _CONTROLS.sub("", text)


# HTML keeps tabs and line feeds (a <pre> shows them); CR and CRLF become one line feed.
_HTML_BREAKS = re.compile(r"\r\n?|[\v\f\x85\u2028\u2029]")
_HTML_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def html_text(text: str) -> str:
    """Untrusted text for an HTML page (before Jinja2 escapes its markup characters).

    The same escape sequences and controls as :func:`term_text` go (ESC, BEL, NUL, C1 and
    the bidirectional overrides), but tabs and line breaks stay, so an output keeps its lines.
    """
    text = _ANSI.sub("", text)
    text = _HTML_BREAKS.sub("\n", text)
    return _HTML_CONTROLS.sub("", text)


def term_text(text: str) -> str:
    """Untrusted text for a terminal: no ESC/CSI/OSC sequence, BEL, BS, CR or other control.

    Tabs and line breaks become spaces, so a name cannot start a fake report line either.
    """
    return strip_controls(text)


# Zero-width joiner written after "@" and after "#" before a digit: GitHub links mentions
# (@team) and issue references (#12) in the rendered text, after Markdown escapes are
# resolved, so a backslash or an HTML entity would still notify or cross-reference; a
# zero-width joiner between the sign and the name renders as the same visible text and
# matches neither pattern.
ZWJ = "\u200d"

# Backslash-escaped ASCII punctuation (CommonMark 2.4): emphasis (* _ ~), code (`),
# links and images ([ ]), tables (|), headings (#), math ($: GitHub renders $...$) and the
# backslash itself. "(", ")" and "!" need no escape of their own (a link or an image needs
# "](" or "![", and every "[" and "]" is escaped), but a "(" right after "]" is escaped as
# well, so the source never holds "](javascript:" for a less careful renderer. "<", ">"
# and "&" become character references: no raw HTML, no <scheme:...> autolink, no
# blockquote. http(s):// and www. autolinks are kept, showing the whole address as
# written; no other scheme (javascript:) can become a link.
_ESCAPES = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "~": "\\~",
    "[": "\\[",
    "|": "\\|",
    "$": "\\$",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "@": "@" + ZWJ,
}
_SPECIAL = re.compile(r"[\\`*~\[|$<>&@]|\](\()?|#(\d)?|_")


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch.startswith("#"):
        return "\\#" + (ZWJ + match.group(2) if match.group(2) else "")
    if ch.startswith("]"):
        return "\\]" + ("\\(" if match.group(1) else "")
    if ch == "_":
        # an underscore between two letters or digits (snake_case) can neither open nor
        # close emphasis (CommonMark 6.2: it is both left- and right-flanking, with no
        # punctuation beside it)
        text, at = match.string, match.start()
        inside = 0 < at < len(text) - 1 and text[at - 1].isalnum() and text[at + 1].isalnum()
        return "_" if inside else "\\_"
    return _ESCAPES[ch]


def md_text(text: str) -> str:
    """Untrusted text for GitHub-flavoured Markdown, safe anywhere in a line or table cell.

    Controls are dropped and breaks become spaces (no injected heading, list or table row);
    Markdown punctuation is backslash-escaped, including ``|`` (so a cell stays one cell);
    ``<``, ``>`` and ``&`` become character references; mentions and issue references are
    broken with a zero-width joiner. Plain names (letters, digits, spaces, ``/.,:-()``,
    ``_`` inside words) come back unchanged.
    """
    return _SPECIAL.sub(_escape, strip_controls(text))


_CODE_UNSAFE = re.compile(r"[`|<>&\[\]@]")


def md_code(text: str) -> str:
    """A name as inline code when it can be one verbatim, else as :func:`md_text`.

    Inside a code span nothing is markup, mention or link, but a backtick would end it and a
    ``|`` would split a table cell. Names with those, or with ``<``, ``>``, ``&``, ``[``,
    ``]`` or ``@`` (inert in code, but then the comment's source would hold raw HTML, link
    or mention syntax that an editor or another renderer might act on), are written as
    escaped text instead.
    """
    clean = strip_controls(text)
    if not clean.strip() or _CODE_UNSAFE.search(clean):
        return md_text(text)
    return f"`{clean}`"

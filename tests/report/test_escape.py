"""The one escaping function per format: Markdown (GitHub) and the terminal.

Markdown is checked by rendering it with markdown-it-py (CommonMark plus GFM tables and
strikethrough, raw HTML allowed as GitHub allows it): escaped text must come back as the
same characters, in one paragraph or one table cell, with no element of its own.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldelta.report._escape import ZWJ, md_code, md_text, strip_controls, term_text

markdown_it = pytest.importorskip("markdown_it")

SAFE = [
    "always_strong",
    "Claude 4.5 Sonnet (20250929)",
    "django/django",
    "b_15-60min",
    "safe-slice/v1.2 (prod)",
    "GPT-5 Codex -- debug-oct22",
]

HOSTILE = [
    "x|y",
    "<img src=x onerror=alert(1)>",
    "<b>bold</b>",
    "<!-- hidden -->",
    "@team please look",
    "[s](javascript:alert(1))",
    "![i](http://evil.example/x.png)",
    "<javascript:alert(1)>",
    "line one\n# injected heading",
    "a\r\nb\tc",
    "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J",
    "*b* _i_ ~~d~~ `c` $x$ \\",
    "AT&T &amp; &#64;team",
    "#12 closes it",
    "[ref]: http://evil.example",
    "| a | b |",
]


def _renderer():  # type: ignore[no-untyped-def]
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class _Tree(HTMLParser):
    """Tags (in order) and the text of a small HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.comments = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments += 1


def _parse(html: str) -> _Tree:
    tree = _Tree()
    tree.feed(html)
    return tree


def _shown(text: str) -> str:
    """What a reader should see: controls dropped, breaks as spaces, the ZWJ invisible."""
    return strip_controls(text).replace(ZWJ, "")


def _as_paragraph(text: str) -> _Tree:
    return _parse(_renderer().render(f"before {md_text(text)} after"))


@pytest.mark.parametrize("name", SAFE)
def test_a_plain_name_is_unchanged(name: str) -> None:
    assert md_text(name) == name
    assert md_code(name) == f"`{name}`"
    assert term_text(name) == name


@pytest.mark.parametrize("payload", HOSTILE)
def test_hostile_text_renders_as_the_same_characters_in_one_paragraph(payload: str) -> None:
    tree = _as_paragraph(payload)
    assert tree.tags == ["p"], tree.tags  # no link, image, heading, emphasis, HTML or table
    assert tree.comments == 0
    assert "".join(tree.text).strip().replace(ZWJ, "") == f"before {_shown(payload)} after"


@pytest.mark.parametrize("payload", HOSTILE)
def test_hostile_text_stays_in_its_table_cell(payload: str) -> None:
    doc = f"| name | n |\n|---|---:|\n| {md_text(payload)} | 3 |\n"
    tree = _parse(_renderer().render(doc))
    assert tree.tags.count("td") == 2 and tree.tags.count("th") == 2
    assert set(tree.tags) <= {"table", "thead", "tbody", "tr", "th", "td"}
    cells = [t.strip().replace(ZWJ, "") for t in tree.text if t.strip()]
    assert cells == ["name", "n", _shown(payload).strip(), "3"]


def test_markdown_escapes_by_name() -> None:
    assert md_text("x|y") == "x\\|y"
    assert md_text("<b>&") == "&lt;b&gt;&amp;"
    assert md_text("[s](javascript:alert(1))") == "\\[s\\]\\(javascript:alert(1))"
    # GitHub links mentions and issue numbers after resolving escapes: a zero-width joiner
    # after the sign breaks the pattern while the text looks the same
    assert md_text("@team") == "@\u200dteam"
    assert md_text("#12 #a") == "\\#\u200d12 \\#a"
    assert md_text("snake_case _emph_") == "snake_case \\_emph\\_"
    assert md_text("line\n# heading") == "line \\# heading"


def test_md_code_falls_back_to_escaped_text_when_a_code_span_would_not_hold() -> None:
    assert md_code("a`b") == "a\\`b"
    assert md_code("x|y") == "x\\|y"
    assert md_code("<b>") == "&lt;b&gt;"
    assert md_code("[s](javascript:x)") == "\\[s\\]\\(javascript:x)"
    assert md_code("\x1b[31mv2\x1b[0m\n") == "`v2 `"
    assert md_code("") == ""


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink
        ("\x1b]0;new title\x07after", "after"),
        ("bell\x07 back\x08space", "bell backspace"),
        ("over\rwrite", "over write"),
        ("tab\there\nnext", "tab here next"),
        ("\x9b2Jeight-bit CSI", "eight-bit CSI"),
        ("reset\x1bc!", "reset!"),
        ("\u202eevil\u202c", "evil"),  # bidi override (trojan source)
        ("del\x7f c1\x85x", "del c1 x"),
        ("unterminated \x1b]0;title", "unterminated "),
    ],
)
def test_terminal_text_has_no_control_sequence(raw: str, clean: str) -> None:
    assert term_text(raw) == clean


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    assert CONTROL.search(term_text(text)) is None
    assert CONTROL.search(md_text(text)) is None
    assert "\n" not in md_code(text)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40))
def test_any_text_renders_as_itself(text: str) -> None:
    tree = _as_paragraph(text)
    assert tree.tags == ["p"], (text, md_text(text), tree.tags)
    shown = "".join(tree.text).replace(ZWJ, "")
    # markdown-it drops spaces at the paragraph's edges only; "before " and " after" keep
    # the payload's own edges inside
    assert shown.strip() == f"before {_shown(text)} after".strip()

"""Prompt templates: Jinja2 over a case's fields, sandboxed, bounded, strict about missing fields.

Every column of the case file is a template variable. A template naming a field the case
lacks is a one-line :class:`~evaldelta.errors.TemplateError` naming the template, the field
and the case, raised while planning, before any paid call. The template's source (system and
user) is hashed, and the hash is recorded in the run's pins.

A template is user code, so rendering is bounded inside the sandbox (the numbers are the
module constants below); going past a bound is a one-line TemplateError naming the template,
the role and the case, as is any other exception the template raises:

* output: at most :data:`MAX_OUTPUT_CHARS` characters per render (system and user together),
  streamed and stopped as soon as it is exceeded; no single value (``*``, ``+``, ``~``,
  ``%``, ``join``, ``replace``, padding and width arguments, a printed list) may be larger;
* work: ``range()`` makes at most :data:`MAX_RANGE` items; every loop item, call, macro call
  and arithmetic operator is a step, at most :data:`MAX_STEPS` per render, and a render
  stops after :data:`MAX_RENDER_SECONDS` (checked at every step); ``**`` may not make a
  number of more than :data:`MAX_POWER_BITS` bits;
* no other templates: ``{% include %}``, ``{% import %}``, ``{% from ... import %}`` and
  ``{% extends %}`` are refused when the template is parsed (a prompt template is one
  self-contained text; there is no template loader).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from evaldelta.errors import Location, TemplateError
from evaldelta.provider import ChatMessage

__all__ = [
    "DEFAULT_USER",
    "MAX_OUTPUT_CHARS",
    "MAX_POWER_BITS",
    "MAX_RANGE",
    "MAX_RENDER_SECONDS",
    "MAX_STEPS",
    "Template",
]

DEFAULT_USER = "{{ prompt }}"
#: Characters one render (system and user message together) may produce: 1 MB of text.
MAX_OUTPUT_CHARS = 1_000_000
#: Items one ``range()`` may make (Jinja's own sandbox allows 100,000).
MAX_RANGE = 10_000
#: Loop items, calls and operators one render may take.
MAX_STEPS = 1_000_000
#: Wall-clock seconds one render may take.
MAX_RENDER_SECONDS = 5.0
#: Bits a number made by ``**`` may have.
MAX_POWER_BITS = 4096

_UNDEFINED = re.compile(r"'(?P<name>[^']+)' is undefined")
_LOADING = {
    nodes.Include: "{% include %}",
    nodes.Import: "{% import %}",
    nodes.FromImport: "{% from ... import %}",
    nodes.Extends: "{% extends %}",
}
_LOOP = "_evaldelta_loop"  # what every {% for %} iterates through (counts its items)
_CONCAT = "_evaldelta_concat"  # what every ``~`` becomes (checks the size first)
_WIDTH = re.compile(r"%[#0 +\-]*(\d+)|\{[^{}]*:[^{}]*?(\d+)[^{}]*\}|%[#0 +\-]*\*")
_PADDING = frozenset({"center", "ljust", "rjust", "zfill"})


@dataclass
class _Budget:
    """What one render has spent; the hooks below charge it and fail past a bound."""

    where: str
    role: str
    case_id: str
    steps: int = 0
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_RENDER_SECONDS)

    def fail(self, what: str) -> TemplateError:
        return TemplateError(
            f"the {self.role} template {what} on case {self.case_id!r}", Location(self.where)
        )


_BUDGET: ContextVar[_Budget | None] = ContextVar("evaldelta_template_budget", default=None)


def _budget() -> _Budget:
    """The running render's budget, or a throwaway one while compiling.

    Jinja folds constant expressions at compile time; a guard that fails there only leaves
    the expression to be evaluated (and refused) at render time.
    """
    return _BUDGET.get() or _Budget("<compiling>", "compile", "-")


def _step(n: int = 1) -> None:
    budget = _budget()
    budget.steps += n
    if budget.steps > MAX_STEPS:
        raise budget.fail(f"takes more than {MAX_STEPS:,} loop steps and calls")
    if time.monotonic() > budget.deadline:
        raise budget.fail(f"takes longer than {MAX_RENDER_SECONDS:g} s to render")


def _size(value: Any, limit: int = MAX_OUTPUT_CHARS) -> int:
    """About how many characters ``value`` prints as; stops counting past ``limit``."""
    total, todo = 0, [value]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 + 2 * len(item)
            todo.extend(item)
        elif isinstance(item, dict):
            total += 2 + 4 * len(item)
            todo.extend(item.keys())
            todo.extend(item.values())
        else:
            total += 1
    return total


def _room(size: int, what: str) -> None:
    if size > MAX_OUTPUT_CHARS:
        raise _budget().fail(f"makes {what} longer than {MAX_OUTPUT_CHARS:,} characters")


def _formats(text: str, args: Any) -> None:
    """Refuse a format string whose widths would pad past the output bound."""
    for m in _WIDTH.finditer(text):
        width = m.group(1) or m.group(2)
        if width is not None and int(width) > MAX_OUTPUT_CHARS:
            _room(int(width), f"a format width ({width})")
        if width is None:  # a '*' width comes from the arguments
            values = args if isinstance(args, tuple | list) else (args,)
            for v in values:
                if isinstance(v, int) and abs(v) > MAX_OUTPUT_CHARS:
                    _room(abs(v), f"a format width ({v})")


def _loop(iterable: Iterable[Any]) -> Iterator[Any]:
    for item in iterable:
        _step()
        yield item


def _concat(*parts: Any) -> str:
    _room(sum(_size(p) for p in parts), "text with '~'")
    return "".join(map(str, parts))


def _range(*args: int) -> range:
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise _budget().fail(f"asks for range() of {len(rng):,} items (at most {MAX_RANGE:,})")
    return rng


def _replace_size(s: Any, old: Any, new: Any, count: Any = None) -> None:
    if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
        hits = s.count(old) if old else len(s) + 1
        if isinstance(count, int) and count >= 0:
            hits = min(hits, count)
        _room(len(s) + hits * max(0, len(new) - len(old)), "text with replace")


def _guarded_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A built-in filter with its size-making arguments checked first."""
    pass_arg = getattr(fn, "jinja_pass_arg", None)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        rest = list(args[1:] if pass_arg is not None else args)
        if name in ("center", "indent", "wordwrap", "slice", "batch") and len(rest) > 1:
            width = rest[1]
            if isinstance(width, int) and width > MAX_OUTPUT_CHARS:
                _room(width, f"text with {name}({width})")
            if isinstance(width, str):
                _room(len(width) * _size(rest[0]), f"text with {name}")
        for key in ("width", "slices", "linecount"):
            value = kwargs.get(key)
            if isinstance(value, int) and value > MAX_OUTPUT_CHARS:
                _room(value, f"text with {name}({key}={value})")
        if name == "format" and rest and isinstance(rest[0], str):
            _formats(rest[0], tuple(rest[1:]))
        if name == "replace" and len(rest) >= 3:
            _replace_size(*rest[:4])
        if name == "join" and rest:
            items = list(rest[0])
            sep = rest[1] if len(rest) > 1 else kwargs.get("d", "")
            _room(_size(items) + len(str(sep)) * len(items), "text with join")
            rest[0] = items
            args = (*args[:1], *rest) if pass_arg is not None else tuple(rest)
        return fn(*args, **kwargs)

    return run


class _BoundedSandbox(SandboxedEnvironment):
    """Jinja2's sandbox with the bounds of the module docstring."""

    intercepted_binops = frozenset({"*", "**", "+", "%", "//", "/", "-"})

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            finalize=self._finalize,
        )
        self.globals["range"] = _range
        self.globals[_LOOP] = _loop
        self.globals[_CONCAT] = _concat
        self.globals.pop("lipsum", None)  # a generator of any amount of filler text
        for name in ("center", "indent", "wordwrap", "slice", "batch", "format", "replace"):
            self.filters[name] = _guarded_filter(name, self.filters[name])
        self.filters["join"] = _guarded_filter("join", self.filters["join"])

    @staticmethod
    def _finalize(value: Any) -> Any:
        _room(_size(value), "a value")
        return value

    def call_binop(self, context: Context, op: str, left: Any, right: Any) -> Any:
        """Every arithmetic operator: a step, and no value past the bounds."""
        _step()
        if op == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int):
                    _room(_size(seq) * max(times, 0), "a value with '*'")
        elif op == "+" and isinstance(left, str | list | tuple):
            _room(_size(left) + _size(right), "a value with '+'")
        elif op == "%" and isinstance(left, str):
            _formats(left, right)
        elif op == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            bits = right * math.log2(abs(left)) if abs(left) > 1 else 0.0
            if bits > MAX_POWER_BITS:
                raise _budget().fail(f"makes a number of more than {MAX_POWER_BITS} bits")
        return self.binop_table[op](left, right)

    def call(
        __self,  # Jinja's signature: a template may pass a keyword argument named self
        __context: Context,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """Every call from the template: a step, and padding/format sizes checked."""
        _step()
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner = getattr(target, "__self__", None)
        name = getattr(target, "__name__", "")
        if isinstance(owner, str):
            if name in _PADDING and args and isinstance(args[0], int):
                _room(args[0], f"text with {name}")
            elif name == "expandtabs":
                tab = args[0] if args else kwargs.get("tabsize", 8)
                if isinstance(tab, int):
                    _room(len(owner) + owner.count("\t") * tab, "text with expandtabs")
            elif name in ("format", "format_map"):
                _formats(owner, args)
            elif name == "replace" and len(args) >= 2:
                _replace_size(owner, *args[:3])
            elif name == "join" and args:
                items = list(args[0])
                _room(_size(items) + len(owner) * len(items), "text with join")
                args = (items, *args[1:])
        return super().call(__context, __obj, *args, **kwargs)


class _Bounded(NodeTransformer):
    """Route every loop through :func:`_loop` and every ``~`` through :func:`_concat`."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _call(_LOOP, [node.iter], node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _call(_CONCAT, list(node.nodes), node.lineno)


def _call(name: str, args: list[Any], lineno: int) -> nodes.Call:
    call = nodes.Call(nodes.Name(name, "load"), args, [], None, None)
    call.set_lineno(lineno).set_environment(_ENV)
    return call


_ENV = _BoundedSandbox()


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
        system = self._compile("system", self.system) if self.system is not None else None
        return system, self._compile("user", self.user)

    def _compile(self, role: str, source: str) -> jinja2.Template:
        try:
            tree = _ENV.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(
                f"the prompt template does not parse: {exc.message} (template line {exc.lineno})",
                Location(self.where),
            ) from None
        for kind, tag in _LOADING.items():
            for found in tree.find_all(kind):
                raise TemplateError(
                    f"the {role} template uses {tag} (template line {found.lineno}); a prompt "
                    "template cannot load other templates: put their text in this one",
                    Location(self.where),
                )
        try:
            return _ENV.from_string(_Bounded().visit(tree))
        except TemplateError:
            raise
        except Exception as exc:  # a compile-time failure of the user's code
            raise TemplateError(
                f"the {role} template does not compile: {type(exc).__name__}: {exc}",
                Location(self.where),
            ) from None

    def render(self, case: Mapping[str, Any], case_id: str) -> tuple[ChatMessage, ...]:
        """The chat messages for one case."""
        system, user = self._compiled
        variables = {k: v for k, v in case.items() if k not in (_LOOP, _CONCAT)}
        out = []
        chars = 0
        for role, tmpl in (("system", system), ("user", user)):
            if tmpl is None:
                continue
            budget = _Budget(self.where, role, case_id)
            token = _BUDGET.set(budget)
            try:
                parts = []
                for chunk in tmpl.generate(variables):
                    chars += len(chunk)
                    if chars > MAX_OUTPUT_CHARS:
                        raise budget.fail(f"renders more than {MAX_OUTPUT_CHARS:,} characters")
                    parts.append(chunk)
                text = "".join(parts)
            except TemplateError:
                raise
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
            except RecursionError:
                raise budget.fail("recurses too deeply") from None
            except Exception as exc:  # the template is user code: any failure is its own
                raise TemplateError(
                    f"the {role} template failed on case {case_id!r}: "
                    f"{type(exc).__name__}: {_one_line(str(exc))}",
                    Location(self.where),
                ) from None
            finally:
                _BUDGET.reset(token)
            out.append(ChatMessage(role, text))
        return tuple(out)


def _one_line(text: str) -> str:
    return " ".join(text.split())

"""Composing a YAML file within bounds: nesting and alias expansion limited while it is read.

PyYAML's safe loader composes nodes by recursion (a file nested 100,000 deep raises
RecursionError) and shares an anchored node wherever an alias names it, so a few lines of
aliases ("billion laughs") stand for a document of gigabytes, which the first walk that
expands it (``repr``, a loop over the patterns) then builds. :class:`_Loader` counts, as
each node is composed, how deep it is and how much its aliases stand for (the nodes and
characters of text they would add, written out), and refuses past
:data:`~evaldelta._util._limits.MAX_DEPTH` levels or
:data:`~evaldelta._util._limits.MAX_YAML_ALIASED`.
An alias to a node that contains it (a cycle) is refused too: it would expand forever.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import Node, ScalarNode

from evaldelta._util import _limits
from evaldelta.errors import InputError, Location

__all__ = ["compose"]


class _Refused(Exception):
    """A limit was passed; ``line`` is where (1-based), when known."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class _Loader(yaml.SafeLoader):
    """The safe loader, composing within :data:`MAX_DEPTH` and :data:`MAX_YAML_ALIASED`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        self.expanded = 0  # nodes + characters composed so far, aliases counted in full
        self.aliased = 0  # of which the aliases' expansions
        self.sizes: dict[int, int] = {}  # id(node) -> its expanded size, once composed

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event: Any = self.peek_event()  # type: ignore[no-untyped-call]
            target = self.anchors.get(event.anchor)
            if target is not None:
                # an anchor is registered before its children are composed: an alias to a
                # node not yet composed in full lies inside it
                if id(target) not in self.sizes:
                    raise _Refused(
                        f"the alias *{event.anchor} names a node that contains it (a cycle)",
                        event.start_mark.line + 1,
                    )
                self.expanded += self.sizes[id(target)]
                self.aliased += self.sizes[id(target)]
                if self.aliased > _limits.MAX_YAML_ALIASED:
                    raise _Refused(
                        f"YAML whose aliases expand to more than {_limits.MAX_YAML_ALIASED:,} "
                        "nodes and characters, the limit for a YAML file",
                        event.start_mark.line + 1,
                    )
            return super().compose_node(parent, index)
        line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
        nests = not self.check_event(yaml.ScalarEvent)  # a sequence or mapping: a level
        self.depth += nests
        if self.depth > _limits.MAX_DEPTH:
            raise _Refused(_limits.too_deep("YAML"), line)
        before = self.expanded
        node = super().compose_node(parent, index)
        self.depth -= nests
        self.expanded += 1 + (len(node.value) if isinstance(node, ScalarNode) else 0)
        self.sizes[id(node)] = self.expanded - before
        return node


def compose(text: str, path: str, error: type[InputError]) -> Node | None:
    """The root node of ``text`` (one YAML document), or None when it is empty.

    Syntax errors and limits are ``error`` naming ``path`` and the line.
    """
    if len(text) > _limits.MAX_YAML_BYTES:
        raise error(_limits.too_large("the YAML file", _limits.MAX_YAML_BYTES), Location(path))
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    except _Refused as exc:
        raise error(str(exc), Location(path, exc.line)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise error(f"not valid YAML: {exc.problem}", Location(path, line)) from None
    except yaml.YAMLError as exc:
        raise error(f"not valid YAML: {exc}", Location(path)) from None
    finally:
        loader.dispose()

"""Public names of a package loaded on first use (PEP 562), so importing the package is cheap.

``evaldelta --help`` must not pay for scipy, Ibis or DuckDB; ``evaldelta.stats`` and
``evaldelta.sources`` therefore name where each public name lives and load its module only
when the name is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str,
    where: Mapping[str, str],
    namespace: dict[str, Any],
    aliases: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``.

    ``namespace`` is the package's ``globals()``; ``where`` maps each public name to the
    module that defines it, and ``aliases`` a public name to its name in that module when
    the two differ.
    """
    renamed = aliases or {}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), renamed.get(name, name))
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(where)  # the public names, as ``__all__`` lists them

    return __getattr__, __dir__

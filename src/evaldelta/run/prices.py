"""Token prices: a small editable table shipped with the package, overridable by a file.

Cost of a call = input tokens x input price + output tokens x output price, from the usage
the API reports. An unknown model or missing usage gives an unknown cost (None), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from evaldelta._util import _toml
from evaldelta.errors import ConfigError, Location

__all__ = ["Price", "PriceTable"]

PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float


@dataclass(frozen=True)
class PriceTable:
    """Prices by model id; ``source`` names where they came from (recorded in the pins)."""

    prices: Mapping[str, Price] = field(default_factory=dict)
    source: str = "builtin"

    @classmethod
    def load(cls, override: Path | None = None) -> PriceTable:
        """The shipped table, with ``override``'s entries replacing or adding to it."""
        text = resources.files("evaldelta.run").joinpath("prices.toml").read_text("utf-8")
        prices = _parse(text, "evaldelta/run/prices.toml")
        source = "builtin"
        if override is not None:
            if not override.is_file():
                raise ConfigError("the prices file does not exist", Location(str(override)))
            text = _toml.read_text(override, ConfigError, "the prices file")
            prices.update(_parse(text, str(override)))
            source = f"builtin+{override}"
        return cls(prices, source)

    def has(self, model: str) -> bool:
        """Whether ``model`` has a price."""
        return model in self.prices

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """USD for one call, or None when the price or the usage is unknown."""
        price = self.prices.get(model)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / PER_TOKENS


def _parse(text: str, path: str) -> dict[str, Price]:
    data = _toml.loads(text, path, ConfigError)
    models = data.get("models", {})
    out: dict[str, Price] = {}
    if not isinstance(models, dict):
        raise ConfigError("'models' must be a table of model ids", Location(path))
    for model, entry in models.items():
        if not isinstance(entry, dict):
            raise ConfigError("a price entry must be a table", Location(path, field=model))
        values: list[float] = []
        for name in ("input", "output"):
            value = entry.get(name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(
                    "a price entry needs numeric 'input' and 'output' (USD per 1M tokens)",
                    Location(path, field=f"models.{model}", value=entry),
                )
            if not math.isfinite(value) or value < 0:
                raise ConfigError(
                    "a price must be a finite number of USD >= 0",
                    Location(path, field=f"models.{model}.{name}", value=value),
                )
            values.append(float(value))
        out[str(model)] = Price(values[0], values[1])
    return out

"""Estimated cost of a run from the model catalogue's list prices (USD per million tokens), overridable.

Prompt-cache reads and writes are billed at their own rates (Claude's cache write at 1.25x input, reads at about a
tenth); a vendor that reports no cache tokens is billed at the plain input rate.
"""

from __future__ import annotations

from ..backends.catalogue import MODELS, Price, lookup

__all__ = ["PRICES", "Price", "cost", "parse_prices", "price_of"]
from ..messages import Usage

# Estimates only -- override with --price MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]].
PRICES: dict[str, Price] = {m.id: m.price for m in MODELS if m.price}


def parse_prices(values: list[str] | None) -> dict[str, Price]:
    """`MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]` entries (USD per million tokens) on top of the catalogue."""
    table = dict(PRICES)
    for value in values or []:
        model, _, numbers = value.partition("=")
        try:
            parts = [float(x) for x in numbers.split(",")]
            if not model or not 2 <= len(parts) <= 4 or min(parts) < 0:
                raise ValueError(value)
        except ValueError:
            raise ValueError("--price must be MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]] in USD per million "
                             f"tokens, got {value!r}") from None
        table[model] = Price(*parts)
    return table


def price_of(model: str, table: dict[str, Price]) -> Price | None:
    """The table's price for a model, for a snapshot of it (longest known prefix), or for the model an alias means."""
    if model in table:
        return table[model]
    prefix = max((name for name in table if model.startswith(name)), key=len, default=None)
    if prefix:
        return table[prefix]
    return lookup(model).price  # an alias: the price of the model it stands for


def cost(usage: Usage, model: str, table: dict[str, Price]) -> float | None:
    """USD for this usage, or None for a model the table does not know (reasoning is billed as output)."""
    price = price_of(model, table)
    if price is None:
        return None
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    fresh = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    return (fresh * price.input + usage.cached_tokens * read + usage.cache_write_tokens * write
            + (usage.output_tokens + usage.reasoning_tokens) * price.output) / 1e6

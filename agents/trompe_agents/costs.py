"""Estimated cost of a run from list prices (USD per million tokens): genai-prices' data via the model catalogue,
overridable with `--price`.

Prompt-cache reads and writes are billed at their own rates (Claude's cache write at 1.25x input, OpenAI's 30-minute
write at 1.25x, reads at a tenth or a twentieth); a vendor that reports no cache tokens is billed at the plain input
rate. A request whose prompt is over its model's long-context threshold (genai-prices' tier: Claude Sonnet 4.5 over
200k input tokens, GPT-6.1 over 272k, Haiku 5.5 over 100k) is billed whole at the long-context rate: the backend marks
each such request in `Usage.long`, so a sample's summed usage still tells them apart. A run records tokens and cost
per role (`role_costs`: the illusion agent's router, main and rescue agents; SEVEX's ideator, engineer, analyst and
target), and `role_totals` adds them up over records for the reports.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import asdict, fields
from typing import Any

from .backends.catalogue import MODELS, Price, lookup
from .messages import Usage
from .records import SampleResult

__all__ = ["PRICES", "Price", "UnknownPriceWarning", "cost", "parse_prices", "price_of", "price_table",
           "role_costs", "role_totals", "standard_prices"]
USAGE_FIELDS = tuple(f.name for f in fields(Usage))

_WARNED: set[str] = set()


class UnknownPriceWarning(UserWarning):
    """A model no price source knows: its cost is reported as unknown."""


def price_table(service_tier: str | None = None) -> dict[str, Price]:
    """Every catalogue model's list price on `service_tier` (None or 'standard': the standard tier)."""
    tier = "" if service_tier in (None, "standard") else service_tier
    return {m.id: price for m in MODELS if (price := m.price_for(tier)) is not None}


@functools.cache
def standard_prices() -> dict[str, Price]:
    """The standard tier's table, made on first use: loading genai-prices' data is a tenth of a second that a
    command which bills nothing (`--help`, `report`) should not pay. Estimates only: `--price` overrides them."""
    return price_table()


PRICES: dict[str, Price]  # no value here: module __getattr__ below gives standard_prices() on first use


def __getattr__(name: str) -> Any:
    """`PRICES`, the standard tier's table, as the name users and plugins import."""
    if name == "PRICES":
        return standard_prices()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_prices(values: list[str] | None, service_tier: str | None = None) -> dict[str, Price]:
    """`MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]` entries (USD per million tokens) on top of the catalogue's."""
    table = price_table(service_tier) if service_tier not in (None, "standard") else dict(standard_prices())
    for value in values or []:
        model, _, numbers = value.partition("=")
        try:
            parts = [float(x) for x in numbers.split(",")]
            if not model or not 2 <= len(parts) <= 4 or min(parts) < 0:
                raise ValueError(value)
        except ValueError:
            raise ValueError("--price must be MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]] in USD per million tokens, "
                             f"got {value!r}") from None
        table[model] = Price(*parts)
    return table


def price_of(model: str, table: dict[str, Price]) -> Price | None:
    """The table's price for exactly this model, else for the model the catalogue knows it as (an alias, a dated
    snapshot, a routed name: backends/catalogue.py), else genai-prices' for its exact id; never a prefix's."""
    if model in table:
        return table[model]
    info = lookup(model)
    return table.get(info.priced_as or "") or info.price


def cost(usage: Usage, model: str, table: dict[str, Price]) -> float | None:
    """USD for this usage, or None for a model no source prices (warned once, naming --price, when it used tokens:
    a local `function` model uses none); reasoning is billed as output, and the requests that crossed the model's
    long-context threshold (`usage.long`) at its long-context rate."""
    price = price_of(model, table)
    if price is None:
        if model not in _WARNED and any(asdict(usage).values()):
            _WARNED.add(model)
            warnings.warn(f"no price is known for {model}: its cost is reported as unknown; pass "
                          f"--price {model}=IN,OUT[,CACHE_READ[,CACHE_WRITE]] (USD per million tokens)",
                          UnknownPriceWarning, stacklevel=2)
        return None
    if usage.long is None:
        return billed(usage, price)
    return billed(usage, price) - billed(usage.long, price) + billed(usage.long, price.long or price)


def billed(usage: Usage, price: Price) -> float:
    """USD for these tokens at one set of rates (the long-context part of `usage` not told apart)."""
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    fresh = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    return (fresh * price.input + usage.cached_tokens * read + usage.cache_write_tokens * write
            + (usage.output_tokens + usage.reasoning_tokens) * price.output) / 1e6


def role_costs(usage: Mapping[str, Usage], model: str, table: dict[str, Price]) -> dict[str, dict[str, Any]]:
    """Per role: its token counts (cache reads and writes, reasoning) and their cost (None: no price known)."""
    return {role: {**asdict(u), "cost": cost(u, model, table)} for role, u in usage.items()}


def role_totals(records: Iterable[SampleResult]) -> dict[str, dict[str, Any]]:
    """`roles` of many records added up per role; a role's cost is None once any of its records has no price."""
    totals: dict[str, dict[str, Any]] = {}
    for record in records:
        for role, entry in record.roles.items():
            usage = Usage(**{k: entry.get(k) for k in USAGE_FIELDS if k in entry})
            total = totals.setdefault(role, {"usage": Usage(), "cost": 0.0, "samples": 0})
            total["usage"] = total["usage"] + usage
            total["samples"] += 1
            billed = entry.get("cost")
            if billed is None and usage.total:
                total["cost"] = None
            elif total["cost"] is not None:
                total["cost"] += billed or 0.0
    return {role: {"samples": t["samples"], **asdict(t["usage"]),
                   "cost": None if t["cost"] is None else round(t["cost"], 6)} for role, t in totals.items()}

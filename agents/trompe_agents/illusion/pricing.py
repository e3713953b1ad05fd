"""The illusion agent's prices: the library's cost model (`trompe_agents.costs`), under the name its modules and
users import it by."""

from __future__ import annotations

from typing import Any

from ..costs import (Price, UnknownPriceWarning, cost, parse_prices, price_of, price_table, role_costs, role_totals,
                     standard_prices)

__all__ = ["PRICES", "Price", "UnknownPriceWarning", "cost", "parse_prices", "price_of", "price_table",
           "role_costs", "role_totals", "standard_prices"]


PRICES: dict[str, Price]  # given by __getattr__ below, on first use


def __getattr__(name: str) -> Any:
    """`PRICES` as `trompe_agents.costs` makes it: on first use."""
    if name == "PRICES":
        return standard_prices()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

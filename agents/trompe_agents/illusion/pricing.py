"""The illusion agent's prices: the library's cost model (`trompe_agents.costs`), under the name its modules and
users import it by."""

from __future__ import annotations

from typing import Any

from .. import costs
from ..costs import (Price, UnknownPriceWarning, cost, parse_prices, price_of, price_table, role_costs, role_totals,
                     standard_prices)

__all__ = ["PRICES", "Price", "UnknownPriceWarning", "cost", "parse_prices", "price_of", "price_table",
           "role_costs", "role_totals", "standard_prices"]


PRICES: dict[str, Price]  # costs makes it on first use; __getattr__ below hands it on


def __getattr__(name: str) -> Any:
    """What `trompe_agents.costs` gives for a name not bound here (`PRICES`, made there on first use)."""
    return getattr(costs, name)

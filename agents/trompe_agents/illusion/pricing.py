"""The illusion agent's prices: the library's cost model (`trompe_agents.costs`), under the name its modules and
users import it by."""

from ..costs import (PRICES, Price, UnknownPriceWarning, cost, parse_prices, price_of, price_table, role_costs,
                     role_totals)

__all__ = ["PRICES", "Price", "UnknownPriceWarning", "cost", "parse_prices", "price_of", "price_table",
           "role_costs", "role_totals"]

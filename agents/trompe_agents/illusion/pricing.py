"""Estimated cost of a run: a small per-model price table (USD per million tokens), overridable."""

from __future__ import annotations

from ..messages import Usage

# Rough list prices (input, output) per million tokens; estimates only -- override with --price MODEL=IN,OUT.
PRICES: dict[str, tuple[float, float]] = {
    "gemini-3-flash-preview": (0.50, 3.00),
    "gemini-3.1-flash-lite-preview": (0.25, 1.50),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4o": (2.50, 10.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-sonnet-4-6": (3.00, 15.00),
}


def parse_prices(values: list[str] | None) -> dict[str, tuple[float, float]]:
    """`MODEL=IN,OUT` entries (USD per million input/output tokens) on top of the built-in table."""
    table = dict(PRICES)
    for value in values or []:
        model, _, pair = value.partition("=")
        try:
            cost_in, cost_out = (float(x) for x in pair.split(","))
        except ValueError:
            raise ValueError(f"--price must be MODEL=IN,OUT in USD per million tokens, got {value!r}") from None
        table[model] = (cost_in, cost_out)
    return table


def cost(usage: Usage, model: str, table: dict[str, tuple[float, float]]) -> float | None:
    """USD for this usage, or None for a model the table does not know (reasoning is billed as output)."""
    price = table.get(model) or next((p for name, p in table.items() if model.startswith(name)), None)
    if price is None:
        return None
    return (usage.input_tokens * price[0] + (usage.output_tokens + usage.reasoning_tokens) * price[1]) / 1e6

"""`trompe models`: every catalogue model with its backends, status, thinking control and list price, then every model
genai-prices prices for the same vendors that the catalogue does not list (`unlisted`: its vendor's default rules)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from trompe_kernel.exits import OK

from .backends import catalogue
from .backends.catalogue import DEFAULTS, MODELS, VENDOR_OF_BACKEND, ModelInfo, Price, unlisted_models

UNKNOWN_PRICE = "unknown: --price MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list the model catalogue: backends, status and prices",
                                   description="Every model the catalogue knows, with the backends that talk to it, "
                                               "its status (a deprecated, routed or retired one names its "
                                               "replacement), its thinking control and its list price in USD per "
                                               "million tokens.")
    parser.add_argument("--vendor", choices=sorted(set(VENDOR_OF_BACKEND.values())), help="only this vendor's models")
    parser.add_argument("--service-tier", choices=("standard", "flex", "batch"), default="standard",
                        help="prices on this tier (default standard)")
    parser.add_argument("--json", action="store_true", help="one JSON object per model instead of a table")
    parser.set_defaults(func=run)


def backends_of(info: ModelInfo) -> list[str]:
    """The backends that talk to this model's vendor, the ones it is the default of marked with '*'."""
    return [f"{b}*" if DEFAULTS.get(b) == info.id else b for b, v in VENDOR_OF_BACKEND.items() if v == info.vendor]


def status_of(info: ModelInfo) -> str:
    return f"{info.status} -> {info.replacement}" if info.replacement else info.status


def price_text(price: Price | None) -> str:
    if price is None:
        return UNKNOWN_PRICE
    cache = "/".join("-" if p is None else f"{p:g}" for p in (price.cache_read, price.cache_write))
    long = f"; over {price.long_above:,}: {price.long.input:g} / {price.long.output:g}" if price.long else ""
    return f"{price.input:g} / {price.output:g} / {cache}{long}"


def row(info: ModelInfo, tier: str) -> dict[str, Any]:
    price = info.price_for("" if tier == "standard" else tier)
    return {"model": info.id, "vendor": info.vendor, "backends": backends_of(info), "status": info.status,
            "replacement": info.replacement, "thinking": info.thinking, "efforts": list(info.efforts),
            "price": None if price is None else asdict(price), "source": info.source}


def run(args: argparse.Namespace) -> int:
    models = [m for m in [*MODELS, *unlisted_models()] if args.vendor in (None, m.vendor)]
    if args.json:
        for m in models:
            print(json.dumps(row(m, args.service_tier)))
        return OK
    header = ("model", "backends (* default)", "status", "thinking", "$/Mtok in / out / cache read/write")
    lines = [(m.id, ",".join(backends_of(m)), status_of(m),
              f"{m.thinking or '-'}{': ' + ','.join(m.efforts) if m.efforts else ''}",
              price_text(m.price_for("" if args.service_tier == "standard" else args.service_tier)))
             for m in models]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
    user = catalogue.user_file()
    print(f"\ncatalogue: {catalogue.models_toml()}" + (f" + {user}" if user else "")
          + f" (add or change models in ${catalogue.USER_FILE_VARIABLE} or ~/.config/trompe/models.toml); "
            f"prices: genai-prices, {args.service_tier} tier; a request over a long-context threshold is billed "
            f"whole at the rate after ';'; unlisted: priced by genai-prices, run with the vendor's default rules")
    return OK

"""What each vendor's models accept, as their documentation says on 2026-12-01; backends ask here, not in constants.

The facts live in a data file, `models.toml` beside this module, each entry naming the vendor page it was checked
against; a user file (`TROMPE_MODELS`, else `~/.config/trompe/models.toml`) adds models or replaces fields without a
release. Prices come from `genai-prices` (the pydantic team's maintained price data, offline in its wheel) unless an
entry sets its own; `--price` overrides both. A model the table does not know gets its family's entry (the longest
known prefix), and an alias (`*-latest`, `sonnet`) is resolved by capability: it stands for the newest generation of
its family, never for an old one. A deprecated, routed or retired model warns once, naming its replacement.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tomllib
import warnings
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

MB = 1024 * 1024
USER_FILE_VARIABLE = "TROMPE_MODELS"
STATUSES = ("active", "deprecated", "routed", "retired")
THINKING_KINDS = ("adaptive", "budget", "effort", "level")
# genai-prices' provider ids; a vendor documents a tier at half price where genai-prices has no variant for it yet
# (Gemini: ai.google.dev/gemini-api/docs/optimization, "Flex: 50% discount"; Anthropic Message Batches:
# platform.claude.com/docs/en/build-with-claude/batch-processing, "50% of standard API prices").
PRICE_PROVIDER = {"anthropic": "anthropic", "openai": "openai", "gemini": "google"}
TIER_DISCOUNT = {("gemini", "flex"): 0.5, ("anthropic", "batch"): 0.5}

LEVELS = ("off", "low", "medium", "high")
# Rounds whose images are re-sent (older ones become a stub), where no prompt cache reuses them. Measured with
# bench/image_tokens.py on a 10-round Task II sample: K=1/2/3 cost 0.22-0.23x / 0.27-0.30x / 0.31-0.36x of re-sending
# everything with the stable prefix cached; K=2 keeps the latest result and the one before it (a comparison between
# two steps) for 0.05x more than K=1.
DEFAULT_KEEP_ROUNDS = 2
# Backends whose vendor reuses the longest prefix shared with the previous request (Anthropic with a top-level
# cache_control, OpenAI routed by prompt_cache_key, Gemini's implicit cache): keeping every image makes each request
# the previous one plus a round, which bench/image_tokens.py prices at 0.75-0.87x of K=2 elision on every vendor.
ROLLING_CACHE_BACKENDS = frozenset({"claude", "openai", "openai-chat", "gemini"})
# Tokens reserved for thinking on top of the answer's own budget, where a vendor counts thinking as output.
THINKING_BUDGET = {"off": 0, "low": 1024, "medium": 4096, "high": 16384}


@dataclass(frozen=True)
class ImageLimits:
    """A vendor's documented image limits, and the preview size we send (the registry keeps full size)."""

    max_bytes: int  # one image, as decoded bytes
    max_side: int  # longest side the API accepts
    preview_side: int  # longest side we send: larger images are downscaled, the text says so
    max_pixels: int  # pixel budget of the preview (the vendor downscales beyond it anyway)
    max_images: int  # images per request
    max_request_bytes: int  # all images of one request together
    formats: tuple[str, ...] = ("png", "jpeg", "webp")


@dataclass(frozen=True)
class Price:
    """USD per million tokens; cache reads/writes default to the input price when a vendor bills none apart. A
    request whose prompt is over `long_above` input tokens is billed whole at `long` (genai-prices' tier: the
    vendors' long-context rate, e.g. Claude over 200k, GPT-6.1 over 272k)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    long_above: int | None = None
    long: Price | None = None

    def scaled(self, factor: float) -> Price:
        """Every rate times `factor` (a tier's documented discount), the long-context rate included."""
        def times(p: float | None) -> float | None:
            return None if p is None else p * factor
        return Price(self.input * factor, self.output * factor, times(self.cache_read), times(self.cache_write),
                     self.long_above, self.long.scaled(factor) if self.long else None)


@dataclass(frozen=True)
class ModelInfo:
    """What one model accepts (the fields of models.toml). `thinking` is how it is steered: 'adaptive' / 'budget'
    (Anthropic), 'effort' (OpenAI reasoning), 'level' / 'budget' (Gemini 3 / 2.5), or None (no thinking control)."""

    vendor: str
    id: str
    status: str = "active"  # active, deprecated (still answers), routed (another model answers), retired, unknown
    replacement: str | None = None
    temperature: bool = True  # accepts a temperature; Gemini 3 accepts one but Google advises the default
    default_temperature: float | None = 0.0  # what we send when the user says nothing (None: send none)
    thinking: str | None = None
    efforts: tuple[str, ...] = ()  # accepted effort/level names, lowest first
    thinking_off: str = ""  # Claude's thinking type for `--thinking off` ('disabled', 'between_tools'); '': lowest
    thinking_display: str = ""  # Claude's thinking.display ('summarized': the narration reaches the trace)
    chat_tools_effort: str = ""  # the reasoning_effort Chat Completions demands next to function tools
    final_with_tools: bool = True  # native structured output can be combined with tools
    tool_images: bool = True  # images may go inside tool results (Gemini: function responses)
    images: ImageLimits | None = None
    listed_price: Price | None = field(default=None, compare=False)  # the catalogue's own price, if it sets one
    priced_as: str | None = None  # the model whose list price applies (a routed model: the one that answers)
    source: str = ""

    @property
    def thinks_by_default(self) -> bool:
        """Thinks when not told otherwise (all but Claude's manual-thinking models): the output budget needs room."""
        return self.thinking is not None and not (self.vendor == "anthropic" and self.thinking == "budget")

    @property
    def price(self) -> Price | None:
        """The standard-tier list price: the catalogue's own, else genai-prices' (None: unknown, see --price)."""
        return self.price_for("")

    def price_for(self, service_tier: str) -> Price | None:
        """The list price on a service tier ('' standard, 'flex'); None where no source knows it."""
        if self.listed_price is not None and not service_tier:
            return self.listed_price
        return market_price(self.vendor, self.priced_as, service_tier) if self.priced_as else None


# Image limits from the vendors' vision guides: SOURCES["anthropic-vision"] (5 MB, 8000 px, 100 images, 32 MB request,
# downscaled beyond 1568 px / 1.15 MP anyway), SOURCES["openai-images"] (20 MB, 500 images and 50 MB per request,
# fit within 2048 px), SOURCES["gemini-3"] (inline data within a 20 MB request; 7 MB per inline file on Vertex).
ANTHROPIC_IMAGES = ImageLimits(max_bytes=5 * MB, max_side=8000, preview_side=1568, max_pixels=1_150_000,
                               max_images=100, max_request_bytes=32 * MB, formats=("png", "jpeg", "webp", "gif"))
OPENAI_IMAGES = ImageLimits(max_bytes=20 * MB, max_side=2048, preview_side=2048, max_pixels=1536 * 32 * 32,
                            max_images=500, max_request_bytes=50 * MB, formats=("png", "jpeg", "webp", "gif"))
# Gemini 2.x bills per 768-px tile: a 1536-px preview is 2x2 tiles at most.
GEMINI_IMAGES = ImageLimits(max_bytes=7 * MB, max_side=3072, preview_side=1536, max_pixels=1536 * 1536,
                            max_images=900, max_request_bytes=20 * MB, formats=("png", "jpeg", "webp"))
# A local server (vLLM, Ollama, llama.cpp) has no documented limit; keep requests the size OpenAI's would be.
LOCAL_IMAGES = replace(OPENAI_IMAGES, preview_side=1568, max_pixels=1568 * 1568)

IMAGE_LIMITS = {"anthropic": ANTHROPIC_IMAGES, "openai": OPENAI_IMAGES, "gemini": GEMINI_IMAGES}


class CatalogueError(ValueError):
    """A catalogue file that cannot be read: the message names the file and the entry."""


class ModelStatusWarning(UserWarning):
    """A model that is deprecated, routed to another one or retired."""


def user_file() -> Path | None:
    """The user's catalogue file: $TROMPE_MODELS (empty: none), else ~/.config/trompe/models.toml if it exists."""
    if USER_FILE_VARIABLE in os.environ:
        value = os.environ[USER_FILE_VARIABLE].strip()
        return Path(value).expanduser() if value else None
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    path = config / "trompe" / "models.toml"
    return path if path.is_file() else None


def _read(path: Path | None, text: str | None = None) -> dict[str, Any]:
    try:
        return tomllib.loads(text if text is not None else path.read_text(encoding="utf-8"))  # type: ignore[union-attr]
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogueError(f"model catalogue {path}: {exc}") from None


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` on top of `base`, table by table (a user entry replaces single fields, not the whole model)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


MODEL_FIELDS = {"vendor", "status", "replacement", "temperature", "default_temperature", "thinking", "efforts",
                "thinking_off", "thinking_display", "chat_tools_effort", "final_with_tools", "tool_images",
                "images", "price", "source"}


def _model(id: str, entry: dict[str, Any], data: dict[str, Any], where: str) -> ModelInfo:
    """One [models."<id>"] table on top of its vendor's defaults, checked field by field."""
    unknown = set(entry) - MODEL_FIELDS
    vendor = entry.get("vendor")
    if unknown or vendor not in data.get("vendors", {}):
        what = f"unknown field {sorted(unknown)[0]!r}" if unknown else f"vendor must be one of " \
            f"{', '.join(data.get('vendors', {}))}, got {vendor!r}"
        raise CatalogueError(f"model catalogue {where}: models.{id}: {what}")
    values = {**data["vendors"][vendor], **entry}
    status, thinking = values.get("status", "active"), values.get("thinking", "none")
    if status not in STATUSES or (thinking != "none" and thinking not in THINKING_KINDS):
        raise CatalogueError(f"model catalogue {where}: models.{id}: status must be one of {', '.join(STATUSES)} "
                             f"and thinking one of none, {', '.join(THINKING_KINDS)}; got {status!r}, {thinking!r}")
    price = values.get("price")
    try:
        listed = Price(**{k: float(v) for k, v in price.items()}) if price is not None else None
    except (AttributeError, TypeError, ValueError):
        raise CatalogueError(f"model catalogue {where}: models.{id}.price must hold input, output and optionally "
                             f"cache_read, cache_write (USD per million tokens); got {price!r}") from None
    default_temperature = values.get("default_temperature", 0.0)
    source = str(values.get("source", ""))
    return ModelInfo(
        vendor, id, status=status, replacement=values.get("replacement"),
        temperature=bool(values.get("temperature", True)),
        default_temperature=None if default_temperature == "none" else float(default_temperature),
        thinking=None if thinking == "none" else thinking, efforts=tuple(values.get("efforts", ())),
        thinking_off=str(values.get("thinking_off", "")), thinking_display=str(values.get("thinking_display", "")),
        chat_tools_effort=str(values.get("chat_tools_effort", "")),
        final_with_tools=bool(values.get("final_with_tools", True)), tool_images=bool(values.get("tool_images", True)),
        images=IMAGE_LIMITS.get(values.get("images", "")), listed_price=listed,
        priced_as=values.get("replacement") if status == "routed" else id,
        source=data.get("sources", {}).get(source, source))


def load(user: Path | None = None) -> dict[str, Any]:
    """The package's catalogue with the user's file on top: models, defaults, aliases and sources."""
    data = _read(Path("models.toml"), resources.files(__package__).joinpath("models.toml").read_text("utf-8"))
    where = "models.toml"
    if user is not None:
        data, where = _merge(data, _read(user)), f"{models_toml()} + {user}"
    models = [_model(id, entry, data, where) for id, entry in data.get("models", {}).items()]
    known = {m.id for m in models}
    for name, target in {**data.get("defaults", {}), **data.get("aliases", {})}.items():
        if target not in known:
            raise CatalogueError(f"model catalogue {where}: {name} = {target!r} names no model of the catalogue")
    return {"models": models, "defaults": data.get("defaults", {}), "aliases": data.get("aliases", {}),
            "sources": data.get("sources", {})}


def models_toml() -> str:
    return str(resources.files(__package__).joinpath("models.toml"))


@functools.cache
def market_price(vendor: str, model: str, service_tier: str = "") -> Price | None:
    """genai-prices' list price of `model` (USD per million tokens) with its long-context tier, or None where it has
    none."""
    provider = PRICE_PROVIDER.get(vendor)
    try:
        from genai_prices import data_snapshot
    except ImportError:  # an install without it: every cost is unknown unless --price says it
        return None
    if provider is None:
        return None
    try:
        _, found = data_snapshot.get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    prices = found.get_prices(datetime.now(UTC), {"service_tier": service_tier} if service_tier else None)

    def rate(value: Any, start: int | None = None) -> float | None:
        """One price key's rate: its base, or its tier from `start` (the base where that key has none)."""
        if value is None:
            return None
        tier = [t.price for t in getattr(value, "tiers", ()) if t.start == start]
        return float(tier[0] if tier else getattr(value, "base", value))

    values = [getattr(prices, name, None) for name in ("input_mtok", "output_mtok", "cache_read_mtok",
                                                        "cache_write_mtok")]
    if values[0] is None or values[1] is None:
        return None
    starts = {t.start for v in values for t in getattr(v, "tiers", ())}
    if len(starts) > 1:  # a cliff per threshold, which one long-context rate cannot bill (none in the data today):
        return None  # an unknown cost (warned, naming --price) rather than a wrong one
    start = min(starts, default=None)
    long = Price(*(rate(v, start) for v in values)) if start is not None else None  # type: ignore[arg-type]
    price = Price(*(rate(v) for v in values), long_above=start, long=long)  # type: ignore[arg-type]
    if service_tier and (vendor, service_tier) in TIER_DISCOUNT and price == market_price(vendor, model):
        price = price.scaled(TIER_DISCOUNT[vendor, service_tier])  # genai-prices has no variant: the documented rate
    return price


try:
    _CATALOGUE = load(user_file())
except CatalogueError as exc:  # the user's own file: one line naming it, not a traceback from an import
    sys.exit(f"trompe: {exc}")
MODELS: list[ModelInfo] = _CATALOGUE["models"]
BY_ID = {m.id: m for m in MODELS}
SOURCES: dict[str, str] = _CATALOGUE["sources"]

# The default model per backend: live, with vision and tools, priced for many samples.
DEFAULTS: dict[str, str] = _CATALOGUE["defaults"]
VENDOR_OF_BACKEND = {"claude": "anthropic", "openai": "openai", "openai-chat": "openai", "gemini": "gemini"}


def default_keep_images(backend: str) -> int | None:
    """`--keep-images` when not given: every image (None) where the vendor caches a rolling prefix, else K rounds."""
    return None if backend in ROLLING_CACHE_BACKENDS else DEFAULT_KEEP_ROUNDS

# Aliases stand for the newest model of their family: resolved to the capabilities of that model.
ALIASES: dict[str, str] = _CATALOGUE["aliases"]
# Unknown names: the family decides (newest generation for anything not matched more precisely).
FAMILY_FALLBACK = {"anthropic": DEFAULTS["claude"], "openai": DEFAULTS["openai"], "gemini": DEFAULTS["gemini"]}
_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")
_WARNED: set[str] = set()


def default_model(backend: str) -> str:
    return DEFAULTS[backend]


def warn_status(model: str, vendor: str | None = None) -> str | None:
    """Warn once per model that is deprecated, routed or retired, naming its replacement; returns the warning."""
    info = lookup(model, vendor)
    if info.status in ("active", "unknown") or model in _WARNED:
        return None
    _WARNED.add(model)
    instead = f"--model {info.replacement}" if info.replacement else "another model"
    text = {"deprecated": f"{model} is deprecated: it still answers but will be shut down; use {instead}",
            "routed": f"{model} is routed: the vendor answers it with {info.replacement} (and it is priced as "
                      f"that model); use {instead} to choose it yourself",
            "retired": f"{model} is retired: its requests fail; use {instead}"}[info.status]
    warnings.warn(f"{text} (source: {info.source})", ModelStatusWarning, stacklevel=2)
    return text


def lookup(model: str, vendor: str | None = None) -> ModelInfo:
    """The capabilities of `model`: exact, snapshot (date suffix), alias, family prefix, or the vendor's newest."""
    name = model.strip().lower().removeprefix("models/")
    if name in BY_ID:
        return BY_ID[name]
    if name in ALIASES:
        return replace(BY_ID[ALIASES[name]], id=model)
    base = _DATE.sub("", name)
    if base in BY_ID:
        return replace(BY_ID[base], id=model)
    if name.endswith("-latest"):
        prefix = name.removesuffix("-latest")
        newest = next((m for m in MODELS if m.id.startswith(prefix) and m.status == "active"), None)
        if newest:
            return replace(newest, id=model)
    family = max((m for m in MODELS if name.startswith(m.id)), key=lambda m: len(m.id), default=None)
    if family:
        return replace(family, id=model, listed_price=None, priced_as=None)
    vendor = vendor or _vendor_of(name)
    if vendor in FAMILY_FALLBACK:
        fallback = BY_ID[FAMILY_FALLBACK[vendor]]
        older = _older_generation(vendor, name)
        return replace(older or fallback, id=model, listed_price=None, priced_as=None, status="unknown")
    return ModelInfo(vendor or "unknown", model, status="unknown")


def _vendor_of(name: str) -> str | None:
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith("gemini"):
        return "gemini"
    if re.match(r"(gpt|o\d|chatgpt)", name):
        return "openai"
    return None


def _older_generation(vendor: str, name: str) -> ModelInfo | None:
    """An unlisted model of an old generation keeps that generation's rules (e.g. gemini-2.0-*, gpt-4o-*)."""
    if vendor == "gemini" and (m := re.match(r"gemini-(\d+)", name)) and int(m.group(1)) < 3:
        return BY_ID["gemini-2.5-flash-lite"]
    if vendor == "openai" and re.match(r"(gpt-4|gpt-3|chatgpt-4)", name):
        return BY_ID["gpt-4.1-mini"]
    if vendor == "anthropic" and re.match(r"claude-(3|\w+-4-[0-6]|\w+-4$)", name):
        return BY_ID["claude-sonnet-4-6"]
    return None


def thinking_level(value: str | None) -> str | None:
    """The `--thinking` option: off, low, medium or high (None: leave the vendor's default)."""
    if value is None:
        return None
    level = str(value).strip().lower()
    if level not in LEVELS:
        raise ValueError(f"thinking must be one of {', '.join(LEVELS)}; got {value!r}")
    return level


def nearest_effort(info: ModelInfo, level: str) -> str:
    """Our level as one of the model's own effort names (the closest it accepts)."""
    if level in info.efforts:
        return level
    if level == "off":
        return info.efforts[0]
    return info.efforts[-1] if level == "high" else info.efforts[len(info.efforts) // 2]


"""What each vendor's models accept, as their documentation says on 2026-12-01; backends ask here, not in constants.

The facts live in a data file, `models.toml` beside this module, each entry naming the vendor page it was checked
against; a user file (`TROMPE_MODELS`, else `~/.config/trompe/models.toml`) adds models or replaces fields without a
release. Prices come from `genai-prices` (the pydantic team's maintained price data, offline in its wheel) unless an
entry sets its own; `--price` overrides both.

A model is known only by its exact id, an alias of [aliases], or a dated snapshot of a listed id in its vendor's own
form (`SNAPSHOT`: Anthropic `-YYYYMMDD` or Vertex `@YYYYMMDD`, OpenAI `-YYYY-MM-DD`, Gemini `-NNN`); never by a
prefix, so a next-month `claude-sonnet-5-6` does not inherit Sonnet 5's rules. An id the catalogue does not list is
`unlisted` where genai-prices knows that exact id (priced from it, run on its vendor's defaults) and `unknown`
otherwise (its vendor's defaults, no price). `check_model` says so in one line, refuses a retired model, a model of
another vendor and a typo (a misspelt word of a known id) with a did-you-mean, and names a shutdown date from a week
before it.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

MB = 1024 * 1024
USER_FILE_VARIABLE = "TROMPE_MODELS"
STATUSES = ("active", "deprecated", "routed", "retired")  # in the file; lookups add "unlisted" and "unknown"
# A dated snapshot of a listed id, in each vendor's own form (docs/vendors.md, "Model names"): Anthropic
# `claude-sonnet-5-5-20261015` (Vertex: `claude-sonnet-5-5@20261015`), OpenAI `gpt-6.1-terra-2026-10-26`, Gemini
# `gemini-2.0-flash-001`. Nothing else after an id makes it the same model.
SNAPSHOT = {"anthropic": re.compile(r"(?:-|@)\d{8}$"), "openai": re.compile(r"-\d{4}-\d{2}-\d{2}$"),
            "gemini": re.compile(r"-\d{3}$")}
SHUTDOWN_NOTICE = timedelta(days=7)  # a deprecated model's shutdown date is named from a week before it
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
    off_with_json_tools: str = ""  # Claude's thinking type for `off` where tools and a JSON format meet ('adaptive')
    thinking_display: str = ""  # Claude's thinking.display ('summarized': the narration reaches the trace)
    chat_tools_effort: str = ""  # the reasoning_effort Chat Completions demands next to function tools
    final_with_tools: bool = True  # native structured output can be combined with tools
    tool_images: bool = True  # images may go inside tool results (Gemini: function responses)
    images: ImageLimits | None = None
    listed_price: Price | None = field(default=None, compare=False)  # the catalogue's own price, if it sets one
    priced_as: str | None = None  # the model whose list price applies (a routed model: the one that answers)
    source: str = ""
    deprecated_on: date | None = None  # when the vendor announced the deprecation
    shutdown: date | None = None  # from this day its requests fail: the model is refused

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


class ModelRefused(ValueError):
    """A --model that cannot be what the user meant: retired, another vendor's, or a typo (one line, exit 2)."""


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
                "thinking_off", "off_with_json_tools", "thinking_display", "chat_tools_effort", "final_with_tools",
                "tool_images", "images", "price", "source", "deprecated", "shutdown", "like"}


def _like(id: str, models: dict[str, dict[str, Any]], where: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """An entry with `like = "<id>"` resolved: the named model's fields, then its own (a new model that follows an
    old one's rules says so by name, never by a shared prefix)."""
    entry = models[id]
    if "like" not in entry:
        return entry
    base = entry["like"]
    if base not in models or base in seen:
        raise CatalogueError(f"model catalogue {where}: models.{id}: like = {base!r} names no other model of the "
                             "catalogue" if base not in models else f"model catalogue {where}: models.{id}: like "
                             f"loops through {' -> '.join((*seen, id, base))}")
    inherited = {k: v for k, v in _like(base, models, where, (*seen, id)).items()
                 if k not in ("status", "replacement", "deprecated", "shutdown", "source", "price")}
    return {**inherited, **{k: v for k, v in entry.items() if k != "like"}}


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
    dates = {key: values.get(key) for key in ("deprecated", "shutdown")}
    if any(d is not None and type(d) is not date for d in dates.values()):
        raise CatalogueError(f"model catalogue {where}: models.{id}: deprecated and shutdown must be TOML dates "
                             f"(2026-12-11, unquoted); got {dates}")
    return ModelInfo(
        vendor, id, status=status, replacement=values.get("replacement"),
        temperature=bool(values.get("temperature", True)),
        default_temperature=None if default_temperature == "none" else float(default_temperature),
        thinking=None if thinking == "none" else thinking, efforts=tuple(values.get("efforts", ())),
        thinking_off=str(values.get("thinking_off", "")),
        off_with_json_tools=str(values.get("off_with_json_tools", "")),
        thinking_display=str(values.get("thinking_display", "")),
        chat_tools_effort=str(values.get("chat_tools_effort", "")),
        final_with_tools=bool(values.get("final_with_tools", True)), tool_images=bool(values.get("tool_images", True)),
        images=IMAGE_LIMITS.get(values.get("images", "")), listed_price=listed,
        priced_as=values.get("replacement") if status == "routed" else id,
        source=data.get("sources", {}).get(source, source), deprecated_on=dates["deprecated"],
        shutdown=dates["shutdown"])


def load(user: Path | None = None) -> dict[str, Any]:
    """The package's catalogue with the user's file on top: models, defaults, aliases and sources."""
    data = _read(Path("models.toml"), resources.files(__package__).joinpath("models.toml").read_text("utf-8"))
    where = "models.toml"
    if user is not None:
        data, where = _merge(data, _read(user)), f"{models_toml()} + {user}"
    raw = data.get("models", {})
    models = [_model(id, _like(id, raw, where), data, where) for id in raw]
    known = {m.id for m in models}
    for name, target in {**data.get("defaults", {}), **data.get("aliases", {})}.items():
        if target not in known:
            raise CatalogueError(f"model catalogue {where}: {name} = {target!r} names no model of the catalogue")
    vendors = {v: _model("", {"vendor": v}, data, where) for v in data.get("vendors", {})}
    return {"models": models, "defaults": data.get("defaults", {}), "aliases": data.get("aliases", {}),
            "sources": data.get("sources", {}), "vendors": vendors}


def models_toml() -> str:
    return str(resources.files(__package__).joinpath("models.toml"))


@functools.cache
def market_models(vendor: str) -> dict[str, Any]:
    """genai-prices' models of `vendor` by their exact id: the ids it lists (not its match patterns, which take
    prefixes), of the vendor's own family on a provider that also resells others (Google lists Claude on Vertex)."""
    provider = PRICE_PROVIDER.get(vendor)
    try:
        from genai_prices import data_snapshot
    except ImportError:  # an install without it: every cost is unknown unless --price says it
        return {}
    models = next((p.models for p in data_snapshot.get_snapshot().providers if p.id == provider), [])
    own = {"anthropic": "claude-", "gemini": "gemini-"}.get(vendor, "")
    return {m.id: m for m in models if _MODEL_ID.fullmatch(m.id) and m.id.startswith(own) and _chat_priced(m)}


# an id one sends, not a pattern (`ft:gpt-4o`, `gpt-4o-...ft-`) nor a price variant (`gpt-4o:extended`)
_MODEL_ID = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]")


def _chat_priced(model: Any) -> bool:
    """A model priced per million input and output tokens today: a chat model trompe can run and bill (not an
    embedding, speech, transcription or moderation model, nor one listed without a price)."""
    prices = model.get_prices(datetime.now(UTC))
    return prices.input_mtok is not None and prices.output_mtok is not None


@functools.cache
def market_price(vendor: str, model: str, service_tier: str = "") -> Price | None:
    """genai-prices' list price of `model` (USD per million tokens) with its long-context tier, or None where it has
    none."""
    found = market_models(vendor).get(model)
    if found is None:
        return None
    # genai-prices keys the batch tier as `processing`, the others as `service_tier`
    tier = {"processing": "batch"} if service_tier == "batch" else {"service_tier": service_tier}
    prices = found.get_prices(datetime.now(UTC), tier if service_tier else None)

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

ALIASES: dict[str, str] = _CATALOGUE["aliases"]
# What a model the catalogue does not list runs with: its vendor's [vendors.<vendor>] table, nothing more.
VENDOR_DEFAULTS: dict[str, ModelInfo] = _CATALOGUE["vendors"]
VENDOR_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI", "gemini": "Google"}
_NOTED: set[str] = set()


def default_model(backend: str) -> str:
    return DEFAULTS[backend]


def _listed(name: str, vendor: str | None) -> ModelInfo | None:
    """The catalogue's entry for `name`: its id, an alias, or a dated snapshot of an id (of `vendor`, if given)."""
    info = BY_ID.get(name) or (BY_ID[ALIASES[name]] if name in ALIASES else None)
    if info is None:
        info = next((BY_ID[base] for v, form in SNAPSHOT.items() if vendor in (None, v)
                     if (base := form.sub("", name)) != name and base in BY_ID and BY_ID[base].vendor == v), None)
    return info if info is not None and vendor in (None, info.vendor) else None


def _priced(name: str, vendor: str | None) -> tuple[str, str] | None:
    """(vendor, genai-prices id) where genai-prices lists `name`, or a dated snapshot of it, by its exact id."""
    for v in ([vendor] if vendor else list(SNAPSHOT)):
        for id in (name, SNAPSHOT[v].sub("", name)):
            if id in market_models(v):
                return v, id
    return None


def lookup(model: str, vendor: str | None = None) -> ModelInfo:
    """What `model` accepts: the catalogue's entry (exact id, alias, dated snapshot), else its vendor's defaults,
    priced by genai-prices where it lists that exact id (status `unlisted`), else unpriced (status `unknown`)."""
    name = model.strip().lower().removeprefix("models/")
    if (info := _listed(name, vendor)) is not None:
        return info if info.id == model else replace(info, id=model)
    if (priced := _priced(name, vendor)) is not None:
        return replace(VENDOR_DEFAULTS[priced[0]], id=model, status="unlisted", priced_as=priced[1],
                       source="genai-prices")
    if vendor in VENDOR_DEFAULTS:
        return replace(VENDOR_DEFAULTS[vendor], id=model, status="unknown", priced_as=None)
    return ModelInfo(vendor or "unknown", model, status="unknown")


def unlisted_models() -> list[ModelInfo]:
    """The models genai-prices prices for a vendor that the catalogue does not list (status `unlisted`)."""
    return [lookup(id, vendor) for vendor in SNAPSHOT for id in sorted(market_models(vendor))
            if id not in BY_ID and id not in ALIASES]


def known_vendor(model: str) -> str | None:
    """The vendor the catalogue or genai-prices knows `model` for (exactly), or None."""
    name = model.strip().lower().removeprefix("models/")
    info = _listed(name, None)
    if info is not None:
        return info.vendor
    priced = _priced(name, None)
    return priced[0] if priced else None


def _edits(a: str, b: str) -> int:
    """Levenshtein distance: letters inserted, deleted or replaced."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row, last = [i], row
        for j, y in enumerate(b, 1):
            row.append(min(last[j] + 1, row[j - 1] + 1, last[j - 1] + (x != y)))
    return row[-1]


def _typo(name: str, vendor: str) -> list[str]:
    """The catalogue's ids `name` is probably a misspelling of: it has a word (letters between separators) none of
    the vendor's ids or aliases has, one letter from one they have (two for words of 7 letters or more). A new
    number (`claude-sonnet-5-6`) or a new word (`gpt-7-nova`) is no typo: it may be next month's model."""
    ids = sorted({m.id for m in MODELS if m.vendor == vendor} | {a for a, t in ALIASES.items()
                                                                  if BY_ID[t].vendor == vendor})
    words = {w for id in ids for w in re.split(r"[-.@_/]", id) if w.isalpha()}
    new = [w for w in re.split(r"[-.@_/]", name) if w.isalpha() and w not in words]
    if not any(_edits(w, k) <= (1 if len(w) < 7 else 2) for w in new for k in words):
        return []
    return difflib.get_close_matches(name, ids, n=3, cutoff=0.6)


def check_model(model: str, vendor: str, today: date | None = None) -> list[str]:
    """The one-line notices for running `model` on a backend of `vendor`; raises ModelRefused for a model that cannot
    be what the user meant (another vendor's, a typo with a close known id, retired or past its shutdown date)."""
    today = today or datetime.now(UTC).date()
    name = model.strip().lower().removeprefix("models/")
    other = known_vendor(model)
    override = "(--backend-option model_check=false sends it anyway)"
    if other is not None and other != vendor:
        backends = ", ".join(b for b, v in VENDOR_OF_BACKEND.items() if v == other)
        raise ModelRefused(f"--model {model} is {VENDOR_NAMES[other]}'s, and this backend talks to "
                           f"{VENDOR_NAMES[vendor]}: use --backend {backends} {override}")
    info = lookup(model, vendor)
    instead = f"use --model {info.replacement}" if info.replacement else "use another model"
    if info.status == "retired" or (info.shutdown is not None and today >= info.shutdown):
        when = f" (shut down on {info.shutdown})" if info.shutdown else ""
        raise ModelRefused(f"--model {model} is retired{when}: its requests fail; {instead} "
                           f"(source: {info.source}) {override}")
    if info.status == "unknown" and (near := _typo(name, vendor)):
        raise ModelRefused(f"--model {model} is no {VENDOR_NAMES[vendor]} model trompe or genai-prices knows; did "
                           f"you mean {' or '.join(near)}? {override}")
    rules = f"{VENDOR_NAMES[vendor]}'s default rules ([vendors.{vendor}] of models.toml)"
    add = "add it to a models.toml of your own to set its rules (docs/vendors.md, \"Next month's models\")"
    shutdown = f"; it shuts down on {info.shutdown}" if info.shutdown and today >= info.shutdown - SHUTDOWN_NOTICE \
        else ""
    notes = {"unknown": f"{model} is not in trompe's model catalogue nor in genai-prices: it runs with {rules} and "
                        f"an unknown cost; {add}",
             "unlisted": f"{model} is not in trompe's model catalogue: it runs with {rules}, priced by genai-prices; "
                         f"{add}",
             "deprecated": f"{model} is deprecated: it still answers{shutdown}; {instead} (source: {info.source})",
             "routed": f"{model} is routed: the vendor answers it with {info.replacement} (and it is priced as that "
                       f"model); use --model {info.replacement} to choose it yourself (source: {info.source})"}
    return [notes[info.status]] if info.status in notes else []


def notice(line: str) -> bool:
    """Print a model notice once per process, as one clean line on stderr (not a Python warning with a source
    path); returns whether it was printed."""
    if line in _NOTED:
        return False
    _NOTED.add(line)
    print(f"trompe: {line}", file=sys.stderr)
    return True


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


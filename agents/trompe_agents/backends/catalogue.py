"""What each vendor's models accept, as their documentation says on 2026-12-01; backends ask here, not in constants.

Every entry names the vendor page it was checked against (`SOURCES`). Prices are list prices in USD per million
tokens, estimates only (`--price` overrides them). A model the table does not know gets its family's entry (the
longest known prefix), and an alias (`*-latest`, `sonnet`) is resolved by capability: it stands for the newest
generation of its family, never for an old one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MB = 1024 * 1024

SOURCES = {
    "anthropic-models": "https://platform.claude.com/docs/en/about-claude/models/overview",
    "anthropic-sonnet-5-5": "https://platform.claude.com/docs/zh-CN/models/sonnet-5-5/overview",
    "anthropic-sonnet-5": "https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview",
    "anthropic-deprecations": "https://platform.claude.com/docs/en/about-claude/model-deprecations",
    "anthropic-vision": "https://platform.claude.com/docs/en/build-with-claude/vision",
    "anthropic-caching": "https://platform.claude.com/docs/en/build-with-claude/prompt-caching",
    "openai-deprecations": "https://developers.openai.com/api/docs/deprecations",
    "openai-models": "https://developers.openai.com/api/docs/models/gpt-6-luna",
    "openai-images": "https://developers.openai.com/api/docs/guides/images-vision",
    "gemini-models": "https://ai.google.dev/gemini-api/docs/models",
    "gemini-deprecations": "https://ai.google.dev/gemini-api/docs/deprecations",
    "gemini-3": "https://ai.google.dev/gemini-api/docs/gemini-3",
}

LEVELS = ("off", "low", "medium", "high")
# Rounds whose images are re-sent (older ones become a stub). Measured with bench/image_tokens.py on a 10-round Task II
# sample: with prompt caching, K=1/2/3 cost 0.21-0.25x / 0.26-0.30x / 0.31-0.36x of today's input tokens; K=2 keeps
# the latest result and the one before it (a comparison between two steps) for 0.05x more than K=1.
DEFAULT_KEEP_ROUNDS = 2
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
    """USD per million tokens; cache reads/writes default to the input price when a vendor bills none apart."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True)
class ModelInfo:
    """What one model accepts. `thinking` is how it is steered: 'adaptive' / 'budget' (Anthropic), 'effort'
    (OpenAI reasoning), 'level' / 'budget' (Gemini 3 / 2.5), or None (no thinking control)."""

    vendor: str
    id: str
    status: str = "active"  # active, deprecated (still answers) or retired (requests fail)
    replacement: str | None = None
    temperature: bool = True  # accepts a temperature; Gemini 3 accepts one but Google advises the default
    default_temperature: float | None = 0.0  # what we send when the user says nothing (None: send none)
    thinking: str | None = None
    thinking_off: bool = True  # thinking can be switched off entirely
    efforts: tuple[str, ...] = ()  # accepted effort/level names, lowest first
    final_with_tools: bool = True  # native structured output can be combined with tools
    tool_images: bool = True  # images may go inside tool results (Gemini: function responses)
    images: ImageLimits | None = None
    price: Price | None = None
    source: str = ""

    @property
    def thinks_by_default(self) -> bool:
        """Thinks when not told otherwise (all but Claude's manual-thinking models): the output budget needs room."""
        return self.thinking is not None and not (self.vendor == "anthropic" and self.thinking == "budget")


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

CLAUDE_EFFORTS = ("low", "medium", "high", "xhigh", "max")
OPENAI_EFFORTS = ("none", "low", "medium", "high", "xhigh", "max")


def _claude(id: str, price: Price, *, adaptive: bool = True, off: bool = True, sampling: bool = False,
            source: str = "anthropic-models", **kw) -> ModelInfo:
    return ModelInfo("anthropic", id, temperature=sampling, default_temperature=0.0 if sampling else None,
                     thinking="adaptive" if adaptive else "budget", thinking_off=off,
                     efforts=CLAUDE_EFFORTS if adaptive else (), images=ANTHROPIC_IMAGES, price=price,
                     source=SOURCES[source], **kw)


def _claude_price(inp: float, out: float) -> Price:
    """Anthropic bills a 5-minute cache write at 1.25x and a cache read at 0.1x the input price."""
    return Price(inp, out, round(inp * 0.1, 4), round(inp * 1.25, 4))


def _openai(id: str, price: Price, *, reasoning: bool = True, efforts: tuple[str, ...] = OPENAI_EFFORTS,
            source: str = "openai-models", **kw) -> ModelInfo:
    return ModelInfo("openai", id, temperature=not reasoning, default_temperature=None if reasoning else 0.0,
                     thinking="effort" if reasoning else None, thinking_off="none" in efforts or not reasoning,
                     efforts=efforts if reasoning else (), images=OPENAI_IMAGES, price=price,
                     source=SOURCES[source], **kw)


def _gemini(id: str, price: Price | None, *, generation: int = 3, source: str = "gemini-models", **kw) -> ModelInfo:
    three = generation >= 3
    return ModelInfo("gemini", id, temperature=True, default_temperature=None if three else 0.0,
                     thinking="level" if three else "budget", thinking_off=not three,
                     efforts=("minimal", "low", "medium", "high") if three else (), final_with_tools=three,
                     tool_images=three, images=GEMINI_IMAGES, price=price, source=SOURCES[source], **kw)


MODELS: list[ModelInfo] = [
    # Anthropic: Sonnet 5 and later reject sampling parameters (400) and think adaptively.
    _claude("claude-sonnet-5-5", _claude_price(2.00, 10.00), off=False, source="anthropic-sonnet-5-5"),
    _claude("claude-sonnet-5", _claude_price(2.00, 10.00), source="anthropic-sonnet-5"),
    _claude("claude-opus-5-5", _claude_price(4.00, 20.00), off=False),
    _claude("claude-opus-5", _claude_price(5.00, 25.00)),
    _claude("claude-fable-5-1", _claude_price(10.00, 50.00), off=False),
    _claude("claude-opus-4-8", _claude_price(5.00, 25.00)),
    _claude("claude-sonnet-4-6", _claude_price(3.00, 15.00), adaptive=False, sampling=True),
    _claude("claude-haiku-4-5", _claude_price(1.00, 5.00), adaptive=False, sampling=True),
    _claude("claude-sonnet-4-5", _claude_price(3.00, 15.00), adaptive=False, sampling=True, status="retired",
            replacement="claude-sonnet-5-5", source="anthropic-deprecations"),
    # OpenAI: GPT-5 and later are reasoning models (no temperature; reasoning effort instead).
    _openai("gpt-6.1-terra", Price(1.00, 5.00, 0.05)),
    _openai("gpt-6-luna", Price(0.10, 0.50, 0.01)),
    _openai("gpt-5-mini", Price(0.25, 2.00, 0.025), efforts=("minimal", "low", "medium", "high"),
            status="deprecated", replacement="gpt-6.1-terra", source="openai-deprecations"),
    _openai("gpt-4.1-mini", Price(0.40, 1.60, 0.10), reasoning=False, status="deprecated",
            replacement="gpt-6-luna", source="openai-deprecations"),
    _openai("gpt-4o", Price(2.50, 10.00, 1.25), reasoning=False, status="deprecated", replacement="gpt-6.1-terra",
            source="openai-deprecations"),
    # Gemini: 3.x advises the default temperature 1.0 and steers thinking by level; 2.5 by a token budget.
    _gemini("gemini-3.5-flash", None),
    _gemini("gemini-3.5-flash-lite", None),
    _gemini("gemini-3.1-flash-lite", Price(0.25, 1.50, 0.025)),
    _gemini("gemini-3.1-pro-preview", Price(2.00, 12.00, 0.20), source="gemini-3"),
    _gemini("gemini-3-flash-preview", Price(0.50, 3.00, 0.05), source="gemini-deprecations"),
    _gemini("gemini-2.5-flash-lite", Price(0.10, 0.40, 0.01), generation=2),
    _gemini("gemini-2.5-flash", Price(0.30, 2.50, 0.03), generation=2, status="retired",
            replacement="gemini-3.5-flash-lite", source="gemini-deprecations"),
    _gemini("gemini-2.5-pro", Price(1.25, 10.00, 0.125), generation=2, status="retired",
            replacement="gemini-3.1-pro-preview", source="gemini-deprecations"),
]
BY_ID = {m.id: m for m in MODELS}

# The default model per backend: live, with vision and tools, priced for many samples.
DEFAULTS = {"claude": "claude-sonnet-5-5", "openai": "gpt-6.1-terra", "openai-chat": "gpt-6.1-terra",
            "gemini": "gemini-3.5-flash"}
VENDOR_OF_BACKEND = {"claude": "anthropic", "openai": "openai", "openai-chat": "openai", "gemini": "gemini"}
# Aliases stand for the newest model of their family: resolved to the capabilities of that model.
ALIASES = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-4-5",
           "claude-sonnet-latest": "claude-sonnet-5-5", "claude-opus-latest": "claude-opus-5-5",
           "gemini-flash-latest": "gemini-3.5-flash", "gemini-flash-lite-latest": "gemini-3.5-flash-lite",
           "gemini-pro-latest": "gemini-3.1-pro-preview"}
# Unknown names: the family decides (newest generation for anything not matched more precisely).
FAMILY_FALLBACK = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-6.1-terra", "gemini": "gemini-3.5-flash"}
_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")


def default_model(backend: str) -> str:
    return DEFAULTS[backend]


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
        return replace(family, id=model, price=None)
    vendor = vendor or _vendor_of(name)
    if vendor in FAMILY_FALLBACK:
        fallback = BY_ID[FAMILY_FALLBACK[vendor]]
        older = _older_generation(vendor, name)
        return replace(older or fallback, id=model, price=None, status="unknown")
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


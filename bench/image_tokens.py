"""Image tokens one illusion sample costs per vendor, from each vendor's published formula (no API calls).

A 10-round trace: a 1024x768 original plus one tool image per round, sizes as the core tools make them.
"once" counts each image once; "billed" is what 10 requests cost without prompt caching, since every
request re-sends the conversation so far (the original in all 11 requests, round k's image in 11-k).
The SEVEX paper's per-sample totals (all tokens, text included) are the reference.

    python bench/image_tokens.py
"""

from __future__ import annotations

import math
from collections.abc import Callable

ORIGINAL = (1024, 768)
TOOL_IMAGES = [  # (tool, width, height) for one plausible 10-round illusion trace
    ("draw_line", 1024, 768), ("draw_line", 1024, 768), ("crop zoom 2 (256x192)", 512, 384),
    ("crop zoom 2 (256x192)", 512, 384), ("compare_crops (2 regions)", 520, 272),
    ("draw_rectangle", 1024, 768), ("crop zoom 4 (128x128)", 512, 512), ("convert_grayscale", 1024, 768),
    ("compare_crops (3 regions)", 780, 272), ("draw_circle", 1024, 768),
]
SKETCHPAD, SEVEX = 15_621, 1_375
PREVIEW_SIDE = 1568  # the server downscales anything larger before sending (Limits.max_preview_side)


def fit(w: int, h: int, long_side: float = math.inf, pixels: float = math.inf) -> tuple[float, float]:
    """Downscale (never up) to a longest side and a pixel budget."""
    scale = min(1.0, long_side / max(w, h), math.sqrt(pixels / (w * h)))
    return w * scale, h * scale


def anthropic(w: int, h: int) -> int:
    w, h = fit(w, h, 1568, 1_150_000)
    return math.ceil(w * h / 750)


def anthropic_patches(w: int, h: int) -> int:
    w, h = fit(w, h, 2576)
    return math.ceil(w / 28) * math.ceil(h / 28)


def openai_tiles(w: int, h: int) -> int:
    w, h = fit(w, h, 2048)
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def openai_patches(multiplier: float) -> Callable[[int, int], int]:
    def cost(w: int, h: int) -> int:
        patches = math.ceil(w / 32) * math.ceil(h / 32)
        if patches > 1536:
            w, h = fit(w, h, pixels=1536 * 32 * 32)
            patches = min(1536, math.ceil(w / 32) * math.ceil(h / 32))
        return math.ceil(patches * multiplier)
    return cost


def gemini2(w: int, h: int) -> int:
    return 258 if max(w, h) <= 384 else 258 * math.ceil(w / 768) * math.ceil(h / 768)


def flat(tokens: int) -> Callable[[int, int], int]:
    return lambda w, h: tokens


def qwen3_vl(w: int, h: int) -> int:
    return round(w / 32) * round(h / 32)


VENDORS: list[tuple[str, Callable[[int, int], int]]] = [
    ("Anthropic (w*h/750, <=1568 px, 1.15 MP)", anthropic),
    ("Anthropic Opus 4.7+ (28-px patches, <=2576 px)", anthropic_patches),
    ("OpenAI gpt-4o / 4.1 (high: 85 + 170/tile)", openai_tiles),
    ("OpenAI gpt-5-mini / 4.1-mini (32-px patches x1.62)", openai_patches(1.62)),
    ("OpenAI gpt-5-nano / 4.1-nano (32-px patches x2.46)", openai_patches(2.46)),
    ("Gemini 2.x (258 per 768-px tile)", gemini2),
    ("Gemini 3 (media_resolution HIGH default: 1120)", flat(1120)),
    ("Gemini 3 (media_resolution LOW: 280)", flat(280)),
    ("Qwen3-VL local (32-px patches)", qwen3_vl),
    ("Gemma 3 local (256 per image)", flat(256)),
]


def main() -> None:
    images = [("original", *ORIGINAL), *TOOL_IMAGES]
    sent = [fit(w, h, PREVIEW_SIDE) for _, w, h in images]
    requests = len(images)  # one request per round plus the answer round
    print(f"one sample: original {ORIGINAL[0]}x{ORIGINAL[1]} + {len(TOOL_IMAGES)} tool images "
          f"({', '.join(f'{w}x{h}' for _, w, h in TOOL_IMAGES)}); {requests} requests\n")
    print(f"| model family (formula) | original | 10 tool images | once per sample | billed, {requests} requests "
          f"without cache | once vs SEVEX {SEVEX:,} | once vs SketchPad {SKETCHPAD:,} |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, cost in VENDORS:
        tokens = [cost(round(w), round(h)) for w, h in sent]
        once = sum(tokens)
        billed = sum(t * (requests - i) for i, t in enumerate(tokens))
        print(f"| {label} | {tokens[0]:,} | {sum(tokens[1:]):,} | {once:,} | {billed:,} | "
              f"{once / SEVEX:.1f}x | {once / SKETCHPAD:.2f}x |")


if __name__ == "__main__":
    main()

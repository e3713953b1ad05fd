"""Input tokens of a whole 10-round Task II sample, per vendor: today's requests against elision and caching.

The sample is built for real: a synthetic 1024x768 original, ten tool images the size the core tools make, the real
Task II system prompt and the real tool schemas (in-process server), and ~150 tokens of model/tool text per round.
Each of the 11 requests is prepared by the backends' own code (`backends.model_images.prepare_messages`); image
tokens come from each vendor's published formula for the size actually sent, text tokens are characters / 4.

- "today": every request re-sends every image (no elision, no caching): the state before issue 12.
- "K=n, no cache": images older than the last n rounds become a stub, nothing cached.
- "K=n + cache": the same, and the stable prefix (system, tools, first user turn with the original) is cached from
  the second request on: Claude by cache_control, OpenAI and Gemini automatically.
  Cached tokens are counted at the vendor's cache-read price ratio (the first write at Claude's 1.25x).

The last column checks that the synthetic images reached the model pixel-exact (lossless PNG, not downscaled).

The second table prices the same sample in USD under a model of each vendor's real prefix cache, for the two
choices a run has: the shipped K=2 elision, or every image kept with a rolling cache. Each request is a sequence of
blocks (system + tools, each message's text, each image as sent); the longest run of leading blocks it shares with
the previous request is read from the cache, the rest is new:

- Anthropic, K=2: the explicit breakpoints (end of system, tools, first user turn) are the only cache entries, so
  only that stable prefix is read; the rest is fresh input; the first request writes the prefix at 1.25x.
- Anthropic, rolling (top-level `cache_control`): the breakpoint moves to each request's last block, so the whole
  previous request is read and everything after it is written at the cache-write price.
- OpenAI and Gemini (automatic prefix caching, OpenAI routed by `prompt_cache_key`): the shared prefix (OpenAI in
  128-token steps past the first 1,024) is read; the rest is written at the model's cache-write price where the
  catalogue has one (OpenAI's `cache_write_tokens`), else billed as plain input (Gemini's implicit cache).

Output is the per-round reasoning and call text (`ROUND_TEXT / 2` characters, /4) plus a 40-token answer; thinking
tokens are left out (they are the same under both choices). Prices are the catalogue's (`--service-tier flex` or
`batch` where the vendor has it); the DataCV column is the 630 + 755 items of its two tasks at 10 rounds each.

    python bench/image_tokens.py
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agents"))

from trompe_agents.backends.catalogue import (ANTHROPIC_IMAGES, DEFAULT_KEEP_ROUNDS, GEMINI_IMAGES,  # noqa: E402
                                              OPENAI_IMAGES, lookup)
from trompe_agents.illusion.pricing import price_table  # noqa: E402
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall  # noqa: E402
from trompe_agents.backends.model_images import ImagePolicy, prepare_messages  # noqa: E402

ORIGINAL = (1024, 768)
TOOL_IMAGES = [(1024, 768), (1024, 768), (512, 384), (512, 384), (520, 272), (1024, 768), (512, 512), (1024, 768),
               (780, 272), (1024, 768)]
ROUND_TEXT = 600  # characters of reasoning, call and result text per round (~150 tokens)
SKETCHPAD, SEVEX = 15_621, 1_375  # the SEVEX paper's per-sample totals, text included
ANSWER_TOKENS = 40  # the final JSON answer
DATACV_ITEMS = 630 + 755  # DataCV's two tasks


def fit(w: float, h: float, side: float = math.inf, pixels: float = math.inf) -> tuple[float, float]:
    scale = min(1.0, side / max(w, h), math.sqrt(pixels / (w * h)))
    return w * scale, h * scale


def anthropic(w: int, h: int) -> int:
    w, h = fit(w, h, 1568, 1_150_000)
    return math.ceil(w * h / 750)


def openai_patches(w: int, h: int) -> int:
    patches = math.ceil(w / 32) * math.ceil(h / 32)
    if patches > 1536:
        w, h = fit(w, h, pixels=1536 * 32 * 32)
        patches = min(1536, math.ceil(w / 32) * math.ceil(h / 32))
    return math.ceil(patches * 1.62)


def gemini3(w: int, h: int) -> int:
    return 1120  # media_resolution HIGH, the image default


VENDORS: list[tuple[str, str, Callable[[int, int], int], object]] = [
    ("Anthropic claude-sonnet-5-5", "claude-sonnet-5-5", anthropic, ANTHROPIC_IMAGES),
    ("OpenAI gpt-6.1-terra (32-px patches x1.62)", "gpt-6.1-terra", openai_patches, OPENAI_IMAGES),
    ("Gemini gemini-3.1-pro-preview (1120 per image)", "gemini-3.1-pro-preview", gemini3, GEMINI_IMAGES),
]
# (vendor, model, tier, image tokens, limits) for the cost table: each backend's default model, Flex / Batch where
# offered
PRICED: list[tuple[str, str, str, Callable[[int, int], int], object]] = [
    ("anthropic", "claude-sonnet-5-5", "standard", anthropic, ANTHROPIC_IMAGES),
    ("anthropic", "claude-sonnet-5-5", "batch", anthropic, ANTHROPIC_IMAGES),
    ("anthropic", "claude-haiku-5-5", "standard", anthropic, ANTHROPIC_IMAGES),
    ("openai", "gpt-6.1-terra", "standard", openai_patches, OPENAI_IMAGES),
    ("openai", "gpt-6.1-terra", "flex", openai_patches, OPENAI_IMAGES),
    ("gemini", "gemini-3.8-flash", "standard", gemini3, GEMINI_IMAGES),
    ("gemini", "gemini-3.8-flash", "flex", gemini3, GEMINI_IMAGES),
]


def synthetic(w: int, h: int, seed: int) -> bytes:
    """A few-colour drawing like the illusion probes: flat fills, lines and circles."""
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", (w, h), (235, 235, 235))
    draw = ImageDraw.Draw(im)
    for _ in range(12):
        x0, y0 = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        draw.rectangle([x0, y0, x0 + int(rng.integers(10, w // 3)), y0 + int(rng.integers(10, h // 3))], fill=colour)
        draw.line([0, y0, w, y0], fill=(255, 0, 0), width=3)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


async def text_prefix() -> int:
    """Characters of the real Task II system prompt and the real tool schemas the model is offered."""
    from trompe_agents.illusion.prompts import Prompts
    from trompe_agents.toolclient import ToolClient

    async with ToolClient.in_process() as tools:
        schemas = await tools.list_tools()
    system = Prompts().system(2)
    return len(system) + len(json.dumps([vars(s) for s in schemas]))


def history(images: list[bytes]) -> list[list[Message]]:
    """The message list of each of the 11 requests of a 10-round sample."""
    messages = [Message("system", [TextPart("(system)")]),
                Message("user", [TextPart("(question)"), ImagePart("original", images[0])])]
    requests = [list(messages)]
    for n, data in enumerate(images[1:], start=1):
        messages.append(Message("assistant", [TextPart("x" * (ROUND_TEXT // 2))],
                                [ToolCall(f"c{n}", "draw_line", {})]))
        messages.append(Message("tool", [TextPart("y" * (ROUND_TEXT // 2)), ImagePart(f"img_{n:03d}", data)],
                                tool_call_id=f"c{n}", tool_name="draw_line"))
        requests.append(list(messages))
    return requests


def sample_tokens(requests: list[list[Message]], prefix_chars: int, cost: Callable[[int, int], int], limits,
                  keep: int | None, cache_read: float = 1.0, cache_write: float = 1.0) -> tuple[float, bool]:
    """Effective input tokens of the whole sample, and whether every synthetic image arrived pixel-exact."""
    total, exact = 0.0, True
    for n, messages in enumerate(requests):
        sent, _ = prepare_messages(messages, ImagePolicy(limits, "auto", keep))
        images = [p for m in sent for p in m.images]
        for part, original in zip(images, (p for m in messages for p in m.images if p.id in {i.id for i in images})):
            exact &= part.data == original.data
        sizes = [Image.open(io.BytesIO(p.data)).size for p in images]
        prefix = prefix_chars / 4 + cost(*sizes[0])
        rest = sum(cost(*s) for s in sizes[1:]) + n * ROUND_TEXT / 4
        total += prefix * (cache_write if n == 0 else cache_read) + rest
    return total, exact


Block = tuple[str, float]  # (what the block holds, its tokens)


def blocks(sent: list[Message], prefix_chars: int, cost: Callable[[int, int], int]) -> list[Block]:
    """A prepared request as the cache sees it: the system prompt and tools, then each message's text and images."""
    out: list[Block] = [("system+tools", prefix_chars / 4)]
    for n, message in enumerate(sent[1:]):
        for part in message.parts:
            if isinstance(part, ImagePart):
                out.append((hashlib.sha256(part.data).hexdigest(), cost(*Image.open(io.BytesIO(part.data)).size)))
            else:
                out.append((f"{n}:{part.text}", len(part.text) / 4))
    return out


def shared(a: list[Block], b: list[Block]) -> float:
    """Tokens of the longest run of leading blocks two requests have in common."""
    total = 0.0
    for x, y in zip(a, b):
        if x != y:
            break
        total += x[1]
    return total


def billed(requests: list[list[Message]], prefix_chars: int, vendor: str, cost: Callable[[int, int], int], limits,
           keep: int | None) -> tuple[float, float, float, float]:
    """(fresh input, cache read, cache write, output) tokens of one sample under the vendor's prefix cache."""
    fresh = read = write = 0.0
    previous: list[Block] = []
    for n, messages in enumerate(requests):
        sent, _ = prepare_messages(messages, ImagePolicy(limits, "auto", keep))
        now = blocks(sent, prefix_chars, cost)
        size = sum(t for _, t in now)
        if vendor == "anthropic" and keep is not None:  # explicit breakpoints: only the stable prefix is an entry
            stable = sum(t for _, t in now[:len(blocks(sent[:2], prefix_chars, cost))])
            hit = stable if n else 0.0
            fresh += size - stable
            read, write = read + hit, write + (stable - hit)
            previous = now
            continue
        hit = shared(previous, now)
        if vendor == "openai":  # cached in 128-token steps past the first 1,024
            hit = 0.0 if hit < 1024 else 1024 + (hit - 1024) // 128 * 128
        read += hit
        write += size - hit  # Anthropic rolling and OpenAI: written; Gemini: priced as plain input below
        previous = now
    output = (len(requests) - 1) * ROUND_TEXT / 8 + ANSWER_TOKENS
    return fresh, read, write, output


def dollars(tokens: tuple[float, float, float, float], model: str, tier: str) -> float:
    """USD of one sample's tokens at the catalogue's price for the tier (no cache-write price: plain input)."""
    price = price_table(tier)[model]
    fresh, read, write, output = tokens
    write_price = price.cache_write if price.cache_write is not None else price.input
    return (fresh * price.input + read * price.cache_read + write * write_price + output * price.output) / 1e6


def cost_table(requests: list[list[Message]], prefix_chars: int) -> None:
    """USD per sample and per DataCV run: K=2 elision against every image kept with a rolling cache."""
    k = DEFAULT_KEEP_ROUNDS
    print(f"\n| vendor | model (tier) | K={k} elision, $/sample | rolling cache, all images, $/sample "
          f"| rolling / elision | DataCV {DATACV_ITEMS:,} items, K={k} | DataCV, rolling |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for vendor, model, tier, cost, limits in PRICED:
        elided = dollars(billed(requests, prefix_chars, vendor, cost, limits, DEFAULT_KEEP_ROUNDS), model, tier)
        rolling = dollars(billed(requests, prefix_chars, vendor, cost, limits, None), model, tier)
        print(f"| {vendor} | {model} ({tier}) | {elided:.4f} | {rolling:.4f} | {rolling / elided:.2f}x | "
              f"${elided * DATACV_ITEMS:,.2f} | ${rolling * DATACV_ITEMS:,.2f} |")


def main() -> None:
    prefix_chars = asyncio.run(text_prefix())
    images = [synthetic(*ORIGINAL, 0)] + [synthetic(w, h, i + 1) for i, (w, h) in enumerate(TOOL_IMAGES)]
    requests = history(images)
    ks = [1, 2, 3]
    print(f"one Task II sample: {len(requests)} requests, original {ORIGINAL[0]}x{ORIGINAL[1]} + {len(TOOL_IMAGES)} "
          f"tool images; system prompt + tool schemas {prefix_chars:,} characters; default K={DEFAULT_KEEP_ROUNDS}\n")
    print(f"| vendor (model) | today (no elision, no cache) | K={DEFAULT_KEEP_ROUNDS}, no cache (x today) | "
          + " | ".join(f"K={k} + cache (x today)" for k in ks) + " | synthetic pixels exact |")
    print("|---|---:|---:|" + "---:|" * len(ks) + "---|")
    for label, model, cost, limits in VENDORS:
        price = lookup(model).price
        read = price.cache_read / price.input
        write = (price.cache_write or price.input) / price.input
        today, exact = sample_tokens(requests, prefix_chars, cost, limits, None)
        elided, _ = sample_tokens(requests, prefix_chars, cost, limits, DEFAULT_KEEP_ROUNDS)
        cells = [f"{elided:,.0f} ({elided / today:.2f}x)"]
        for k in ks:
            after, ok = sample_tokens(requests, prefix_chars, cost, limits, k, read, write)
            exact &= ok
            cells.append(f"{after:,.0f} ({after / today:.2f}x)")
        print(f"| {label} | {today:,.0f} | " + " | ".join(cells) + f" | {'yes' if exact else 'NO'} |")
    print(f"\nreference per-sample totals (SEVEX paper): SEVEX {SEVEX:,}, SketchPad {SKETCHPAD:,}")
    cost_table(requests, prefix_chars)


if __name__ == "__main__":
    main()

"""Images as models receive them: previews within each vendor's limits, the right encoding, old rounds elided."""

from __future__ import annotations

import base64
import functools
import io
import os
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from imagekit import gradient, png_bytes
from PIL import Image, ImageDraw
from test_vendor_roundtrip import backend_for
from trompe_agents.backends.catalogue import ANTHROPIC_IMAGES, GEMINI_IMAGES, OPENAI_IMAGES
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall
from trompe_agents.backends.model_images import (ImagePolicy, ImageTooLarge, encode_for_model, keep_rounds_option,
                                        prepare_messages)
from trompe_agents.testing import FakeVendor, final
from trompe_agents.trace import Trace


def drawing(width: int = 1024, height: int = 768) -> bytes:
    """A synthetic illusion-like picture: flat colours and lines, whose pixels must arrive exactly."""
    im = Image.new("RGB", (width, height), (240, 240, 240))
    draw = ImageDraw.Draw(im)
    draw.rectangle([100, 100, 400, 300], fill=(200, 30, 30))
    draw.line([0, 384, width, 384], fill=(0, 0, 255), width=3)
    return png_bytes(im)


@functools.cache
def photo(width: int, height: int, seed: int = 0) -> bytes:
    """A camera-like picture as a PNG: smooth light plus sensor noise (every pixel its own colour)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 200 / width, y * 200 / height, (x + y) * 100 / (width + height)], axis=-1)
    pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)  # what a quick PNG of a photo weighs
    return buf.getvalue()


def decoded(part: ImagePart) -> Image.Image:
    return Image.open(io.BytesIO(part.data))


@pytest.mark.parametrize("limits", [ANTHROPIC_IMAGES, OPENAI_IMAGES, GEMINI_IMAGES])
def test_a_synthetic_image_within_the_preview_size_goes_as_the_exact_same_png(limits):
    data = drawing()
    encoded = encode_for_model(ImagePart("original", data), limits)
    assert encoded.part.data == data and encoded.part.mime_type == "image/png" and encoded.note is None


def test_a_large_photograph_becomes_a_jpeg_preview_within_claudes_limits_and_says_so():
    data = photo(2400, 1800)
    assert len(data) > ANTHROPIC_IMAGES.max_bytes  # as a PNG it would be refused outright
    encoded = encode_for_model(ImagePart("original", data), ANTHROPIC_IMAGES)
    im = decoded(encoded.part)
    assert encoded.part.mime_type == "image/jpeg" and im.format == "JPEG"
    assert max(im.size) <= 1568 and im.width * im.height <= ANTHROPIC_IMAGES.max_pixels
    assert len(encoded.part.data) <= ANTHROPIC_IMAGES.max_bytes
    assert f"{im.width}x{im.height} preview of the full 2400x1800 image" in encoded.note
    assert "coordinates refer to the full-size image" in encoded.note


@pytest.mark.parametrize("fmt, mime", [("png", "image/png"), ("webp", "image/webp"), ("jpeg", "image/jpeg")])
def test_the_encoding_can_be_forced(fmt, mime):
    encoded = encode_for_model(ImagePart("img_001", photo(600, 400, 1)), OPENAI_IMAGES, fmt)
    assert encoded.part.mime_type == mime and decoded(encoded.part).size == (600, 400)


def test_an_image_that_cannot_fit_is_refused_in_one_line_naming_it():
    tiny = replace(ANTHROPIC_IMAGES, max_bytes=300)
    with pytest.raises(ImageTooLarge) as info:
        encode_for_model(ImagePart("img_007", photo(800, 600, 2)), tiny, "png")
    message = str(info.value)
    assert "\n" not in message and "img_007" in message and "per-image limit" in message


def history(rounds: int, image: bytes) -> list[Message]:
    """A question with the original, then `rounds` tool rounds that each returned one image."""
    messages = [Message("system", [TextPart("sys")]), Message("user", [TextPart("q"), ImagePart("original", image)])]
    for n in range(1, rounds + 1):
        messages.append(Message("assistant", [], [ToolCall(f"c{n}", "crop", {})]))
        messages.append(Message("tool", [TextPart(f"img_{n:03d}"), ImagePart(f"img_{n:03d}", image)],
                                tool_call_id=f"c{n}", tool_name="crop"))
    return messages


@settings(max_examples=30, deadline=None)
@given(rounds=st.integers(0, 12), keep=st.one_of(st.none(), st.integers(1, 6)))
def test_only_the_last_k_rounds_keep_their_images_and_the_rest_name_their_id(rounds, keep):
    image = png_bytes(gradient(16, 12))
    sent, notes = prepare_messages(history(rounds, image), ImagePolicy(ANTHROPIC_IMAGES, keep_rounds=keep))
    kept = [p.id for m in sent for p in m.images]
    expected = [f"img_{n:03d}" for n in range(1, rounds + 1) if keep is None or n > rounds - keep]
    assert kept == ["original", *expected]  # the question's own image is never dropped
    stubbed = sorted(set(f"img_{n:03d}" for n in range(1, rounds + 1)) - set(expected))
    assert sorted(notes["images_elided"]) == stubbed
    for image_id in stubbed:
        assert any(f"call view_image with image '{image_id}'" in m.text for m in sent)


def test_a_request_over_the_vendors_image_count_drops_the_oldest_tool_images():
    limits = replace(OPENAI_IMAGES, max_images=3)
    sent, notes = prepare_messages(history(5, png_bytes(gradient(16, 12))), ImagePolicy(limits, keep_rounds=None))
    assert [p.id for m in sent for p in m.images] == ["original", "img_004", "img_005"]
    assert notes["images_elided"] == ["img_001", "img_002", "img_003"]


def test_question_images_over_the_request_limit_are_refused_in_one_line():
    limits = replace(OPENAI_IMAGES, max_images=1)
    messages = [Message("user", [ImagePart("a", png_bytes(gradient(8, 8))), ImagePart("b", png_bytes(gradient(9, 9)))])]
    with pytest.raises(ImageTooLarge, match="the question's own images"):
        prepare_messages(messages, ImagePolicy(limits))


@pytest.mark.parametrize("raw, rounds", [("2", 2), ("all", None), ("10", 10)])
def test_keep_images_option_values(raw, rounds):
    assert keep_rounds_option(raw) == rounds


@pytest.mark.parametrize("raw", ["0", "-1", "two"])
def test_keep_images_option_rejects_what_is_not_a_round_count(raw):
    with pytest.raises(ValueError, match="whole number of rounds >= 1, or 'all'"):
        keep_rounds_option(raw)


async def test_claude_receives_a_photo_as_a_jpeg_preview_and_caches_the_stable_prefix():
    """Through the real anthropic SDK: the 2400x1800 photo goes as a JPEG of at most 1568 px, with the note."""
    messages = [Message("system", [TextPart("You inspect images.")]),
                Message("user", [TextPart("What is in the corner?"), ImagePart("original", photo(2400, 1800, 3))])]
    from trompe_agents.messages import ToolSchema

    crop = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {}})
    with FakeVendor("anthropic", [final("ok")]) as fake:
        async with backend_for("claude", fake, model="claude-sonnet-5-5") as backend:
            turn = await backend.complete(messages, [crop])
    body = fake.requests[0].json
    first = body["messages"][0]["content"]
    image = next(b for b in first if b["type"] == "image")
    assert image["source"]["media_type"] == "image/jpeg"
    data = base64.b64decode(image["source"]["data"])
    assert len(data) <= 5 * 2**20 and max(Image.open(io.BytesIO(data)).size) <= 1568
    assert any("preview of the full 2400x1800 image" in b.get("text", "") for b in first)
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first[-1]["cache_control"] == {"type": "ephemeral"}
    assert turn.sent["images"]["image_formats"] == ["jpeg"] and turn.sent["prompt_cache"] is True


def test_a_run_stores_each_distinct_image_once_and_every_trace_still_shows_it(tmp_path):
    store = tmp_path / "traces" / ".images"
    image = ImagePart("original", drawing(64, 48))
    for sample in ("s1", "s2", "s3"):
        Trace(tmp_path / "traces" / sample, store=store).message("main", Message("user", [TextPart("q"), image]))
    assert len(list(store.iterdir())) == 1
    for sample in ("s1", "s2", "s3"):
        shown = tmp_path / "traces" / sample / "images" / "original.png"
        assert shown.read_bytes() == image.data
    assert os.stat(store / next(store.iterdir()).name).st_nlink == 4  # one file, linked from three traces


def test_a_shortened_store_file_is_rewritten_whole(tmp_path):
    """A power cut after the rename can leave a short file under the content name: the next trace repairs it."""
    store = tmp_path / "traces" / ".images"
    image = ImagePart("original", drawing(64, 48))
    Trace(tmp_path / "traces" / "s1", store=store).message("main", Message("user", [TextPart("q"), image]))
    stored = next(store.iterdir())
    stored.write_bytes(image.data[:10])
    Trace(tmp_path / "traces" / "s2", store=store).message("main", Message("user", [TextPart("q"), image]))
    assert (tmp_path / "traces" / "s2" / "images" / "original.png").read_bytes() == image.data
    assert [p.name for p in store.iterdir()] == [stored.name]  # no temp file left beside it


def test_the_text_trace_shows_cache_tokens_and_the_images_not_re_sent(tmp_path):
    from trompe_agents.messages import Turn, Usage
    from trompe_agents.trace import render_text

    turn = Turn(Message("assistant", [TextPart("ok")]), Usage(5000, 100, cached_tokens=3000, cache_write_tokens=1500),
                "claude-sonnet-5-5", sent={"images": {"images_elided": ["img_001", "img_002"]}})
    Trace(tmp_path).assistant("main", turn, "claude", 1.0)
    text = render_text(tmp_path)
    assert "5000 in (3000 cached, 1500 written to cache) / 100 out" in text
    assert "images of earlier rounds not re-sent: img_001, img_002" in text

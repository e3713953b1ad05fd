"""A Redis registry stores each new image as the PNG its reply sends: encoded once, read back pixel for pixel."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import redis
from mcp import Client
from PIL import Image

from trompe_server import reply_png
from trompe_server.app import ServerConfig, create_app
from trompe_server.redis_storage import PREFIX, png_pixels

from imagekit import data_url, gradient, result_image


def see_through() -> Image.Image:
    """RGBA with every alpha level, so a lost or premultiplied channel shows."""
    rgba = np.dstack([np.asarray(gradient())] + [np.arange(64 * 48, dtype=np.uint8).reshape(48, 64)])
    return Image.fromarray(rgba, "RGBA")


def reply_bytes(result) -> bytes:
    return base64.b64decode(next(b for b in result.content if b.type == "image").data)


@pytest.mark.parametrize("im", [gradient(), see_through()], ids=["RGB", "RGBA"])
async def test_a_draws_reply_png_is_what_redis_keeps_made_once(redis_url, tmp_path, monkeypatch, im):
    made, encode = [], reply_png.encode_png
    monkeypatch.setattr(reply_png, "encode_png", lambda image: made.append(image.size) or encode(image))
    app = create_app(ServerConfig(roots=[tmp_path], registry=redis_url))
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(im)})).structured_content["session"]
        made.clear()
        drawn = await client.call_tool("draw_line", {"session": session, "image": "original", "start": [0, 0],
                                                     "end": [63, 47], "color": "#00ff0080"})
        assert not drawn.is_error, drawn.content[0].text
    app.registry.close()
    assert made == [im.size]  # the stored blob and the reply: one encoding
    r = redis.Redis.from_url(redis_url)
    digest = json.loads(r.hget(f"{PREFIX}:s:{session}:records", "img_001"))["digest"]
    assert r.get(f"{PREFIX}:px:{digest}") == reply_bytes(drawn)

    replica = create_app(ServerConfig(roots=[tmp_path], registry=redis_url))  # an empty cache: read from Redis
    async with Client(replica.mcp) as client:
        again = await client.call_tool("view_image", {"session": session, "image": "img_001"})
        original = await client.call_tool("view_image", {"session": session, "image": "original"})
    replica.registry.close()
    sent = result_image(drawn)
    assert sent.mode == im.mode and result_image(again).tobytes() == sent.tobytes()
    assert result_image(original).tobytes() == im.tobytes()


def test_only_what_the_encoder_writes_is_read_back():
    """A PNG with another row filter (Pillow's own) is refused, never turned into wrong pixels."""
    import io

    buffer = io.BytesIO()
    gradient().save(buffer, "PNG")
    with pytest.raises(ValueError, match="not Up-filtered"):
        png_pixels(48, buffer.getvalue())
    assert png_pixels(48, reply_png.encode_png(gradient())) == gradient().tobytes()

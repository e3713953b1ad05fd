"""Inputs: every accepted format keeps exact pixels; unsafe or broken sources are refused clearly."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import subprocess
import threading
import zlib

import numpy as np
import pytest
from PIL import Image

from imagekit import data_url, gradient, noise, png_bytes
from serverkit import SERVER, env_with, same_pixels
from trompe_server.limits import Limits


def near_greys(width: int = 32, height: int = 8) -> Image.Image:
    """Columns of grey 100 and 101 side by side: the kind of difference an illusion question hinges on."""
    arr = np.zeros((height, width, 3), np.uint8)
    arr[:, : width // 2] = 100
    arr[:, width // 2:] = 101
    return Image.fromarray(arr, "RGB")


def encode(im: Image.Image, fmt: str, **params) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt, **params)
    return buf.getvalue()


def as_data_url(raw: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(raw).decode()


async def roundtrip(client, source: str) -> Image.Image:
    """Open `source` and read it back through the PNG resource."""
    opened = await client.call_tool("open_session", {"source": source})
    assert not opened.is_error, opened.content[0].text
    session = opened.structured_content["session"]
    contents = await client.read_resource(f"image://{session}/original")
    return Image.open(io.BytesIO(base64.b64decode(contents.contents[0].blob)))


async def error_text(client, source: str) -> str:
    result = await client.call_tool("open_session", {"source": source})
    assert result.is_error
    return result.content[0].text


@pytest.mark.parametrize("fmt, params", [("PNG", {}), ("WEBP", {"lossless": True}), ("BMP", {}),
                                         ("TIFF", {}), ("GIF", {})])
async def test_lossless_formats_keep_one_grey_level(client, fmt, params):
    im = near_greys()
    back = await roundtrip(client, as_data_url(encode(im, fmt, **params)))
    assert same_pixels(back, im)
    assert back.getpixel((0, 0)) == (100, 100, 100) and back.getpixel((31, 0)) == (101, 101, 101)


async def test_jpeg_pixels_are_kept_exactly_as_decoded(client):
    raw = encode(gradient(), "JPEG", quality=90)
    back = await roundtrip(client, as_data_url(raw, "image/jpeg"))
    assert same_pixels(back, Image.open(io.BytesIO(raw)).convert("RGB"))


async def test_file_path_under_root(client, tmp_path):
    im = near_greys()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.png").write_bytes(png_bytes(im))
    assert same_pixels(await roundtrip(client, "sub/a.png"), im)
    assert same_pixels(await roundtrip(client, str(tmp_path / "sub" / "a.png")), im)


async def test_gif_first_frame(client):
    frames = [Image.new("RGB", (8, 8), colour) for colour in ("red", "blue")]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    assert (await roundtrip(client, as_data_url(buf.getvalue()))).getpixel((3, 3)) == (255, 0, 0)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
async def test_exif_orientation_is_applied(client, fmt):
    im = gradient(40, 20)
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    raw = encode(im, fmt, exif=exif, **({"quality": 100} if fmt == "JPEG" else {}))
    back = await roundtrip(client, as_data_url(raw))
    assert back.size == (20, 40)
    if fmt == "PNG":
        assert same_pixels(back, im.transpose(Image.Transpose.ROTATE_270))


async def test_palette_colours_are_exact(client):
    im = Image.new("P", (4, 1))
    im.putpalette([1, 2, 3, 250, 251, 252, 100, 101, 100, 0, 0, 0])
    im.putdata([0, 1, 2, 3])
    back = await roundtrip(client, as_data_url(encode(im, "PNG")))
    assert back.mode == "RGB"
    assert [back.getpixel((x, 0)) for x in range(4)] == [(1, 2, 3), (250, 251, 252), (100, 101, 100), (0, 0, 0)]


async def test_palette_transparency_becomes_alpha(client):
    im = Image.new("P", (2, 1))
    im.putpalette([10, 20, 30, 40, 50, 60])
    im.putdata([0, 1])
    back = await roundtrip(client, as_data_url(encode(im, "PNG", transparency=1)))
    assert back.mode == "RGBA" and [back.getpixel((x, 0)) for x in range(2)] == [(10, 20, 30, 255), (40, 50, 60, 0)]


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
async def test_sixteen_bit_grey_maps_to_the_same_eight_bit_levels(client, fmt):
    levels = np.arange(256, dtype=np.uint16).reshape(16, 16)
    im = Image.fromarray(levels * 257)
    assert im.mode == "I;16"
    back = await roundtrip(client, as_data_url(encode(im, fmt)))
    assert np.array_equal(np.asarray(back)[..., 0], levels.astype(np.uint8))


async def test_grey_with_alpha_keeps_grey_and_alpha(client):
    im = Image.merge("LA", [Image.new("L", (2, 1), 101), Image.frombytes("L", (2, 1), bytes([255, 7]))])
    back = await roundtrip(client, as_data_url(encode(im, "PNG")))
    assert back.mode == "RGBA" and [back.getpixel((x, 0)) for x in range(2)] == [(101, 101, 101, 255),
                                                                                 (101, 101, 101, 7)]


async def test_opaque_alpha_becomes_rgb(client):
    back = await roundtrip(client, as_data_url(encode(gradient().convert("RGBA"), "PNG")))
    assert back.mode == "RGB" and same_pixels(back, gradient())


# refusals -------------------------------------------------------------------------------------------

def png_declaring(width: int, height: int) -> bytes:
    """A few hundred bytes of PNG that claim width x height pixels: a decompression bomb."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 4096))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("width, height, message", [
    (100_000, 100_000, "decompression bomb"),
    (10_000, 10_000, "10000x10000 = 100000000 pixels, over the 50000000 pixel limit (max_pixels)"),
])
async def test_decompression_bombs_are_refused_before_decoding(client, width, height, message):
    raw = png_declaring(width, height)
    assert len(raw) < 500
    assert message in await error_text(client, as_data_url(raw))


async def test_truncated_file_is_refused(client, tmp_path):
    raw = png_bytes(gradient(200, 200))
    (tmp_path / "cut.png").write_bytes(raw[: len(raw) // 2])
    assert "truncated or corrupt" in await error_text(client, "cut.png")


async def test_non_image_bytes_are_refused(client, tmp_path):
    (tmp_path / "notes.png").write_text("this is not an image\n" * 10)
    text = await error_text(client, "notes.png")
    assert "source: not a readable image; accepted formats: PNG, JPEG, WEBP, BMP, GIF, TIFF" in text
    assert "not a readable image" in await error_text(client, as_data_url(b"%PDF-1.4 hello"))


async def test_path_outside_roots_is_refused(client, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.png"
    outside.write_bytes(png_bytes(gradient()))
    try:
        for source in (str(outside), f"../{outside.name}", "/etc/passwd"):
            text = await error_text(client, source)
            assert "is outside the allowed roots" in text and "--root" in text
    finally:
        outside.unlink()


async def test_symlink_leading_out_of_root_is_refused(client, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-target.png"
    outside.write_bytes(png_bytes(gradient()))
    try:
        os.symlink(outside, tmp_path / "link.png")
        assert "is outside the allowed roots" in await error_text(client, "link.png")
    finally:
        outside.unlink()


async def test_symlink_inside_root_is_followed(client, tmp_path):
    (tmp_path / "real.png").write_bytes(png_bytes(gradient()))
    os.symlink(tmp_path / "real.png", tmp_path / "alias.png")
    assert same_pixels(await roundtrip(client, "alias.png"), gradient())


async def test_missing_file_is_named(client):
    assert "no such file: 'nope.png'" in await error_text(client, "nope.png")


async def test_inline_and_file_size_caps(make_app, tmp_path):
    from mcp import Client

    app = make_app(Limits(max_source_bytes=2000))
    big = png_bytes(noise((60, 60), seed=0))
    (tmp_path / "big.png").write_bytes(big)
    async with Client(app.mcp) as client:
        for source in (as_data_url(big), base64.b64encode(big).decode(), "big.png"):
            text = await error_text(client, source)
            assert "over the 2000 byte limit (max_source_bytes)" in text
        assert not (await client.call_tool("open_session", {"source": data_url(gradient(8, 8))})).is_error


async def test_bare_base64_is_accepted(client):
    im = gradient(100, 30)
    assert same_pixels(await roundtrip(client, base64.b64encode(png_bytes(im)).decode()), im)


async def test_data_url_must_be_base64(client):
    assert "must be base64-encoded" in await error_text(client, "data:image/png,abc")


async def test_failed_add_image_leaves_session_unchanged(client, open_image, tmp_path):
    session = await open_image()
    before = (await client.call_tool("list_images", {"session": session})).structured_content
    for source in (as_data_url(png_declaring(100_000, 100_000)), "missing.png", as_data_url(b"junk" * 50)):
        result = await client.call_tool("add_image", {"session": session, "source": source, "name": "extra"})
        assert result.is_error
    assert (await client.call_tool("list_images", {"session": session})).structured_content == before


async def test_truncated_jpeg_with_an_end_marker_is_refused(client):
    """Pillow fills a scan cut short (then closed with an end marker) with grey and reports nothing."""
    rng = np.random.default_rng(0)
    whole = encode(Image.fromarray(rng.integers(0, 255, (70, 70, 3), dtype=np.uint8)).resize((7000, 7000)), "JPEG")
    text = await error_text(client, as_data_url(whole[:631] + b"\xff\xd9", "image/jpeg"))
    assert "source: image data is truncated or corrupt (Corrupt JPEG data" in text


async def test_nul_byte_in_a_path_is_named(client):
    text = await error_text(client, "photo\x00.png")
    assert "source: contains a NUL character; accepted: a file path under the roots" in text


def test_a_path_swapped_for_a_link_never_reads_the_outside_file(tmp_path):
    """A symlink swapped in between the check and the open must not be followed (the filer saw 70 in 5,106)."""
    from trompe_server.errors import ToolInputError
    from trompe_server.imageio import read_source

    root, outside = tmp_path / "root", tmp_path / "secret.png"
    root.mkdir()
    outside.write_bytes(b"outside " * 64)
    inside = root / "real.png"
    inside.write_bytes(b"inside " * 64)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for make in (lambda p: os.symlink(outside, p), lambda p: os.link(inside, p)):
                make(root / "next")
                os.replace(root / "next", root / "swap.png")

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        read = []
        for _ in range(3000):
            try:
                read.append(read_source("swap.png", [root], 1 << 20))
            except ToolInputError:
                pass
    finally:
        stop.set()
        swapper.join()
    assert read and all(data == inside.read_bytes() for data in read)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e309"])
def test_non_finite_numbers_on_the_wire_are_argument_errors(tmp_path, value):
    """JSON parsers accept NaN and Infinity and read 1e309 as infinity; the box must be refused by name."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                 "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    wire = "\n".join(json.dumps(line) for line in lines) + "\n"
    call = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crop", "arguments": '
            '{"session": "s_x", "image": "original", "box": [0, 0, ' + value + ', 5]}}}\n')
    proc = subprocess.Popen([SERVER, "--root", str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env_with())
    proc.stdin.write(wire + call)  # stdin stays open until the reply: at end of input the server stops at once
    proc.stdin.flush()
    replies = iter(proc.stdout.readline, "")
    result = next(r["result"] for r in map(json.loads, replies) if r.get("id") == 2)
    proc.stdin.close()
    proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert result["isError"]
    assert "box[2]:" in result["content"][0]["text"] and "is not a finite number; accepted: a list of 4 numbers" \
        in result["content"][0]["text"]
    assert "Traceback" not in err


async def test_huge_rgb_components_are_argument_errors(client, open_image):
    session = await open_image()
    result = await client.call_tool("draw_rectangle", {"session": session, "image": "original", "box": [1, 1, 9, 9],
                                                       "color": "rgb(99999999999999999999,0,0)"})
    assert result.is_error
    assert "color: 'rgb(99999999999999999999,0,0)' has a component outside 0 to 255" in result.content[0].text


@pytest.mark.parametrize("arguments, message", [
    ({"box": [1, 2, 3]}, "box: has 3 items, needs at least 4 items; accepted: a list of 4 numbers ([x0, y0, x1, y1]"),
    ({"box": "wide"}, "box: 'wide' is not a list; accepted: a list of 4 numbers"),
    ({"box": [0, 0, 9, 9], "zoom": "big"}, "zoom: 'big' is not a number; accepted: a number (enlargement factor"),
    ({}, "box: missing; accepted: a list of 4 numbers"),
])
async def test_schema_errors_name_the_argument_and_what_is_accepted(client, open_image, arguments, message):
    session = await open_image()
    result = await client.call_tool("crop", {"session": session, "image": "original", **arguments})
    text = result.content[0].text
    assert result.is_error and message in text, text
    assert "pydantic" not in text and "\n" not in text

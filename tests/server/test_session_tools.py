"""Session tools, the image resource and the shape of tool results, through the official MCP client."""

from __future__ import annotations

import base64
import io
import json
import re
import time

import pytest
from mcp import Client, MCPError
from PIL import Image

import trompe_server
from imagekit import data_url, gradient, result_image
from serverkit import same_pixels


def resource_image(contents) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(contents.contents[0].blob)))


async def test_open_session_returns_ids_and_size(client):
    result = await client.call_tool("open_session", {"source": data_url(gradient(64, 48))})
    meta = result.structured_content
    assert not result.is_error
    assert meta["image"] == "original" and (meta["width"], meta["height"]) == (64, 48)
    assert meta["session"].startswith("s_") and len(meta["session"]) > 20
    assert meta["session"] in result.content[0].text


async def test_session_ids_are_unguessable_and_distinct(client, open_image):
    ids = {await open_image() for _ in range(5)}
    assert len(ids) == 5
    assert all(re.fullmatch(r"s_[A-Za-z0-9_-]{24,}", i) for i in ids)  # 18 random bytes or more


async def test_add_list_view_close(client, open_image):
    started = time.time()
    session = await open_image(name="image_1")
    added = await client.call_tool("add_image", {"session": session, "source": data_url(gradient(10, 20)),
                                                 "name": "image_2"})
    assert added.structured_content == {"session": session, "image": "image_2", "width": 10, "height": 20}
    cropped = await client.call_tool("crop", {"session": session, "image": "image_2", "box": [0, 0, 5, 5]})
    assert cropped.structured_content["image"] == "img_001"

    listing = await client.call_tool("list_images", {"session": session})
    images = {i["id"]: i for i in listing.structured_content["images"]}
    assert list(images) == ["image_1", "image_2", "img_001"]
    assert images["img_001"]["operation"] == "crop"
    source = data_url(gradient(10, 20))
    assert images["image_2"]["operation"] == "input" and images["image_2"]["parents"] == []
    assert images["image_2"]["arguments"] == {"source": f"<inline image, {len(source)} characters>"}
    assert images["img_001"]["parents"] == ["image_2"]
    assert images["img_001"]["arguments"] == {"image": "image_2", "box": [0, 0, 5, 5], "zoom": 1}
    assert started <= images["image_1"]["created"] <= images["img_001"]["created"] <= time.time()  # when made
    compared = await client.call_tool("compare_crops", {"session": session, "crops": [
        {"image": "image_1", "box": [0, 0, 5, 5]}, {"image": "img_001", "box": [0, 0, 5, 5]}]})
    assert not compared.is_error, compared.content[0].text
    listing = await client.call_tool("list_images", {"session": session})
    assert listing.content[0].text.split("\n")[:3] == ["image_1 64x48 input", "image_2 10x20 input",
                                                       "img_001 5x5 crop of image_2"]
    assert listing.content[0].text.split("\n")[3].endswith(" compare_crops of image_1, img_001")
    assert len(listing.content[0].text.split("\n")) == 4

    viewed = await client.call_tool("view_image", {"session": session, "image": "image_2"})
    assert viewed.structured_content["created"] is False
    assert viewed.content[0].text == "image_2 10x20: view of input image"
    assert same_pixels(result_image(viewed), gradient(10, 20))

    closed = await client.call_tool("close_session", {"session": session})
    assert "4 images freed" in closed.content[0].text
    again = await client.call_tool("list_images", {"session": session})
    assert again.is_error and "unknown, closed or expired session" in again.content[0].text


async def test_tool_result_has_text_png_link_and_metadata(client, open_image):
    session = await open_image()
    result = await client.call_tool("crop", {"session": session, "image": "original", "box": [4, 4, 20, 12]})
    text, image, link = result.content
    assert (text.type, image.type, link.type) == ("text", "image", "resource_link")
    assert text.text.startswith("img_001 16x8: crop [4, 4, 20, 12] of original")
    assert image.mime_type == "image/png" and link.uri == f"image://{session}/img_001"
    assert result.structured_content == {"image": "img_001", "created": True, "width": 16, "height": 8,
                                         "parents": ["original"], "preview": None, "data": None}
    assert same_pixels(result_image(result), gradient().crop((4, 4, 20, 12)))


async def test_structured_content_never_carries_base64(client, open_image):
    """Clients may echo structured content as text: it must stay small metadata, inline sources included."""
    big = gradient(300, 200)
    session = await open_image(big)
    await client.call_tool("add_image", {"session": session, "source": data_url(big), "name": "copy"})
    results = [await client.call_tool("crop", {"session": session, "image": "copy", "box": [0, 0, 200, 100]}),
               await client.call_tool("view_image", {"session": session, "image": "original"}),
               await client.call_tool("list_images", {"session": session})]
    for result in results:
        dumped = json.dumps(result.structured_content)
        assert len(dumped) < 2000 and "base64" not in dumped and "iVBOR" not in dumped
    assert "<inline image," in json.dumps(results[-1].structured_content)


async def test_resource_returns_exact_png(client, open_image):
    im = gradient(40, 30)
    session = await open_image(im)
    contents = await client.read_resource(f"image://{session}/original")
    assert contents.contents[0].mime_type == "image/png"
    assert same_pixels(resource_image(contents), im)


@pytest.mark.parametrize("uri_tail, message", [
    ("img_009", "image: unknown image 'img_009'; this session has: original"),
    ("original", "session: unknown, closed or expired session 's_nope'")])
async def test_resource_unknown_ids_are_not_found(client, open_image, uri_tail, message):
    session = await open_image()
    target = f"image://{session}/{uri_tail}" if uri_tail != "original" else "image://s_nope/original"
    with pytest.raises(MCPError, match=message):
        await client.read_resource(target)


async def test_resource_template_is_listed(client):
    templates = (await client.list_resource_templates()).resource_templates
    assert [(t.uri_template, t.name, t.mime_type, t.description) for t in templates] == [
        ("image://{session}/{image}", "image", "image/png", "PNG bytes of an image in a session")]


async def test_a_client_is_told_the_server_s_name_version_and_how_its_images_work(client):
    """What initialize gives a client, and a desktop client passes to its model: the name it lists the server
    by, the installed version, and the instructions (sessions, immutable ids, pixel coordinates)."""
    assert (client.server_info.name, client.server_info.version) == ("trompe", trompe_server.__version__)
    assert all(words in client.instructions for words in (
        "open_session(source) loads an image as 'original'", "img_001, img_002", "Nothing is modified in place",
        "boxes are [x0, y0, x1, y1]"))


async def test_preview_only_above_max_preview_side(make_app):
    from trompe_server.limits import Limits

    app = make_app(Limits(max_preview_side=100))
    big = gradient(250, 120)
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(big)})
        session = opened.structured_content["session"]
        small = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 100, 60]})
        assert small.structured_content["preview"] is None and result_image(small).size == (100, 60)
        assert "preview" not in small.content[0].text

        large = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 250, 120]})
        assert result_image(large).size == (100, 48)
        assert large.structured_content["preview"] == [100, 48]
        assert large.structured_content["width"] == 250
        assert "preview downscaled to 100x48; full 250x120 kept as img_002" in large.content[0].text
        full = resource_image(await client.read_resource(f"image://{session}/img_002"))
        assert same_pixels(full, big)


async def test_default_preview_side_is_1568(client, open_image):
    session = await open_image(Image.new("RGB", (1600, 10), "white"))
    result = await client.call_tool("view_image", {"session": session, "image": "original"})
    assert result_image(result).width == 1568 and "preview downscaled to 1568x10" in result.content[0].text


@pytest.mark.parametrize("name", ["img_001", "1abc", "", "a/b", "x" * 65])
async def test_bad_input_names_are_refused(client, name):
    result = await client.call_tool("open_session", {"source": data_url(gradient()), "name": name})
    assert result.is_error
    assert result.content[0].text.endswith(f"name: {name!r} is not allowed; use 1-64 letters, digits, '_', '-' or "
                                           "'.', starting with a letter, and not img_NNN (reserved for tool outputs)")


async def test_duplicate_input_name_is_refused(client, open_image):
    session = await open_image()
    result = await client.call_tool("add_image", {"session": session, "source": data_url(gradient()),
                                                  "name": "original"})
    assert result.is_error and "name: 'original' already exists in this session" in result.content[0].text
    listing = await client.call_tool("list_images", {"session": session})
    assert [i["id"] for i in listing.structured_content["images"]] == ["original"]  # the first one is kept


async def test_unknown_image_error_lists_known_ids(client, open_image):
    session = await open_image()
    result = await client.call_tool("crop", {"session": session, "image": "img_007", "box": [0, 0, 4, 4]})
    assert result.is_error
    assert "image: unknown image 'img_007'; this session has: original" in result.content[0].text
    await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 4, 4]})
    result = await client.call_tool("crop", {"session": session, "image": "img_007", "box": [0, 0, 4, 4]})
    assert result.content[0].text.endswith("this session has: original, img_001")
    viewed = await client.call_tool("view_image", {"session": session, "image": "img_002"})
    assert viewed.is_error and "image: unknown image 'img_002'" in viewed.content[0].text


async def test_tools_carry_plugin_and_tags(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["crop"].meta["tags"] == ["core"] and tools["crop"].meta["plugin"] == "draw"
    assert tools["open_session"].meta["tags"] == ["session"]
    assert "session" in tools["crop"].input_schema["required"]
    assert tools["crop"].output_schema["properties"]["image"]["type"] == "string"

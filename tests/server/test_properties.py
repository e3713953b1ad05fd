"""Property: any chain of tool calls, failing ones included, never alters an earlier image, keeps ids
sequential and records complete lineage."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from PIL import Image

from imagekit import data_url, gradient
from liveclient import Live, live_client
from serverkit import ToolkitPlugin
from trompe_server.app import ServerConfig, create_app

fraction = st.floats(0, 1.2)
pick = st.integers(0, 1_000)
step = st.one_of(
    st.tuples(st.just("crop"), pick, st.tuples(fraction, fraction, fraction, fraction),
              st.sampled_from([1, 2, 9])),
    st.tuples(st.just("paint_line"), pick, st.tuples(fraction, fraction, fraction, fraction),
              st.sampled_from(["red", "#00ff0080", "not-a-colour"])),
    st.tuples(st.just("invert_colors"), pick),
    st.tuples(st.just("blend_images"), pick, pick),
    st.tuples(st.just("scribble_then_reject"), pick),
    st.tuples(st.just("add_image"), st.sampled_from(["second", "original", "third"])),
)


def arguments(step, ids: list[str], sizes: dict[str, tuple[int, int]]) -> dict:
    """Turn a drawn step into tool arguments, with coordinates relative to the chosen image."""
    kind, *rest = step
    if kind == "add_image":
        return {"source": data_url(gradient(30, 20)), "name": rest[0]}
    image = ids[rest[0] % len(ids)]
    w, h = sizes[image]
    if kind == "crop":
        (a, b, c, d), zoom = rest[1], rest[2]
        return {"image": image, "box": [round(a * w), round(b * h), round(c * w), round(d * h)], "zoom": zoom}
    if kind == "paint_line":
        (a, b, c, d), colour = rest[1], rest[2]
        return {"image": image, "start": [a * w, b * h], "end": [c * w, d * h], "color": colour}
    if kind == "blend_images":
        return {"image": image, "other": ids[rest[1] % len(ids)]}
    return {"image": image}


async def pixels(client: Client, session: str, image: str) -> bytes:
    blob = (await client.read_resource(f"image://{session}/{image}")).contents[0].blob
    im = Image.open(io.BytesIO(base64.b64decode(blob)))
    return im.mode.encode() + bytes(str(im.size), "ascii") + im.tobytes()


async def run_chain(client: Client, steps) -> None:
    """One chain in a session of its own: its ids, lineage and pixels cannot depend on earlier chains' sessions."""
    opened = await client.call_tool("open_session", {"source": data_url(gradient(48, 32))})
    session = opened.structured_content["session"]
    snapshot = {"original": await pixels(client, session, "original")}
    sizes = {"original": (48, 32)}
    outputs = 0
    for drawn in steps:
        args = arguments(drawn, list(snapshot), sizes)
        before = (await client.call_tool("list_images", {"session": session})).structured_content
        result = await client.call_tool(drawn[0], {"session": session, **args})
        after = (await client.call_tool("list_images", {"session": session})).structured_content
        if result.is_error:
            assert after == before, result.content[0].text
            continue
        new = result.structured_content["image"]
        if drawn[0] != "add_image":
            outputs += 1
            assert new == f"img_{outputs:03d}"
        assert new not in snapshot
        snapshot[new] = await pixels(client, session, new)
        sizes[new] = (result.structured_content["width"], result.structured_content["height"])
        for image, expected in snapshot.items():
            assert await pixels(client, session, image) == expected, f"{image} changed after {drawn[0]}"
        record = after["images"][-1]
        assert record["id"] == new
        if drawn[0] != "add_image":
            assert record["operation"] == drawn[0]
            assert {k: record["arguments"][k] for k in args} == args
    records = after["images"] if steps else []
    order = [r["id"] for r in records]
    for position, record in enumerate(records):
        assert all(order.index(p) < position for p in record["parents"]), record
        if record["id"].startswith("img_"):
            assert record["parents"], record
    assert [r["created"] for r in records] == sorted(r["created"] for r in records)


@pytest.fixture
def live() -> Iterator[Live]:
    """One app and client for all the chains: a new app and client per example took over half this test's time."""
    app = create_app(ServerConfig(extra_plugins={"testkit": ToolkitPlugin()}))
    try:
        with live_client(app) as live:
            yield live
    finally:
        app.registry.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=10))
def test_tool_chains_never_change_earlier_images(live, steps):
    live.run(lambda client: run_chain(client, steps))

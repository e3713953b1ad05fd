"""Properties over the whole argument space, invalid values included: a tool either refuses naming the argument
and the accepted range, or returns exactly the pixels the arguments ask for.

The image is wider than tall (48x32) on purpose: a check that compares a y coordinate with the width, or an x
with the height, accepts some boxes that lie outside the image, and a crop of those invents black rows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from imagekit import noise
from liveclient import Live, live_client
from toolcheck import result_image
from trompe_server import ToolInputError, parse_color

W, H = 48, 32
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])

coordinate = st.one_of(st.integers(-12, 60), st.floats(-12, 60, allow_nan=False))
nonfinite = st.sampled_from(["NaN", "nan", "inf", "-Infinity", "1e309", "-1e400"])  # the MCP client sends NaN as null
box = st.lists(coordinate, min_size=4, max_size=4)
line_end = st.tuples(*[st.one_of(st.integers(-60, 110), st.floats(-60, 110, allow_nan=False))] * 2)
box_with_nonfinite = st.tuples(box, st.integers(0, 3), nonfinite).map(lambda t: [*t[0][:t[1]], t[2], *t[0][t[1] + 1:]])


NOISE = np.asarray(noise((W, H)))  # the pixels every check compares with, built once


def in_image(b: list[float]) -> tuple[int, int, int, int] | None:
    """The pixel box the tools should accept (Python's round, as documented), or None."""
    x0, y0, x1, y1 = (round(v) for v in b)
    return (x0, y0, x1, y1) if 0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H else None


class Noisy(NamedTuple):
    """A session on the noise image, and the client kept open across a test's examples."""
    live: Live
    session: str


def call(noisy: Noisy, tool: str, **arguments):
    """Call a tool; a refused call must leave the session's images exactly as they were."""
    session = noisy.session

    async def scenario(client):
        before = await client.call_tool("list_images", {"session": session})
        result = await client.call_tool(tool, {"session": session, **arguments})
        if result.is_error:
            after = await client.call_tool("list_images", {"session": session})
            assert after.structured_content == before.structured_content, result.content[0].text
            original = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, W, H]})
            assert np.array_equal(np.asarray(result_image(original)), NOISE), "original changed"
        return result
    return noisy.live.run(scenario)


def numbers(values) -> str:
    """Coordinates as a refusal quotes them: as sent, without the '.0' of a whole number."""
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


def assert_refused(result, tool: str, line: str) -> None:
    assert result.is_error and result.content[0].text == f"Error executing tool {tool}: {line}", \
        result.content[0].text


def box_refusal(b: list[float]) -> str:
    """The one line a box outside the 48x32 image, or an empty or inverted one, is refused with."""
    x0, y0, x1, y1 = (round(v) for v in b)
    problem = "is empty or inverted" if x0 >= x1 or y0 >= y1 else f"is outside the {W}x{H} image"
    return f"box: {numbers(b)} {problem}; accepted: 0 <= x0 < x1 <= {W}, 0 <= y0 < y1 <= {H}"


@pytest.fixture
def noisy(make_app) -> Iterator[Noisy]:
    """A session on the noise image, with one client for all of a test's examples (see liveclient)."""
    with live_client(make_app()) as live:
        yield Noisy(live, live.open(noise((W, H))))


@SETTINGS
@given(b=box)
def test_crop_returns_exactly_the_box_or_refuses(noisy, b):
    result = call(noisy, "crop", image="original", box=b)
    expected = in_image(b)
    if expected is None:
        assert_refused(result, "crop", box_refusal(b))
        return
    assert not result.is_error, result.content[0].text
    x0, y0, x1, y1 = expected
    assert np.array_equal(np.asarray(result_image(result)), NOISE[y0:y1, x0:x1])


@SETTINGS
@given(b=box, fill=st.booleans())
def test_rectangle_marks_only_the_box_or_refuses(noisy, b, fill):
    arguments = {"fill": "#00ff00"} if fill else {}
    result = call(noisy, "draw_rectangle", image="original", box=b, color="#ff0000", width=1, **arguments)
    expected = in_image(b)
    if expected is None:
        assert_refused(result, "draw_rectangle", box_refusal(b))
        return
    assert not result.is_error, result.content[0].text
    x0, y0, x1, y1 = expected
    out, src = np.asarray(result_image(result)), NOISE
    outside = np.ones((H, W), bool)
    outside[y0:y1, x0:x1] = False
    assert np.array_equal(out[outside], src[outside]), "pixels outside the box changed"
    border = np.concatenate([out[y0, x0:x1], out[y1 - 1, x0:x1], out[y0:y1, x0], out[y0:y1, x1 - 1]])
    assert (border == [255, 0, 0]).all(), "the outline is not where the box says"


@SETTINGS
@given(start=line_end, end=line_end)
@example(start=(0, 81), end=(0, 0)).via("below the reach")
@example(start=(0, 0), end=(97, 0)).via("right of the reach")
@example(start=(0, -2), end=(-0.875, -0.875)).via("an end Pillow would truncate into column 0")
def test_line_changes_only_pixels_near_the_segment_or_refuses(noisy, start, end):
    """Ends may lie outside the image by up to its longer side (48), no further."""
    result = call(noisy, "draw_line", image="original", start=list(start), end=list(end), color="#ff0000",
                  width=1)
    beyond = [(name, p) for name, p in (("start", start), ("end", end))
              if not (-W <= p[0] <= 2 * W and -W <= p[1] <= H + W)]
    if beyond:
        name, p = beyond[0]
        assert_refused(result, "draw_line", f"{name}: {numbers(p)} is outside the {W}x{H} image; accepted: "
                                            f"-{W} <= x <= {2 * W}, -{W} <= y <= {H + W}")
        return
    if result.is_error:
        assert re.search(r"\b(end|start/end): .*accepted", result.content[0].text), result.content[0].text
        return
    out, src = np.asarray(result_image(result)), NOISE
    changed = np.argwhere((out != src).any(axis=2))
    (ax, ay), (bx, by) = start, end
    for y, x in changed:
        px, py = x + 0.5, y + 0.5
        length2 = (bx - ax) ** 2 + (by - ay) ** 2
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / length2))
        distance = math.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay)))
        # width 1: half a pixel of line, plus up to half a pixel's diagonal from each end to its pixel's centre
        assert distance <= 0.5 + math.sqrt(0.5), f"pixel ({x}, {y}) changed, {distance:.2f} px from the segment"
        assert tuple(out[y, x]) == (255, 0, 0)


@SETTINGS
@given(points=st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=4))
def test_points_read_the_pixel_they_name_or_are_refused_by_index(noisy, points):
    result = call(noisy, "sample_color", image="original", points=[list(p) for p in points])
    outside = [i for i, (x, y) in enumerate(points) if not (0 <= x <= W and 0 <= y <= H)]
    if outside:
        i = outside[0]
        assert_refused(result, "sample_color", f"points[{i}]: {numbers(points[i])} is outside the {W}x{H} image; "
                                               f"accepted: 0 <= x <= {W}, 0 <= y <= {H}")
        return
    assert not result.is_error, result.content[0].text
    for (x, y), sample in zip(points, result.structured_content["data"]["samples"], strict=True):
        px, py = min(int(x), W - 1), min(int(y), H - 1)  # the right and bottom edges read the last pixel
        assert sample["point"] == [px, py] and sample["rgb"] == NOISE[py, px].tolist()


@SETTINGS
@given(zoom=st.one_of(st.floats(-2, 12, allow_nan=False), st.integers(-2, 12), st.sampled_from([1, 8, 8.001])))
def test_zoom_enlarges_by_its_factor_or_is_refused_with_the_range(noisy, zoom):
    result = call(noisy, "crop", image="original", box=[4, 2, 14, 10], zoom=zoom)
    if not 1 <= zoom <= 8:
        assert_refused(result, "crop", f"zoom: {zoom:g} is out of range; accepted: 1 to 8")
        return
    out, part = np.asarray(result_image(result)), NOISE[2:10, 4:14]
    assert out.shape[:2] == (round(8 * zoom), round(10 * zoom))
    if zoom == int(zoom):  # each source pixel becomes a zoom x zoom block
        assert np.array_equal(out, part.repeat(int(zoom), axis=0).repeat(int(zoom), axis=1))
    assert {tuple(p) for p in out.reshape(-1, 3)} <= {tuple(p) for p in part.reshape(-1, 3)}, "invented colours"


@SETTINGS
@given(b=box_with_nonfinite)
def test_non_finite_coordinates_are_argument_errors(noisy, b):
    """Sent as text, they pass JSON and would reach the tool as NaN or infinity, where rounding them fails."""
    index = next(i for i, v in enumerate(b) if isinstance(v, str))
    for tool in ("crop", "draw_rectangle"):
        assert_refused(call(noisy, tool, image="original", box=b), tool,
                       f"box[{index}]: {b[index]} is not a finite number; accepted: a list of 4 numbers ([x0, y0, x1, "
                       "y1] in pixels of the referenced image, x0<x1, y0<y1)")


channel = st.integers(-300, 600)


@settings(max_examples=200, deadline=None)
@given(spec=st.one_of(
    st.text(max_size=24),
    st.tuples(channel, channel, channel).map(lambda c: f"rgb({c[0]}, {c[1]}, {c[2]})"),
    st.integers(0, 2**32 - 1).map(lambda v: f"#{v:08x}"),
    st.integers(0, 2**24 - 1).map(lambda v: f"#{v:06X}"),
    st.sampled_from(["red", "Navy", " white ", "transparent", "rgb(1e309, 0, 0)", "rgb(99999999999999999999,0,0)"]),
))
def test_colours_parse_to_valid_rgba_or_name_the_argument(spec):
    components = re.fullmatch(r"rgb\((-?\d+), (-?\d+), (-?\d+)\)", spec)
    try:
        rgba = parse_color(spec, "fill")
    except ToolInputError as exc:
        assert exc.argument == "fill"
        if components and all(int(c) >= 0 for c in components.groups()):
            assert str(exc) == f"fill: {spec!r} has a component outside 0 to 255; accepted: rgb(R, G, B) with " \
                               "each of R, G, B from 0 to 255, a name ('red') or hex ('#RRGGBB')"
        else:
            assert str(exc) in (f"fill: {spec!r} is not a colour; use a name ('red') or hex ('#RRGGBB' or "
                                "'#RRGGBBAA')", f"fill: {spec!r} has a component outside 0 to 255; accepted: rgb(R, "
                                "G, B) with each of R, G, B from 0 to 255, a name ('red') or hex ('#RRGGBB')")
        return
    assert len(rgba) == 4 and all(isinstance(v, int) and 0 <= v <= 255 for v in rgba), rgba
    if spec.startswith("#") and len(spec) in (7, 9):
        assert rgba == tuple(int(spec[i:i + 2], 16) for i in range(1, len(spec), 2)) + (255,) * (len(spec) == 7)
    if components:
        assert rgba == (*map(int, components.groups()), 255)
    if spec.strip().lower() == "white":
        assert rgba == (255, 255, 255, 255)


@pytest.mark.parametrize("spec, line", [
    (None, "color: None is not a colour; use a name ('red') or hex ('#RRGGBB' or '#RRGGBBAA')"),
    ("rgb(256, 0, 0)", "color: 'rgb(256, 0, 0)' has a component outside 0 to 255; accepted: rgb(R, G, B) with each "
                       "of R, G, B from 0 to 255, a name ('red') or hex ('#RRGGBB')"),
])
def test_a_plugin_colour_refusal_names_the_colour_argument_by_default(spec, line):
    """A plugin that calls parse_color(value) without an argument name, even on None, gets a refusal, not a crash."""
    with pytest.raises(ToolInputError) as refused:
        parse_color(spec)
    assert str(refused.value) == line


def test_colour_components_at_the_ends_of_the_range_are_kept():
    assert parse_color("rgb(0, 0, 0)") == (0, 0, 0, 255) and parse_color("rgb(255, 255, 255)") == (255,) * 4

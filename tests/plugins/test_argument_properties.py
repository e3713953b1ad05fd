"""Properties over the whole argument space, invalid values included: a tool either refuses naming the argument
and the accepted range, or returns exactly the pixels the arguments ask for.

The image is wider than tall (48x32) on purpose: a check that compares a y coordinate with the width, or an x
with the height, accepts some boxes that lie outside the image, and a crop of those invents black rows.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from toolcheck import in_memory, open_in, result_image
from trompe_server import ToolInputError, parse_color

W, H = 48, 32
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])

coordinate = st.one_of(st.integers(-12, 60), st.floats(-12, 60, allow_nan=False))
nonfinite = st.sampled_from([math.nan, math.inf, -math.inf])
box = st.lists(coordinate, min_size=4, max_size=4)
box_with_nonfinite = st.tuples(box, st.integers(0, 3), nonfinite).map(lambda t: [*t[0][:t[1]], t[2], *t[0][t[1] + 1:]])


def noise(seed: int = 7) -> Image.Image:
    """Every pixel random, so a crop from the wrong place or a filled-in row cannot pass by accident."""
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (H, W, 3), dtype=np.uint8))


def in_image(b: list[float]) -> tuple[int, int, int, int] | None:
    """The pixel box the tools should accept (Python's round, as documented), or None."""
    x0, y0, x1, y1 = (round(v) for v in b)
    return (x0, y0, x1, y1) if 0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H else None


def call(app, session: str, tool: str, **arguments):
    async def scenario(client):
        return await client.call_tool(tool, {"session": session, **arguments})
    return in_memory(app, scenario)


def assert_refused(result, argument: str) -> None:
    text = result.content[0].text
    assert result.is_error, text
    assert f"{argument}:" in text and "accepted" in text, text


@pytest.fixture
def noisy(make_app):
    app = make_app()
    return app, open_in(app, noise())


@SETTINGS
@given(b=box)
def test_crop_returns_exactly_the_box_or_refuses(noisy, b):
    app, session = noisy
    result = call(app, session, "crop", image="original", box=b)
    expected = in_image(b)
    if expected is None:
        assert_refused(result, "box")
        assert f"x1 <= {W}" in result.content[0].text and f"y1 <= {H}" in result.content[0].text
        return
    assert not result.is_error, result.content[0].text
    x0, y0, x1, y1 = expected
    assert np.array_equal(np.asarray(result_image(result)), np.asarray(noise())[y0:y1, x0:x1])


@SETTINGS
@given(b=box, fill=st.booleans())
def test_rectangle_marks_only_the_box_or_refuses(noisy, b, fill):
    app, session = noisy
    arguments = {"fill": "#00ff00"} if fill else {}
    result = call(app, session, "draw_rectangle", image="original", box=b, color="#ff0000", width=1, **arguments)
    expected = in_image(b)
    if expected is None:
        assert_refused(result, "box")
        return
    assert not result.is_error, result.content[0].text
    x0, y0, x1, y1 = expected
    out, src = np.asarray(result_image(result)), np.asarray(noise())
    outside = np.ones((H, W), bool)
    outside[y0:y1, x0:x1] = False
    assert np.array_equal(out[outside], src[outside]), "pixels outside the box changed"
    border = np.concatenate([out[y0, x0:x1], out[y1 - 1, x0:x1], out[y0:y1, x0], out[y0:y1, x1 - 1]])
    assert (border == [255, 0, 0]).all(), "the outline is not where the box says"


@SETTINGS
@given(start=st.tuples(coordinate, coordinate), end=st.tuples(coordinate, coordinate))
def test_line_changes_only_pixels_near_the_segment_or_refuses(noisy, start, end):
    app, session = noisy
    result = call(app, session, "draw_line", image="original", start=list(start), end=list(end), color="#ff0000",
                  width=1)
    if result.is_error:
        assert re.search(r"\b(start|end|line): .*accepted", result.content[0].text), result.content[0].text
        return
    out, src = np.asarray(result_image(result)), np.asarray(noise())
    changed = np.argwhere((out != src).any(axis=2))
    (ax, ay), (bx, by) = start, end
    for y, x in changed:
        px, py = x + 0.5, y + 0.5
        length2 = (bx - ax) ** 2 + (by - ay) ** 2
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / length2))
        distance = math.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay)))
        # width 1: half a pixel of line, plus up to a pixel's diagonal where the ends are rounded to the grid
        assert distance <= 0.5 + math.sqrt(2), f"pixel ({x}, {y}) changed, {distance:.2f} px from the segment"
        assert tuple(out[y, x]) == (255, 0, 0)


@SETTINGS
@given(b=box_with_nonfinite)
def test_non_finite_coordinates_are_argument_errors(noisy, b):
    app, session = noisy
    for tool in ("crop", "draw_rectangle"):
        result = call(app, session, tool, image="original", box=b)
        assert result.is_error
        assert "unexpected" not in result.content[0].text.lower(), result.content[0].text
        assert "box" in result.content[0].text, result.content[0].text


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
    try:
        rgba = parse_color(spec, "fill")
    except ToolInputError as exc:
        assert exc.argument == "fill" and str(exc).startswith("fill: "), str(exc)
        return
    assert len(rgba) == 4 and all(isinstance(v, int) and 0 <= v <= 255 for v in rgba), rgba
    if spec.startswith("#") and len(spec) == 7:
        assert rgba == (int(spec[1:3], 16), int(spec[3:5], 16), int(spec[5:7], 16), 255)

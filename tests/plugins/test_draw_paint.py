"""Marks drawn straight onto the copy (opaque) or through a region layer (see-through) give exactly the
pixels of the reference: the whole mark drawn on a transparent layer and alpha-composited over the image."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from toolcheck import gradient, in_memory, open_in, result_image
from trompe_server import parse_color as rgba

SIZE = (64, 48)
colour = st.sampled_from(["red", "#00ff0080", "#12345601", "white", "#0000ffc0"])
coord = st.floats(-40, 100, allow_nan=False).map(lambda v: round(v, 1))
point = st.tuples(coord, coord.map(lambda v: v * 0.75))


def pixel(point: tuple[float, float]) -> tuple[int, int]:
    """The pixel a point lies in (Pillow itself would truncate toward zero: column 0 for x = -0.9)."""
    return math.floor(point[0]), math.floor(point[1])


def reference(source: Image.Image, draw_mark) -> np.ndarray:
    """The mark on a transparent layer, composited once over the whole image (the former drawing path)."""
    layer = Image.new("RGBA", source.size, (0, 0, 0, 0))
    draw_mark(ImageDraw.Draw(layer))
    out = Image.alpha_composite(source.convert("RGBA"), layer)
    return np.asarray(out if source.mode == "RGBA" else out.convert("RGB"))


class Drawn:
    """One app with a session on an opaque and one on a see-through image, reused across examples."""

    def __init__(self, make_app):
        see_through = gradient(*SIZE).convert("RGBA")
        see_through.putalpha(Image.linear_gradient("L").resize(SIZE))
        self.app = make_app()
        self.sources = {"RGB": gradient(*SIZE), "RGBA": see_through}
        self.sessions = {mode: open_in(self.app, im) for mode, im in self.sources.items()}

    def check(self, tool: str, arguments: dict, draw_mark) -> None:
        """The tool's result equals the reference, or both refuse/draw nothing inside the image."""
        for mode, source in self.sources.items():
            request = {"session": self.sessions[mode], "image": "original", **arguments}

            async def scenario(client, request=request):
                return await client.call_tool(tool, request)

            result = in_memory(self.app, scenario)
            expected = reference(source, draw_mark)
            if result.is_error:  # refused only when the reference drew nothing inside the image either
                assert "entirely outside" in result.content[0].text, result.content[0].text
                assert (expected == np.asarray(source)).all()
                continue
            out = np.asarray(result_image(result))
            if out.shape[-1] == 3 < expected.shape[-1]:  # a mark that made every pixel opaque: stored as RGB
                assert (expected[..., 3] == 255).all()
                expected = expected[..., :3]
            assert out.shape == expected.shape and (out == expected).all(), (mode, arguments)


def test_lines_match_the_layer_reference(make_app):
    drawn = Drawn(make_app)

    @settings(max_examples=20, deadline=None)
    @given(start=point, end=point, width=st.integers(1, 9), color=colour)
    def lines(start, end, width, color):
        if start == end:
            return
        drawn.check("draw_line", {"start": start, "end": end, "width": width, "color": color},
                    lambda d: d.line([pixel(start), pixel(end)], fill=rgba(color), width=width))

    lines()


def test_rectangles_match_the_layer_reference(make_app):
    drawn = Drawn(make_app)
    corner = st.tuples(st.integers(0, 30), st.integers(0, 22))

    @settings(max_examples=20, deadline=None)
    @given(a=corner, b=st.tuples(st.integers(1, 34), st.integers(1, 26)), width=st.integers(1, 6), color=colour,
           fill=st.none() | colour)
    def rectangles(a, b, width, color, fill):
        box = [a[0], a[1], a[0] + b[0], a[1] + b[1]]
        arguments = {"box": box, "width": width, "color": color} | ({"fill": fill} if fill else {})
        corners = (box[0], box[1], box[2] - 1, box[3] - 1)

        def mark(d):  # an outline as wide as the box covers it all (and never spills past it)
            if min(b) <= 2 * width:
                d.rectangle(corners, fill=rgba(color))
            else:
                d.rectangle(corners, outline=rgba(color), width=width, fill=rgba(fill) if fill else None)

        drawn.check("draw_rectangle", arguments, mark)

    rectangles()


def test_circles_match_the_layer_reference(make_app):
    drawn = Drawn(make_app)

    @settings(max_examples=20, deadline=None)
    @given(center=st.tuples(st.integers(0, 64), st.integers(0, 48)), radius=st.integers(1, 64),
           width=st.integers(1, 6), color=colour, fill=st.none() | colour)
    def circles(center, radius, width, color, fill):
        cx, cy = center
        arguments = {"center": list(center), "radius": radius, "width": width, "color": color}
        drawn.check("draw_circle", arguments | ({"fill": fill} if fill else {}),
                    lambda d: d.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), outline=rgba(color),
                                        width=width, fill=rgba(fill) if fill else None))

    circles()

"""overlay_grid and sample_color draw their marks straight onto the copy (lines, rings) or blended over each
label's box only, and give exactly the pixels of the former path: every mark on one full-size transparent layer,
alpha-composited once over the image (kept below as the oracle), on RGB, RGBA and L inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from liveclient import Live, live_client
from toolcheck import gradient, result_image
from trompe_analysis.grid import cell_edges
from trompe_draw.marks import ink, label

COLOURS = ["red", "#00ff0080", "#12345601", "white", "#0000ffc0", "black"]


def composited(source: Image.Image, draw_marks) -> np.ndarray:
    """The former drawing path: all marks on a transparent layer, composited over the whole image once."""
    work = source.convert("RGBA" if source.mode == "RGBA" else "RGB")
    layer = Image.new("RGBA", work.size, (0, 0, 0, 0))
    draw_marks(ImageDraw.Draw(layer), work.size)
    out = Image.alpha_composite(work.convert("RGBA"), layer)
    return np.asarray(out if work.mode == "RGBA" else out.convert("RGB"))


def former_grid(rows: int, cols: int, color: str):
    """overlay_grid's marks as drawn before (the oracle)."""
    def draw(d: ImageDraw.ImageDraw, size: tuple[int, int]) -> None:
        rgba = ink(color)
        xs, ys = cell_edges(size[0], cols), cell_edges(size[1], rows)
        for x in xs[1:-1]:
            d.line([(x, 0), (x, size[1] - 1)], fill=rgba, width=1)
        for y in ys[1:-1]:
            d.line([(0, y), (size[0] - 1, y)], fill=rgba, width=1)
        text = max(8, min(16, (xs[1] - xs[0]) // 3, (ys[1] - ys[0]) // 2))
        for r in range(rows):
            for c in range(cols):
                label(d, (xs[c] + 2, ys[r] + 1), f"{chr(65 + c)}{r + 1}", text, rgba)
    return draw


def former_rings(points: list[tuple[int, int]], radius: float):
    """sample_color's rings and labels as drawn before (the oracle)."""
    def draw(d: ImageDraw.ImageDraw, size: tuple[int, int]) -> None:
        for i, (px, py) in enumerate(points):
            x, y = min(int(px), size[0] - 1), min(int(py), size[1] - 1)
            ring = radius + 3
            d.ellipse((x - ring - 1, y - ring - 1, x + ring + 1, y + ring + 1), outline=(0, 0, 0, 255), width=1)
            d.ellipse((x - ring, y - ring, x + ring, y + ring), outline=(255, 255, 255, 255), width=1)
            label(d, (x + ring + 3, y - ring - 3), chr(65 + i), 14)
    return draw


def sources(size: tuple[int, int]) -> dict[str, Image.Image]:
    """The three input modes: a colour gradient, it with a varying alpha, and its grey."""
    rgb = gradient(*size)
    see_through = rgb.convert("RGBA")
    see_through.putalpha(Image.linear_gradient("L").resize(size))
    return {"RGB": rgb, "RGBA": see_through, "L": rgb.convert("L")}


def check(live: Live, size: tuple[int, int], tool: str, arguments: dict, draw_marks) -> None:
    for mode, source in sources(size).items():
        session = live.open(source)

        async def scenario(client, session=session):
            return await client.call_tool(tool, {"session": session, "image": "original", **arguments})

        result = live.run(scenario)
        assert not result.is_error, result.content[0].text
        out, expected = np.asarray(result_image(result)), composited(source, draw_marks)
        if out.shape[-1] == 3 < expected.shape[-1]:  # marks that made every pixel opaque: stored as RGB
            assert (expected[..., 3] == 255).all()
            expected = expected[..., :3]
        assert out.shape == expected.shape, (mode, arguments)
        assert (out == expected).all(), (mode, arguments, int((out != expected).any(axis=-1).sum()))


def test_grid_matches_the_layer_oracle(make_app):
    @settings(max_examples=15, deadline=None)
    @given(size=st.tuples(st.integers(8, 90), st.integers(8, 70)), rows=st.integers(1, 6), cols=st.integers(1, 6),
           color=st.sampled_from(COLOURS))
    def grids(size, rows, cols, color):
        rows, cols = min(rows, size[1] // 4), min(cols, size[0] // 4)
        check(live, size, "overlay_grid", {"rows": rows, "cols": cols, "color": color},
              former_grid(rows, cols, color))

    with live_client(make_app()) as live:
        grids()


def test_sample_rings_match_the_layer_oracle(make_app):
    size = (70, 50)
    point = st.tuples(st.integers(0, size[0] - 1), st.integers(0, size[1] - 1))

    @settings(max_examples=15, deadline=None)
    @given(points=st.lists(point, min_size=1, max_size=4), radius=st.sampled_from([0, 0.5, 1, 2.5, 4, 7.25, 20]))
    def rings(points, radius):
        check(live, size, "sample_color", {"points": [list(p) for p in points], "radius": radius},
              former_rings(points, radius))

    with live_client(make_app()) as live:
        rings()


def test_dense_grid_with_overlapping_labels_matches_the_layer_oracle(make_app):
    """Cells of 4 pixels: every label runs over its neighbours' labels and several lines."""
    with live_client(make_app()) as live:
        for color in ("yellow", "#ff00ff80"):
            check(live, (104, 40), "overlay_grid", {"rows": 10, "cols": 26, "color": color},
                  former_grid(10, 26, color))


def test_a_ring_that_reaches_another_spots_label_from_the_left_matches_the_layer_oracle(make_app):
    """B's ring (fractional corners, drawn after A's label) runs into A's label box: redrawn on that box's layer,
    it must move by whole pixels exactly, which truncating its corners naively would break."""
    spots = [(30, 30), (40, 25)]
    with live_client(make_app()) as live:
        check(live, (70, 50), "sample_color", {"points": [list(p) for p in spots], "radius": 7.25},
              former_rings(spots, 7.25))

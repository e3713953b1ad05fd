"""draw_line, draw_rectangle, draw_circle, draw_text: exact marks, everything else untouched."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from toolcheck import call, gradient, in_memory, listing, open_in, pixels, refused, result_image

RED = (255, 0, 0)
SOURCE = np.asarray(gradient())  # 64x48, every pixel different


def changed(out: np.ndarray) -> np.ndarray:
    return (out[..., :3] != SOURCE).any(axis=-1)


async def test_horizontal_line_paints_exactly_its_rows(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "draw_line", image="original", start=[0, 10], end=[64, 10],
                             color="#00ff00", width=3)
    rows = np.nonzero(changed(out).any(axis=1))[0]
    assert rows.tolist() == [9, 10, 11]  # width 3 centred on row 10
    assert (out[9:12, :] == (0, 255, 0)).all()
    assert (out[:9] == SOURCE[:9]).all() and (out[12:] == SOURCE[12:]).all()
    assert meta["parents"] == ["original"] and meta["created"]


async def test_drawing_never_changes_the_source(client, open_image):
    session = await open_image()
    await call(client, session, "draw_line", image="original", start=[0, 0], end=[63, 47], width=10)
    again, _ = await pixels(client, session, "view_image", image="original")
    assert (again == SOURCE).all()


async def test_line_ends_may_lie_outside_and_are_clipped(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_line", image="original", start=[-30, 20], end=[90, 20], width=1)
    assert (out[20] == RED).all() and not changed(out)[np.arange(48) != 20].any()


async def test_see_through_colour_blends(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_line", image="original", start=[0, 5], end=[64, 5],
                          color="#0000ff80", width=1)
    alpha = 0x80 / 255
    expected = SOURCE[5] * (1 - alpha) + np.array([0, 0, 255]) * alpha
    assert np.abs(out[5].astype(float) - expected).max() <= 1
    assert not changed(out)[np.arange(48) != 5].any()


async def test_line_refusals_name_the_argument(client, open_image):
    session = await open_image()
    line = {"image": "original", "start": [0, 10], "end": [60, 10]}
    await refused(client, session, "draw_line", "image", "unknown image 'nope'", **(line | {"image": "nope"}))
    await refused(client, session, "draw_line", "color", "'#RRGGBB'", **line, color="reddish")
    await refused(client, session, "draw_line", "color", "alpha 01 to FF", **line, color="#ff000000")
    await refused(client, session, "draw_line", "width", "accepted: 1 to 50", **line, width=0)
    await refused(client, session, "draw_line", "width", "accepted: 1 to 50", **line, width=51)
    await refused(client, session, "draw_line", "start", "accepted: -64 <= x <= 128",
                  **(line | {"start": [-65, 10]}))
    await refused(client, session, "draw_line", "end", "different from start", **(line | {"end": [0, 10]}))
    await refused(client, session, "draw_line", "start/end", "entirely outside",
                  **(line | {"start": [-60, -40], "end": [-5, -2]}))


def test_any_line_stays_within_its_band(make_app):
    """Changed pixels are the line colour and lie within width/2 (+1 for rounding) of the segment's box."""
    app = make_app()
    session = open_in(app, gradient())
    coord = st.floats(-20, 84, allow_nan=False).map(lambda v: round(v, 1))

    @settings(max_examples=40, deadline=None)
    @given(start=st.tuples(coord, coord.map(lambda v: v * 0.75)), end=st.tuples(coord, coord.map(lambda v: v * 0.75)),
           width=st.integers(1, 8))
    def check(start, end, width):
        async def scenario(client):
            before = await listing(client, session)
            result = await client.call_tool("draw_line", {"session": session, "image": "original",
                                                          "start": start, "end": end, "color": "#123456",
                                                          "width": width})
            return result, before, await listing(client, session)

        result, before, after = in_memory(app, scenario)
        if result.is_error:  # a degenerate or fully outside line is refused and stores nothing
            assert "start" in result.content[0].text or "end" in result.content[0].text
            assert after == before
            return
        out = np.asarray(result_image(result))
        ys, xs = np.nonzero(changed(out))
        assert (out[ys, xs] == (0x12, 0x34, 0x56)).all()
        reach = width / 2 + 1
        assert (xs >= min(start[0], end[0]) - reach).all() and (xs <= max(start[0], end[0]) + reach).all()
        assert (ys >= min(start[1], end[1]) - reach).all() and (ys <= max(start[1], end[1]) + reach).all()

    check()


async def test_rectangle_outline_lies_inside_the_box(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_rectangle", image="original", box=[10, 5, 30, 25], width=3)
    mask = changed(out)
    ys, xs = np.nonzero(mask)
    assert (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1) == (10, 5, 30, 25)
    assert (out[mask] == RED).all()
    frame = np.zeros_like(mask)
    frame[5:25, 10:30] = True
    frame[8:22, 13:27] = False  # 3-pixel outline
    assert (mask == frame).all()


async def test_rectangle_fill_and_outline(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_rectangle", image="original", box=[10, 10, 20, 20],
                          color="black", width=1, fill="white")
    assert (out[11:19, 11:19] == 255).all() and (out[10, 10:20] == 0).all()
    assert not changed(out)[:10].any()


async def test_rectangle_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "draw_rectangle", "box", "[10, 10, 70, 20] is outside the 64x48 image",
                  image="original", box=[10, 10, 70, 20])
    await refused(client, session, "draw_rectangle", "box", "[30, 10, 10, 20.5] is empty or inverted",
                  image="original", box=[30, 10, 10, 20.5])
    await refused(client, session, "draw_rectangle", "fill", "not a colour", image="original",
                  box=[1, 1, 9, 9], fill="sparkly")


async def test_circle_outline_follows_the_radius(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_circle", image="original", center=[32, 24], radius=15,
                          color="blue", width=1)
    ys, xs = np.nonzero(changed(out))
    distance = np.hypot(xs - 32, ys - 24)
    assert (out[ys, xs] == (0, 0, 255)).all()
    assert distance.min() >= 13 and distance.max() <= 16
    assert len(xs) > 2 * np.pi * 15 * 0.8  # a whole ring, not an arc


async def test_filled_circle_covers_its_disc(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "draw_circle", image="original", center=[20, 20], radius=8,
                          fill="red", color="red")
    yy, xx = np.mgrid[:48, :64]
    inside = np.hypot(xx - 20, yy - 20) <= 7
    assert (out[inside] == RED).all() and not changed(out)[np.hypot(xx - 20, yy - 20) > 10].any()


async def test_circle_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "draw_circle", "radius", "accepted: 1 to 64", image="original",
                  center=[10, 10], radius=0)
    await refused(client, session, "draw_circle", "radius", "accepted: 1 to 64", image="original",
                  center=[10, 10], radius=65)
    await refused(client, session, "draw_circle", "center", "outside the 64x48 image", image="original",
                  center=[10, 49], radius=5)


async def test_text_is_drawn_within_its_reported_box(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "draw_text", image="original", position=[5, 5], text="B2",
                             color="yellow", size=20)
    x0, y0, x1, y1 = meta["data"]["text_box"]
    ys, xs = np.nonzero(changed(out))
    assert xs.min() >= x0 and xs.max() < x1 and ys.min() >= y0 and ys.max() < y1
    assert ((out[ys, xs] == (255, 255, 0)).all(axis=-1)).sum() > 20  # the letters themselves, in yellow
    assert y1 - y0 >= 14  # roughly the requested size


async def test_text_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "draw_text", "text", "accepted: 1 to 200", image="original",
                  position=[5, 5], text="   ")
    await refused(client, session, "draw_text", "size", "accepted: 8 to 200", image="original",
                  position=[5, 5], text="x", size=4)
    await refused(client, session, "draw_text", "position", "outside", image="original",
                  position=[70, 5], text="x")


async def test_marks_on_a_transparent_image_keep_its_transparency(client, open_image):
    rgba = np.zeros((20, 20, 4), np.uint8)
    rgba[...] = (10, 20, 30, 40)
    session = await open_image(Image.fromarray(rgba, "RGBA"))
    out, _ = await pixels(client, session, "draw_rectangle", image="original", box=[5, 5, 15, 15], width=1)
    frame = np.zeros((20, 20), bool)
    frame[5:15, 5:15] = True
    frame[6:14, 6:14] = False
    assert (out[frame] == (255, 0, 0, 255)).all() and (out[~frame] == (10, 20, 30, 40)).all()

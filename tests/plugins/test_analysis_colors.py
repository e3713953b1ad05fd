"""sample_color and isolate_color: exact values, exact fractions, clear refusals."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from toolcheck import call, gradient, in_memory, open_in, patches, pixels, refused, result_image

GREYS = patches((60, 40), (200, 200, 200), [((5, 5, 25, 25), (0x8F, 0x8F, 0x8F)),
                                            ((35, 5, 55, 25), (0x90, 0x90, 0x90))])
SOURCE = np.asarray(gradient())


def disc(x: int, y: int, radius: float, shape=(40, 60)) -> np.ndarray:
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    return (xx - x) ** 2 + (yy - y) ** 2 <= radius**2


async def test_one_grey_level_apart_is_reported_exactly(client, open_image):
    session = await open_image(GREYS)
    result = await call(client, session, "sample_color", image="original", points=[[15, 15], [45, 15]], radius=3)
    first, second = result.structured_content["data"]["samples"]
    assert (first["hex"], second["hex"]) == ("#8F8F8F", "#909090")
    assert first["rgb"] == [143, 143, 143] and first["mean"] == [143.0, 143.0, 143.0]
    assert first["std"] == [0.0, 0.0, 0.0] and second["std"] == [0.0, 0.0, 0.0]
    assert first["pixels"] == second["pixels"] == int(disc(15, 15, 3).sum())
    text = result.content[0].text
    assert "A (15, 15): #8F8F8F" in text and "B (45, 15): #909090" in text and "std (0.0, 0.0, 0.0)" in text


async def test_disc_mean_and_spread_match_numpy(client, open_image):
    session = await open_image(GREYS)
    result = await call(client, session, "sample_color", image="original", points=[[25, 15]], radius=6)
    (sample,) = result.structured_content["data"]["samples"]
    values = np.asarray(GREYS)[disc(25, 15, 6)].astype(float)
    assert np.allclose(sample["mean"], values.mean(axis=0), atol=0.005)
    assert np.allclose(sample["std"], values.std(axis=0), atol=0.005) and sample["std"][0] > 10
    assert sample["hex"] == "#{:02X}{:02X}{:02X}".format(*np.floor(values.mean(axis=0) + 0.5).astype(int))


async def test_marked_image_rings_the_spots_but_keeps_the_sampled_pixels(client, open_image):
    session = await open_image(GREYS)
    out, meta = await pixels(client, session, "sample_color", image="original", points=[[15, 15]], radius=3)
    source = np.asarray(GREYS)
    assert (out[disc(15, 15, 3)] == source[disc(15, 15, 3)]).all()
    ring = disc(15, 15, 7) & ~disc(15, 15, 5)
    assert (out[ring] != source[ring]).any(axis=-1).mean() > 0.3  # a visible ring around the spot
    assert meta["created"] and meta["parents"] == ["original"]


def test_any_single_pixel_reads_back_exactly(make_app):
    app = make_app()
    session = open_in(app, gradient())

    @settings(max_examples=40, deadline=None)
    @given(x=st.floats(0, 63.99), y=st.floats(0, 47.99))
    def check(x, y):
        result = in_memory(app, lambda client: call(client, session, "sample_color", image="original",
                                                    points=[[x, y]]))
        (sample,) = result.structured_content["data"]["samples"]
        r, g, b = SOURCE[int(y), int(x)]  # the pixel that contains the point
        assert sample["hex"] == f"#{r:02X}{g:02X}{b:02X}" and sample["std"] == [0, 0, 0]
        assert sample["pixels"] == 1

    check()


async def test_transparency_is_reported(client, open_image):
    rgba = np.zeros((6, 6, 4), np.uint8)
    rgba[...] = (10, 20, 30, 128)
    session = await open_image(Image.fromarray(rgba, "RGBA"))
    result = await call(client, session, "sample_color", image="original", points=[[2, 2]])
    (sample,) = result.structured_content["data"]["samples"]
    assert sample["hex"] == "#0A141E" and sample["alpha"] == 128


async def test_sample_color_refusals(client, open_image):
    session = await open_image(GREYS)
    await refused(client, session, "sample_color", "points[1]", "outside the 60x40 image", image="original",
                  points=[[1, 1], [61, 1]])
    await refused(client, session, "sample_color", "points", "accepted: 1 to 12", image="original",
                  points=[[1, 1]] * 13)
    await refused(client, session, "sample_color", "points", "at least 1 item", image="original", points=[])
    await refused(client, session, "sample_color", "radius", "accepted: 0 to 50", image="original",
                  points=[[1, 1]], radius=51)
    await refused(client, session, "sample_color", "image", "unknown image 'img_001'", image="img_001",
                  points=[[1, 1]])


REDS = patches((50, 40), (0, 0, 0), [((0, 0, 10, 10), (255, 0, 0)), ((20, 20, 25, 24), (250, 10, 5)),
                                     ((30, 0, 40, 10), (200, 0, 0))])


async def test_isolate_color_fraction_matches_the_patches(client, open_image):
    session = await open_image(REDS)
    out, meta = await pixels(client, session, "isolate_color", image="original", color="red", tolerance=10)
    assert meta["data"] == {"matched": 120, "total": 2000, "fraction": 0.06}
    expected = np.zeros((40, 50), bool)
    expected[0:10, 0:10] = expected[20:24, 20:25] = True
    assert (out[expected] == 255).all() and (out[~expected] == 0).all()
    exact, _ = await pixels(client, session, "isolate_color", image="original", color="#ff0000", tolerance=0)
    assert (exact[..., 0] == 255).sum() == 100


async def test_isolate_color_keep_dims_the_rest(client, open_image):
    session = await open_image(REDS)
    out, meta = await pixels(client, session, "isolate_color", image="original", color="red", tolerance=10,
                             output="keep")
    source = np.asarray(REDS)
    assert (out[0:10, 0:10] == source[0:10, 0:10]).all()
    assert (out[0:10, 30:40] == (50, 0, 0)).all()  # 200 * 0.25
    result = await call(client, session, "isolate_color", image="original", color="red", tolerance=10)
    assert "120 of 2000 pixels match (6.00%)" in result.content[0].text


async def test_isolate_color_refusals(client, open_image):
    session = await open_image(REDS)
    await refused(client, session, "isolate_color", "color", "not a colour", image="original", color="rojo")
    await refused(client, session, "isolate_color", "tolerance", "accepted: 0 to 255", image="original",
                  color="red", tolerance=256)
    await refused(client, session, "isolate_color", "output", "'mask' or 'keep'", image="original",
                  color="red", output="both")
    # the original is untouched by all of this
    shown = result_image(await call(client, session, "view_image", image="original"))
    assert (np.asarray(shown) == np.asarray(REDS)).all()

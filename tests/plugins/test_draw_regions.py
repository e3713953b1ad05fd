"""crop and compare_crops: exact source pixels, one common scale, clear refusals."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from toolcheck import call, gradient, in_memory, listing, open_in, pixels, refused, result_image, session_on
from trompe_server.limits import Limits

SOURCE = np.asarray(gradient())  # 64x48, every pixel different
GREY = (128, 128, 128)


async def test_crop_returns_exactly_the_source_pixels(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "crop", image="original", box=[5, 7, 40, 30])
    assert (out == SOURCE[7:30, 5:40]).all()
    assert (meta["width"], meta["height"], meta["parents"]) == (35, 23, ["original"])


async def test_zoom_repeats_each_pixel_as_a_block(client, open_image):
    session = await open_image()
    out, _ = await pixels(client, session, "crop", image="original", box=[10, 10, 20, 16], zoom=3)
    assert (out == np.kron(SOURCE[10:16, 10:20], np.ones((3, 3, 1), np.uint8))).all()


async def test_crop_records_its_lineage(client, open_image):
    session = await open_image()
    await call(client, session, "crop", image="original", box=[0, 0, 8, 8], zoom=2)
    record = (await listing(client, session))[-1]
    assert (record["id"], record["operation"], record["parents"]) == ("img_001", "crop", ["original"])
    assert record["arguments"] == {"image": "original", "box": [0, 0, 8, 8], "zoom": 2}


def test_any_valid_box_crops_to_the_numpy_slice(make_app):
    app = make_app()
    session = open_in(app, gradient())

    @settings(max_examples=50, deadline=None)
    @given(xs=st.lists(st.integers(0, 64), min_size=2, max_size=2, unique=True),
           ys=st.lists(st.integers(0, 48), min_size=2, max_size=2, unique=True))
    def check(xs, ys):
        (x0, x1), (y0, y1) = sorted(xs), sorted(ys)
        result = in_memory(app, lambda client: call(client, session, "crop", image="original",
                                                    box=[x0, y0, x1, y1]))
        assert (np.asarray(result_image(result)) == SOURCE[y0:y1, x0:x1]).all()

    check()


async def test_crop_refusals_leave_the_session_unchanged(client, open_image):
    session = await open_image()
    await refused(client, session, "crop", "image", "this session has: original", image="img_009",
                  box=[0, 0, 5, 5])
    await refused(client, session, "crop", "box", "outside the 64x48 image", image="original",
                  box=[0, 0, 65, 5])
    await refused(client, session, "crop", "box", "outside", image="original", box=[-1, 0, 5, 5])
    await refused(client, session, "crop", "box", "empty or inverted", image="original", box=[5, 5, 5, 9])
    await refused(client, session, "crop", "box", "empty or inverted", image="original", box=[9, 5, 2, 9])
    await refused(client, session, "crop", "zoom", "accepted: 1 to 8", image="original", box=[0, 0, 5, 5],
                  zoom=9)


async def test_zoom_over_the_pixel_limit_is_refused_before_allocating(make_app):
    async with session_on(make_app(limits=Limits(max_pixels=10_000))) as (client, session):
        text = await refused(client, session, "crop", "zoom", "max_pixels", "zoom 1 to 2.88", image="original",
                             box=[0, 0, 40, 30], zoom=3)
        assert "120x90 = 10800 pixels" in text
        out, _ = await pixels(client, session, "crop", image="original", box=[0, 0, 40, 30], zoom=2.88)
        assert out.shape[:2] == (86, 115)  # the advertised largest zoom fits


def panel(out: np.ndarray, at: list[int]) -> np.ndarray:
    x0, y0, x1, y1 = at
    return out[y0:y1, x0:x1]


async def test_compare_crops_uses_one_scale_for_all_regions(client, open_image):
    session = await open_image()
    await call(client, session, "crop", image="original", box=[0, 0, 32, 24])  # img_001, another image
    out, meta = await pixels(client, session, "compare_crops", crops=[
        {"image": "original", "box": [10, 10, 20, 20]},
        {"image": "img_001", "box": [0, 0, 30, 10]},
    ])
    data = meta["data"]
    scale = int(data["scale"])
    assert scale == 8  # 512 // 30 = 17, capped at 8
    sizes = []
    for item, source in zip(data["panels"], [SOURCE[10:20, 10:20], SOURCE[0:10, 0:30]]):
        region = panel(out, item["at"])
        sizes.append(region.shape[:2])
        assert (region == np.kron(source, np.ones((scale, scale, 1), np.uint8))).all()
    assert sizes == [(80, 80), (80, 240)]  # same pixels per source pixel: 10x10 and 30x10 keep their ratio
    assert meta["parents"] == ["original", "img_001"]


async def test_compare_crops_layouts_and_neutral_background(client, open_image):
    session = await open_image()
    crops = [{"image": "original", "box": [0, 0, 10, 10]}, {"image": "original", "box": [20, 0, 30, 10]},
             {"image": "original", "box": [0, 20, 10, 30]}]
    places = {}
    for layout in ("horizontal", "vertical", "grid"):
        out, meta = await pixels(client, session, "compare_crops", crops=crops, layout=layout, scale=2)
        at = [p["at"] for p in meta["data"]["panels"]]
        places[layout] = at
        assert [p["label"] for p in meta["data"]["panels"]] == ["A", "B", "C"]
        assert (out[0, :] == GREY).all() and (out[:, 0] == GREY).all()  # neutral separator around panels
        for a, b in itertools.pairwise(at):
            assert a[2] <= b[0] or a[3] <= b[1]  # panels never overlap
    assert len({a[1] for a in places["horizontal"]}) == 1  # one row
    assert len({a[0] for a in places["vertical"]}) == 1  # one column
    grid = places["grid"]
    assert grid[0][1] == grid[1][1] and grid[2][0] == grid[0][0] and grid[2][1] > grid[0][3]  # 2x2, C below A


async def test_compare_crops_labels_each_region(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "compare_crops", crops=[
        {"image": "original", "box": [0, 0, 10, 10]}, {"image": "original", "box": [20, 0, 30, 10]}], scale=1)
    text = (await client.call_tool("compare_crops", {"session": session, "crops": [
        {"image": "original", "box": [0, 0, 10, 10]}, {"image": "original", "box": [20, 0, 30, 10]}]})).content[0]
    assert "A: original [0, 0, 10, 10]" in text.text and "B: original [20, 0, 30, 10]" in text.text
    for item in meta["data"]["panels"]:
        x0, y0, x1, _ = item["at"]
        strip = out[max(0, y0 - 14):y0, x0:x1 + 20]
        assert (strip != GREY).any(axis=-1).sum() > 10  # a label is written above each panel


async def test_compare_crops_refusals(make_app):
    region = {"image": "original", "box": [0, 0, 10, 10]}
    async with session_on(make_app(limits=Limits(max_pixels=40_000))) as (client, session):
        await refused(client, session, "compare_crops", "crops", "accepted: 2 to 6", crops=[region])
        await refused(client, session, "compare_crops", "crops", "7 regions given; accepted: 2 to 6",
                      crops=[region] * 7)
        await refused(client, session, "compare_crops", "crops[1].image", "unknown image 'img_004'",
                      crops=[region, {"image": "img_004", "box": [0, 0, 5, 5]}])
        await refused(client, session, "compare_crops", "crops[1].box", "outside the 64x48 image",
                      crops=[region, {"image": "original", "box": [0, 0, 80, 5]}])
        await refused(client, session, "compare_crops", "scale", "accepted: 0.1 to 16", crops=[region] * 2,
                      scale=20)
        await refused(client, session, "compare_crops", "scale", "max_pixels", crops=[region] * 2, scale=16)
        await refused(client, session, "compare_crops", "layout", "'horizontal', 'vertical' or 'grid'",
                      crops=[region] * 2, layout="diagonal")


async def test_compare_crops_shrinks_only_when_asked(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "compare_crops", crops=[
        {"image": "original", "box": [0, 0, 64, 48]}, {"image": "original", "box": [0, 0, 32, 24]}], scale=0.5)
    first, second = (panel(out, p["at"]) for p in meta["data"]["panels"])
    assert first.shape[:2] == (24, 32) and second.shape[:2] == (12, 16)
    assert (first == SOURCE[1::2, 1::2]).all()  # nearest neighbour: the source pixel under each centre

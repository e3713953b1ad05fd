"""Vision tools end to end: tiny random Grounding DINO, Depth Anything and SAM checkpoints saved to a temp
folder, loaded through from_pretrained exactly as users' checkpoints are, driven through the MCP client."""

from __future__ import annotations

import sys

import anyio
import numpy as np
import pytest
from imagekit import gradient, result_image
from toolcheck import call, refused

pytest.importorskip("torch")
pytest.importorskip("transformers")

from trompe_vision.segment import GRANULARITY  # noqa: E402

VISION_TOOLS = {"detect_objects", "sliding_window_detection", "estimate_depth", "segment_and_mark"}


@pytest.fixture(scope="session")
def vision_models(tmp_path_factory) -> dict[str, str]:
    from trompe_vision.random_models import build_all

    return build_all(tmp_path_factory.mktemp("vision_models"))


@pytest.fixture
def vision_env(vision_models, monkeypatch) -> dict[str, str]:
    for key, value in vision_models.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return vision_models


@pytest.fixture
def app(make_app, vision_env):
    return make_app(plugins=["vision", "draw"])


def within(box, width, height) -> bool:
    x0, y0, x1, y1 = box
    return 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height


async def test_tools_are_listed_with_the_vision_tag_and_choices_in_the_schema(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert VISION_TOOLS <= set(tools)
    assert all(tools[name].meta["tags"] == ["vision"] for name in VISION_TOOLS)
    schema = tools["segment_and_mark"].input_schema["properties"]
    assert schema["granularity"]["enum"] == ["coarse", "medium", "fine"]
    assert schema["mark"]["enum"] == ["number", "outline", "both"]


async def test_detect_objects_draws_boxes_inside_the_image(client, open_image):
    session = await open_image(gradient(160, 120))
    result = await call(client, session, "detect_objects", image="original", query="Cat. red car",
                        box_threshold=0.2, text_threshold=0.0)
    data = result.structured_content["data"]
    found = data["detections"]
    assert data["query"] == ["cat", "red car"]
    assert found and result_image(result).size == (160, 120)
    assert all(within(d["box"], 160, 120) and d["label"] in ("cat", "red car") for d in found)
    scores = [d["score"] for d in found]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0.2
    assert f"{len(found)} detection(s) of cat / red car" in result.content[0].text
    drawn = np.asarray(result_image(result)).astype(int)
    x0, y0, x1, y1 = (round(v) for v in found[-1]["box"])
    original = np.asarray(gradient(160, 120)).astype(int)
    assert (drawn[y0:y1 + 1, x0:x1 + 1] != original[y0:y1 + 1, x0:x1 + 1]).any()


async def test_a_higher_box_threshold_keeps_fewer_boxes(client, open_image):
    session = await open_image(gradient(160, 120))
    counts = []
    for threshold in (0.0, 0.9, 1.0):
        result = await call(client, session, "detect_objects", image="original", query="cat",
                            box_threshold=threshold, text_threshold=0.0)
        found = result.structured_content["data"]["detections"]
        assert all(d["score"] >= threshold for d in found)
        counts.append(len(found))
    assert counts == sorted(counts, reverse=True)


async def test_sliding_window_tiles_the_image_and_merges_boxes(client, open_image):
    from trompe_vision.detect import overlap

    session = await open_image(gradient(300, 200))
    result = await call(client, session, "sliding_window_detection", image="original", query="small object",
                        window=128, stride=96, box_threshold=0.2, text_threshold=0.0)
    data = result.structured_content["data"]
    assert data["tiles"] == 3 * 2  # x offsets 0, 96, 172; y offsets 0, 72
    assert result_image(result).size == (300, 200)
    found = data["detections"]
    assert found and len(found) <= data["raw_detections"]
    assert all(within(d["box"], 300, 200) for d in found)
    for i, a in enumerate(found):
        for b in found[i + 1:]:
            union_share, small_share = overlap(a["box"], b["box"])
            assert union_share <= 0.5 + 1e-6 and small_share < 0.8 + 1e-6


async def test_estimate_depth_reads_points_in_range(client, open_image):
    session = await open_image(gradient(120, 90))
    points = [[0, 0], [119.5, 89.5], [60, 45]]
    result = await call(client, session, "estimate_depth", image="original", points=points)
    data = result.structured_content["data"]
    assert result_image(result).size == (120, 90)
    assert [r["point"] for r in data["points"]] == points
    assert all(0 <= r["nearness"] <= 1 for r in data["points"])
    assert "larger = nearer" in data["model_output"]
    nearest = max(range(3), key=lambda i: data["points"][i]["nearness"])
    assert f"nearest point {nearest + 1}" in result.content[0].text


async def test_depth_map_is_brighter_where_nearer(client, open_image):
    """The picture and the numbers agree: the nearest and farthest sampled pixels order by luminance."""
    session = await open_image(gradient(120, 90))
    grid = [[x, y] for x in range(5, 120, 22) for y in range(5, 90, 22)]
    numbers = await call(client, session, "estimate_depth", image="original", points=grid)
    picture = await call(client, session, "estimate_depth", image="original")
    luminance = np.asarray(result_image(picture).convert("L")).astype(int)
    readings = numbers.structured_content["data"]["points"]
    near = max(readings, key=lambda r: r["nearness"])
    far = min(readings, key=lambda r: r["nearness"])
    def at(reading):
        x, y = reading["point"]
        return luminance[int(y), int(x)]

    assert at(near) > at(far)


@pytest.mark.parametrize("granularity", ["coarse", "fine"])
async def test_segment_and_mark_masks_match_the_image(client, open_image, granularity):
    session = await open_image(gradient(96, 64))
    result = await call(client, session, "segment_and_mark", image="original", granularity=granularity,
                        mark="both", min_score=0.0)
    masks = result.structured_content["data"]["masks"]
    assert result_image(result).size == (96, 64)
    assert 0 < len(masks) <= GRANULARITY[granularity].max_masks
    assert [m["id"] for m in masks] == list(range(1, len(masks) + 1))
    assert [m["area"] for m in masks] == sorted((m["area"] for m in masks), reverse=True)
    for m in masks:
        x0, y0, x1, y1 = m["bbox"]
        assert within(m["bbox"], 96, 64) and 0 < m["area"] <= (x1 - x0) * (y1 - y0)
        assert x0 <= m["centroid"][0] <= x1 and y0 <= m["centroid"][1] <= y1
        assert x0 <= m["label_at"][0] < x1 and y0 <= m["label_at"][1] < y1
    drawn, original = np.asarray(result_image(result)), np.asarray(gradient(96, 64))
    x0, y0, x1, y1 = masks[0]["bbox"]
    assert (drawn[y0:y1, x0:x1] != original[y0:y1, x0:x1]).any()


async def test_outlines_change_fewer_pixels_than_filled_numbers(client, open_image):
    session = await open_image(gradient(96, 64))
    changed = {}
    for mark in ("outline", "number"):
        result = await call(client, session, "segment_and_mark", image="original", granularity="coarse",
                            mark=mark, min_score=0.0)
        drawn = np.asarray(result_image(result))
        changed[mark] = (drawn != np.asarray(gradient(96, 64))).any(-1).mean()
    assert 0 < changed["outline"] < changed["number"]


async def test_bad_arguments_name_the_accepted_range(client, open_image):
    session = await open_image(gradient(640, 480))
    common = dict(image="original", query="cat")
    await refused(client, session, "detect_objects", "box_threshold", "accepted: 0 to 1", **common,
                  box_threshold=1.5)
    await refused(client, session, "detect_objects", "text_threshold", "accepted: 0 to 1", **common,
                  text_threshold=-0.1)
    await refused(client, session, "detect_objects", "query", "is empty", image="original", query=" . , ")
    await refused(client, session, "sliding_window_detection", "window", "accepted: 64 to 4096", **common,
                  window=10)
    await refused(client, session, "sliding_window_detection", "stride", "accepted: 16 to 128", **common,
                  window=128, stride=200)
    await refused(client, session, "sliding_window_detection", "stride", "at most 256", **common,
                  window=64, stride=16)
    await refused(client, session, "estimate_depth", "points[1]", "outside the 640x480 image",
                  image="original", points=[[1, 1], [700, 10]])
    await refused(client, session, "segment_and_mark", "min_score", "accepted: 0 to 1", image="original",
                  min_score=2)
    wrong = await client.call_tool("segment_and_mark", {"session": session, "image": "original",
                                                        "granularity": "huge"})
    assert wrong.is_error and "'coarse', 'medium' or 'fine'" in wrong.content[0].text


async def test_missing_model_folder_names_the_variable(client, open_image, monkeypatch, tmp_path):
    monkeypatch.setenv("TROMPE_DETECTOR_MODEL", str(tmp_path / "no-such-model"))
    session = await open_image()
    text = await refused(client, session, "detect_objects", "TROMPE_DETECTOR_MODEL", "does not exist",
                         image="original", query="cat")
    assert "save_pretrained" in text
    depth = await call(client, session, "estimate_depth", image="original")  # the other models still work
    assert result_image(depth).size == (64, 48)


async def test_uncached_hub_model_is_not_downloaded_unless_asked(client, open_image, monkeypatch):
    monkeypatch.delenv("TROMPE_SEGMENTER_MODEL")
    monkeypatch.delenv("HF_HUB_OFFLINE")  # even online, nothing is fetched without TROMPE_VISION_DOWNLOAD=1
    monkeypatch.delenv("TROMPE_VISION_DOWNLOAD", raising=False)
    session = await open_image()
    await refused(client, session, "segment_and_mark", "TROMPE_SEGMENTER_MODEL", "facebook/sam-vit-base",
                  "TROMPE_VISION_DOWNLOAD=1", image="original")


async def test_without_torch_the_error_says_what_to_install_and_core_tools_work(client, open_image,
                                                                                monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    session = await open_image()
    await refused(client, session, "estimate_depth", "torch", "pip install 'trompe[vision]'",
                  image="original")
    await call(client, session, "crop", image="original", box=[0, 0, 8, 8])


def test_server_starts_without_torch(make_app, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    app = make_app(plugins=["vision"])
    assert VISION_TOOLS == set(app.tools)


async def test_bad_device_setting_is_reported(client, open_image, monkeypatch):
    monkeypatch.setenv("TROMPE_VISION_DEVICE", "gpu0")
    session = await open_image()
    await refused(client, session, "estimate_depth", "TROMPE_VISION_DEVICE", "auto, cpu, cuda",
                  image="original")


async def test_bfloat16_models_give_float_results(client, open_image, monkeypatch):
    """The GPU dtype path (bf16 weights, float32 post-processing) exercised on CPU."""
    monkeypatch.setenv("TROMPE_VISION_DTYPE", "bfloat16")
    session = await open_image(gradient(100, 80))
    detected = await call(client, session, "detect_objects", image="original", query="cat", box_threshold=0.0)
    assert all(within(d["box"], 100, 80) for d in detected.structured_content["data"]["detections"])
    depth = await call(client, session, "estimate_depth", image="original", points=[[50, 40]])
    assert 0 <= depth.structured_content["data"]["points"][0]["nearness"] <= 1
    marked = await call(client, session, "segment_and_mark", image="original", min_score=0.0)
    assert result_image(marked).size == (100, 80)


async def test_concurrent_calls_share_the_device_and_all_finish(client, open_image):
    session = await open_image(gradient(80, 60))
    results = {}

    async def run(name, **arguments):
        results[name] = await client.call_tool(name, {"session": session, "image": "original", **arguments})

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run("detect_objects", query="cat", box_threshold=0.0))
        tg.start_soon(lambda: run("estimate_depth"))
        tg.start_soon(lambda: run("segment_and_mark", min_score=0.0))
    assert all(not r.is_error and result_image(r).size == (80, 60) for r in results.values())
    listing = await client.call_tool("list_images", {"session": session})
    assert len(listing.structured_content["images"]) == 4


async def test_the_vision_tools_report_progress_around_the_load_and_per_batch_of_tiles(client, open_image):
    """A client that sends a progress token hears the model load, then each batch of four tiles (MCP progress)."""
    session = await open_image(gradient(300, 200))
    heard: dict[str, list[tuple[float, float | None, str | None]]] = {}
    calls = {"sliding_window_detection": {"query": "small object", "window": 128, "stride": 96},
             "estimate_depth": {}, "segment_and_mark": {}}
    for tool, arguments in calls.items():
        async def on_progress(progress: float, total: float | None, message: str | None, tool=tool) -> None:
            heard.setdefault(tool, []).append((progress, total, message))

        result = await client.call_tool(tool, {"session": session, "image": "original", **arguments},
                                        progress_callback=on_progress)
        assert not result.is_error, result.content[0].text
    assert heard["sliding_window_detection"] == [(0, 6, "loading the detector"), (0, 6, "detector ready"),
                                                 (0, 6, "0 of 6 tiles"), (4, 6, "4 of 6 tiles")]
    assert heard["estimate_depth"] == [(0, 1, "loading the depth estimator"), (0, 1, "depth estimator ready")]
    assert heard["segment_and_mark"][:2] == [(0, 1, "loading the segmenter"), (0, 1, "segmenter ready")]

"""Pure parts of the vision tools (no torch needed): box merging, tiling, query parsing, depth colours."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_server import ToolInputError
from trompe_server.cli import main
from trompe_vision.detect import Detection, merge, overlap, parse_query, tile_starts
from trompe_vision.overlay import colorize
from trompe_vision.runtime import DEPTH, model_source


@st.composite
def detections(draw) -> list[Detection]:
    found = []
    for _ in range(draw(st.integers(0, 12))):
        x0, y0 = draw(st.integers(0, 200)), draw(st.integers(0, 200))
        w, h = draw(st.integers(1, 80)), draw(st.integers(1, 80))
        found.append(Detection((x0, y0, x0 + w, y0 + h), draw(st.sampled_from(["cat", "dog"])),
                               draw(st.floats(0, 1))))
    return found


def covers(outer: Detection, inner: Detection) -> bool:
    union_share, _ = overlap(outer.box, inner.box)
    x0, y0, x1, y1 = inner.box
    ox0, oy0, ox1, oy1 = outer.box
    inside = max(0, min(x1, ox1) - max(x0, ox0)) * max(0, min(y1, oy1) - max(y0, oy0))
    return union_share > 0.5 or inside >= 0.8 * (x1 - x0) * (y1 - y0)


@given(detections())
def test_merged_boxes_cover_every_input_and_no_longer_overlap(found):
    merged = merge(found, contained=0.8)
    assert len(merged) <= len(found)
    for det in found:
        assert any(m.label == det.label and covers(m, det) for m in merged)
    for i, a in enumerate(merged):
        for b in merged[i + 1:]:
            if a.label == b.label:
                union_share, small_share = overlap(a.box, b.box)
                assert union_share <= 0.5 and small_share < 0.8
    for label in {d.label for d in found}:
        best = max(d.score for d in found if d.label == label)
        assert best == max(m.score for m in merged if m.label == label)


@given(detections())
def test_plain_merge_keeps_the_best_of_duplicates_unchanged(found):
    merged = merge(found)
    assert all(m in found for m in merged)
    assert [m.score for m in merged] == sorted((m.score for m in merged), reverse=True)


@given(st.integers(1, 5000), st.integers(64, 1024), st.data())
def test_tiles_cover_the_length_within_bounds(length, window, data):
    stride = data.draw(st.integers(16, window))
    starts = tile_starts(length, window, stride)
    assert starts[0] == 0 and starts == sorted(set(starts))
    assert min(length, starts[-1] + window) == length
    assert all(0 <= s and (s + window <= length or length <= window) for s in starts)
    assert all(b - a <= stride for a, b in zip(starts, starts[1:]))


def test_query_phrases_are_split_lowercased_and_deduplicated():
    assert parse_query("Red  car. cat, CAT;\nblue sky") == ["red car", "cat", "blue sky"]
    with pytest.raises(ToolInputError, match="query: is empty"):
        parse_query(" . ,")
    with pytest.raises(ToolInputError, match="accepted: 1 to 16"):
        parse_query(". ".join(f"thing {i}" for i in range(17)))


@given(st.lists(st.floats(0, 1), min_size=2, max_size=50))
def test_depth_colormap_gets_brighter_as_points_get_nearer(values):
    ordered = np.sort(np.array(values))[None, :]
    rgb = np.asarray(colorize(ordered)).astype(float)[0]
    luminance = rgb @ [0.299, 0.587, 0.114]
    assert (np.diff(luminance) >= -0.75).all()  # rounding to uint8 aside


def test_server_env_option_sets_the_model_variables(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TROMPE_DEPTH_MODEL", "unchanged")  # restored after the test
    main(["--env", f"TROMPE_DEPTH_MODEL={tmp_path}", "--plugins", "vision", "--list-tools"])
    assert "estimate_depth" in capsys.readouterr().out
    assert model_source(DEPTH) == str(tmp_path)
    with pytest.raises(SystemExit):
        main(["--env", "no-equals-sign", "--list-tools"])
    assert "is not KEY=VALUE" in capsys.readouterr().err

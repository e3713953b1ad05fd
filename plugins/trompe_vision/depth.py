"""Monocular depth with Depth Anything: a colour-mapped depth image and relative depth at points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from PIL import Image
from pydantic import Field
from trompe_server import ImageId, Point, ToolContext, ToolInputError, ToolOutput, check_point

from .overlay import colorize, draw_points
from .runtime import DEPTH, LoadedModel, loaded

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np

MAX_POINTS = 32


def predict_depth(loaded: LoadedModel, images: Sequence[Image.Image]) -> tuple[list[np.ndarray], bool]:
    """Per image, the model's output at full image size, and whether larger values mean nearer.

    Relative Depth Anything checkpoints predict inverse depth (disparity: larger = nearer); metric
    checkpoints predict metres (larger = farther)."""
    import torch

    inputs = loaded.processor(images=list(images), return_tensors="pt")
    with loaded.forward():
        predicted = loaded.model(**loaded.pixels(inputs)).predicted_depth
    predicted = predicted.float().cpu()[:, None]
    maps = [torch.nn.functional.interpolate(p[None], size=(im.height, im.width), mode="bicubic",
                                            align_corners=False)[0, 0].numpy()
            for p, im in zip(predicted, images, strict=True)]
    return maps, getattr(loaded.model.config, "depth_estimation_type", "relative") != "metric"


def nearness_of(depth: np.ndarray, larger_is_nearer: bool) -> np.ndarray:
    """Min-max scaled to [0, 1] with 1 = nearest point of this image."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    low, high = float(depth.min()), float(depth.max())
    scaled = (depth - low) / (high - low) if high > low else np.zeros_like(depth)
    return scaled if larger_is_nearer else 1 - scaled


def estimate_depth(
    ctx: ToolContext, image: ImageId,
    points: Annotated[list[Point] | None, Field(description=f"up to {MAX_POINTS} [x, y] points to read the "
                                                            "relative depth at")] = None,
) -> ToolOutput:
    """Estimate depth (Depth Anything): a depth map (bright = near, dark = far) and how near each point is."""
    points = points or []
    if len(points) > MAX_POINTS:
        raise ToolInputError("points", f"{len(points)} points given; accepted: at most {MAX_POINTS}")
    size = ctx.size(image)
    checked = [check_point(p, size, f"points[{i}]") for i, p in enumerate(points)]
    im = ctx.image(image).convert("RGB")
    [depth], larger_is_nearer = predict_depth(loaded(ctx, DEPTH, 1), [im])
    nearness = nearness_of(depth, larger_is_nearer)
    readings = []
    for x, y in checked:
        col, row = min(int(x), im.width - 1), min(int(y), im.height - 1)
        readings.append({"point": [x, y], "nearness": round(float(nearness[row, col]), 4),
                         "raw": round(float(depth[row, col]), 4)})
    picture = draw_points(colorize(nearness), checked)
    kind = "relative inverse depth (larger = nearer)" if larger_is_nearer else "metric depth in metres"
    summary = f"depth of {image} (bright = near, dark = far)"
    if readings:
        summary += "; nearness 0 = farthest .. 1 = nearest: " + ", ".join(
            f"point {i + 1} [{r['point'][0]:g}, {r['point'][1]:g}] {r['nearness']:.3f}"
            for i, r in enumerate(readings))
    if len(readings) > 1:
        order = sorted(range(len(readings)), key=lambda i: -readings[i]["nearness"])
        summary += f"; nearest point {order[0] + 1}, farthest point {order[-1] + 1}"
    scale = "min-max scaled, 0 = farthest, 1 = nearest in this image"
    return ToolOutput(summary, picture, {"points": readings, "model_output": kind, "nearness": scale})

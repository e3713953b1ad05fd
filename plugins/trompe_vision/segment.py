"""Automatic SAM masks from a point grid, drawn as numbered Set-of-Mark overlays."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from PIL import Image
from pydantic import Field
from trompe_server import ImageId, ToolContext, ToolOutput, check_range

from .overlay import draw_marks, interior_point
from .runtime import SEGMENTER, LoadedModel, loaded

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np


@dataclass(frozen=True)
class Granularity:
    """How finely to split an image: prompt points per side, smallest region kept, most marks drawn."""

    points_per_side: int
    min_area: float
    max_masks: int


GRANULARITY = {"coarse": Granularity(8, 0.01, 16), "medium": Granularity(16, 0.0025, 40),
               "fine": Granularity(32, 0.0005, 99)}
DUPLICATE_IOU = 0.7
POINT_BATCH = 64


@dataclass
class Region:
    """One kept mask at full image size, with the model's predicted quality."""

    mask: np.ndarray
    score: float


def _low_res_masks(loaded: LoadedModel, image: Image.Image, points_per_side: int):
    """Best of SAM's three candidate masks per grid point: low-res logits (cropped to the image), scores."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)
    import torch

    processor = loaded.processor
    inputs = processor(images=image, return_tensors="pt")
    resized_h, resized_w = inputs["reshaped_input_sizes"][0].tolist()
    padded_h, padded_w = inputs["pixel_values"].shape[-2:]
    scale = resized_w / image.width
    steps = (np.arange(points_per_side) + 0.5) / points_per_side
    grid = np.stack(np.meshgrid(steps * image.width, steps * image.height), -1).reshape(-1, 2) * scale
    logits, scores = [], []
    with loaded.forward():
        embeddings = loaded.model.get_image_embeddings(loaded.pixels(inputs)["pixel_values"])
        for start in range(0, len(grid), POINT_BATCH):
            chunk = torch.tensor(grid[start:start + POINT_BATCH], dtype=torch.float32, device=loaded.device)
            labels = torch.ones(1, len(chunk), 1, dtype=torch.long, device=loaded.device)
            out = loaded.model(image_embeddings=embeddings, input_points=chunk[None, :, None, :],
                               input_labels=labels, multimask_output=True)
            iou = out.iou_scores[0].float()
            best = iou.argmax(-1)
            picked = out.pred_masks[0, torch.arange(len(chunk)), best].float()
            logits.append(picked.cpu())
            scores.append(iou.gather(-1, best[:, None])[:, 0].cpu())
    logits = torch.cat(logits)
    low_h, low_w = logits.shape[-2:]
    valid_h = max(1, math.ceil(resized_h * low_h / padded_h))
    valid_w = max(1, math.ceil(resized_w * low_w / padded_w))
    return logits[:, :valid_h, :valid_w], torch.cat(scores)


def auto_masks(loaded: LoadedModel, image: Image.Image, level: Granularity, min_score: float) -> list[Region]:
    """Distinct, confident masks from a point grid, largest first (duplicates removed at low resolution)."""
    import torch

    logits, scores = _low_res_masks(loaded, image, level.points_per_side)
    binary = logits > 0
    areas = binary.flatten(1).sum(-1)
    smallest = level.min_area * binary.shape[1] * binary.shape[2]
    order = [i for i in scores.argsort(descending=True).tolist()
             if scores[i] >= min_score and areas[i] >= max(1.0, smallest)]
    kept: list[int] = []
    for i in order:
        if kept:
            flat = binary[kept].flatten(1)
            inter = (flat & binary[i].flatten()).sum(-1)
            union = (flat | binary[i].flatten()).sum(-1)
            if (inter / union.clamp(min=1)).max() > DUPLICATE_IOU:
                continue
        kept.append(i)
        if len(kept) == level.max_masks:
            break
    if not kept:
        return []
    full = torch.nn.functional.interpolate(logits[kept][:, None], size=(image.height, image.width),
                                           mode="bilinear", align_corners=False)[:, 0] > 0
    regions = [Region(m.numpy(), float(scores[i])) for m, i in zip(full, kept, strict=True) if m.any()]
    return sorted(regions, key=lambda r: -int(r.mask.sum()))


def describe(index: int, region: Region, label_at: tuple[int, int]) -> dict:
    """Metadata of one mark: id, bbox, area, centroid, score, where its number is drawn."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    ys, xs = np.nonzero(region.mask)
    return {"id": index + 1, "bbox": [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1],
            "area": len(xs), "centroid": [round(float(xs.mean()), 1), round(float(ys.mean()), 1)],
            "score": round(region.score, 4), "label_at": list(label_at)}


def segment_and_mark(
    ctx: ToolContext, image: ImageId,
    granularity: Annotated[Literal["coarse", "medium", "fine"],
                           Field(description="coarse: few large regions; fine: many small ones")] = "medium",
    mark: Annotated[Literal["number", "outline", "both"],
                    Field(description="number: tinted regions with numbers; outline: borders only; "
                                      "both")] = "number",
    min_score: Annotated[float, Field(description="minimum predicted mask quality (IoU), 0 to 1; "
                                                  "SAM's own automatic mask generator uses 0.88")] = 0.88,
) -> ToolOutput:
    """Split an image into regions (SAM) and mark them with numbers and/or outlines (Set-of-Mark)."""
    check_range(min_score, 0, 1, "min_score")
    im = ctx.image(image).convert("RGB")
    regions = auto_masks(loaded(ctx, SEGMENTER, 1), im, GRANULARITY[granularity], min_score)
    label_at = [interior_point(r.mask) for r in regions]
    marks = [describe(i, r, xy) for i, (r, xy) in enumerate(zip(regions, label_at, strict=True))]
    summary = (f"{len(marks)} region(s) of {image} at {granularity} granularity, marked by {mark}"
               + (": " + "; ".join(f"{m['id']} bbox {m['bbox']} area {m['area']}" for m in marks) if marks
                  else " (none passed min_score; try a lower min_score or another granularity)"))
    return ToolOutput(summary, draw_marks(im, [r.mask for r in regions], label_at, mark),
                      {"granularity": granularity, "mark": mark, "masks": marks})

"""Open-vocabulary detection with Grounding DINO: whole-image and sliding-window tools."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from PIL import Image
from pydantic import Field
from trompe_server import ImageId, ToolContext, ToolInputError, ToolOutput, check_range

from .overlay import draw_boxes
from .runtime import DETECTOR, LoadedModel, loaded

Query = Annotated[str, Field(description="what to find: one or more phrases separated by '.' or ',', "
                                         "e.g. 'cat. red car'")]
BoxThreshold = Annotated[float, Field(description="minimum box confidence, 0 to 1")]
TextThreshold = Annotated[float, Field(description="minimum score of the phrase a box is labelled with, 0 to 1")]
MAX_PHRASES = 16
MAX_DETECTIONS = 100
MAX_TILES = 256
TILE_BATCH = 4


@dataclass
class Detection:
    """One box in pixels of the image it was found in, with its query phrase and confidence."""

    box: tuple[float, float, float, float]
    label: str
    score: float

    def describe(self) -> dict:
        return {"label": self.label, "score": round(self.score, 4), "box": [round(v, 1) for v in self.box]}


def parse_query(query: str) -> list[str]:
    """Phrases of a query, lower-cased as Grounding DINO expects."""
    phrases = [" ".join(p.split()).lower() for p in re.split(r"[.,;\n]", query)]
    phrases = list(dict.fromkeys(p for p in phrases if p))
    if not phrases:
        raise ToolInputError("query", "is empty; give one or more phrases separated by '.', "
                             "e.g. 'cat. red car'")
    if len(phrases) > MAX_PHRASES:
        raise ToolInputError("query", f"has {len(phrases)} phrases; accepted: 1 to {MAX_PHRASES}")
    return phrases


def _phrase_of_tokens(input_ids: Sequence[int], separator: int, special: set[int]) -> list[int]:
    """For each text position, the index of the query phrase it belongs to (-1 for separators/special)."""
    owner, phrase = [], 0
    for token in input_ids:
        if token == separator:
            owner.append(-1)
            phrase += 1
        else:
            owner.append(-1 if token in special else phrase)
    return owner


def detect(loaded: LoadedModel, images: Sequence[Image.Image], phrases: list[str], box_threshold: float,
           text_threshold: float) -> list[list[Detection]]:
    """Boxes per image: score = best token probability; label = the phrase whose tokens score highest."""
    import torch

    processor, tokenizer = loaded.processor, loaded.processor.tokenizer
    text = ". ".join(phrases) + "."
    inputs = processor(images=list(images), text=[text] * len(images), return_tensors="pt")
    with loaded.forward():
        outputs = loaded.model(**loaded.pixels(inputs))
    probs = outputs.logits.float().sigmoid().cpu()            # (batch, queries, text positions)
    boxes = outputs.pred_boxes.float().cpu()                   # (batch, queries, 4) as cx, cy, w, h in 0..1
    separator = tokenizer.convert_tokens_to_ids(".")
    owner = torch.tensor(_phrase_of_tokens(inputs["input_ids"][0].tolist(), separator,
                                           set(tokenizer.all_special_ids)))
    phrase_scores = torch.full((*probs.shape[:2], len(phrases)), 0.0)
    for index in range(len(phrases)):
        columns = (owner == index).nonzero().flatten()
        if len(columns):
            phrase_scores[..., index] = probs[..., columns].amax(-1)
    results = []
    for image, prob, box, per_phrase in zip(images, probs, boxes, phrase_scores, strict=True):
        width, height = image.size
        score = prob[:, : len(owner)].amax(-1)
        best_score, best_phrase = per_phrase.max(-1)
        keep = ((score >= box_threshold) & (best_score >= text_threshold)).nonzero().flatten()
        found = []
        for q in keep[score[keep].argsort(descending=True)].tolist():
            cx, cy, w, h = box[q].tolist()
            xyxy = (max(0.0, (cx - w / 2) * width), max(0.0, (cy - h / 2) * height),
                    min(float(width), (cx + w / 2) * width), min(float(height), (cy + h / 2) * height))
            if xyxy[0] < xyxy[2] and xyxy[1] < xyxy[3]:
                found.append(Detection(xyxy, phrases[best_phrase[q]], float(score[q])))
        results.append(found)
    return results


def overlap(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Intersection over union, and intersection over the smaller box's area."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    area_a, area_b = (a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])
    union = area_a + area_b - inter
    smaller = min(area_a, area_b)
    return (inter / union if union > 0 else 0.0), (inter / smaller if smaller > 0 else 0.0)


def merge(detections: Sequence[Detection], iou: float = 0.5,
          contained: float | None = None) -> list[Detection]:
    """Merge same-label boxes: duplicates (IoU above `iou`) keep the best; with `contained`, a box mostly
    inside another (that share of the smaller box) is joined into their union, repeated until stable."""
    kept: list[Detection] = []
    for det in sorted(detections, key=lambda d: -d.score):
        for i, other in enumerate(kept):
            if other.label != det.label:
                continue
            union_share, small_share = overlap(other.box, det.box)
            if union_share > iou:
                break
            if contained is not None and small_share >= contained:
                kept[i] = Detection(_union(other.box, det.box), other.label, other.score)
                break
        else:
            kept.append(det)
    if contained is not None and len(kept) < len(detections):
        return merge(kept, iou, contained)
    return kept


def _union(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, float]:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def shift(box: Sequence[float], dx: float, dy: float) -> tuple[float, float, float, float]:
    return box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy


def tile_starts(length: int, window: int, stride: int) -> list[int]:
    """Offsets of windows covering 0..length, the last one flush with the end."""
    if length <= window:
        return [0]
    starts = list(range(0, length - window + 1, stride))
    if starts[-1] + window < length:
        starts.append(length - window)
    return starts


def _result(image: Image.Image, image_id: str, phrases: list[str], found: list[Detection], how: str,
            extra: dict) -> ToolOutput:
    found = found[:MAX_DETECTIONS]
    colors = [phrases.index(d.label) for d in found]
    annotated = draw_boxes(image, [d.box for d in found], [f"{d.label} {d.score:.2f}" for d in found], colors)
    listing = "; ".join(f"{d.label} {d.score:.2f} [{', '.join(f'{v:.0f}' for v in d.box)}]" for d in found)
    summary = (f"{len(found)} detection(s) of {' / '.join(phrases)} in {image_id}{how}"
               + (f": {listing}" if found else " (try lower thresholds or other words)"))
    data = {"query": phrases, "detections": [d.describe() for d in found]}
    return ToolOutput(summary, annotated, data | extra)


def detect_objects(ctx: ToolContext, image: ImageId, query: Query, box_threshold: BoxThreshold = 0.35,
                   text_threshold: TextThreshold = 0.25) -> ToolOutput:
    """Find objects described in words (Grounding DINO); draws labelled boxes and lists them in pixels."""
    phrases = parse_query(query)
    check_range(box_threshold, 0, 1, "box_threshold")
    check_range(text_threshold, 0, 1, "text_threshold")
    im = ctx.image(image).convert("RGB")
    model = loaded(ctx, DETECTOR, 1)
    found = merge(detect(model, [im], phrases, box_threshold, text_threshold)[0])
    return _result(im, image, phrases, found, "", {})


def sliding_window_detection(
    ctx: ToolContext, image: ImageId, query: Query,
    window: Annotated[int, Field(description="tile side in pixels, 64 to 4096")] = 512,
    stride: Annotated[int, Field(description="step between tiles in pixels, 16 to window")] = 384,
    box_threshold: BoxThreshold = 0.35, text_threshold: TextThreshold = 0.25,
) -> ToolOutput:
    """Find small objects: run the detector on overlapping tiles and merge boxes split across tiles."""
    phrases = parse_query(query)
    check_range(window, 64, 4096, "window")
    check_range(stride, 16, window, "stride")
    check_range(box_threshold, 0, 1, "box_threshold")
    check_range(text_threshold, 0, 1, "text_threshold")
    width, height = ctx.size(image)
    xs, ys = tile_starts(width, window, stride), tile_starts(height, window, stride)
    if len(xs) * len(ys) > MAX_TILES:
        raise ToolInputError("stride", f"{window}/{stride} makes {len(xs) * len(ys)} tiles of this "
                             f"{width}x{height} image; accepted: at most {MAX_TILES} "
                             "(raise window or stride)")
    im = ctx.image(image).convert("RGB")
    tiles = [(x, y) for y in ys for x in xs]
    model, found = loaded(ctx, DETECTOR, len(tiles)), []
    for start in range(0, len(tiles), TILE_BATCH):
        ctx.progress(start, len(tiles), f"{start} of {len(tiles)} tiles")  # a cancelled call stops between batches
        batch = tiles[start:start + TILE_BATCH]
        crops = [im.crop((x, y, min(width, x + window), min(height, y + window))) for x, y in batch]
        per_tile = detect(model, crops, phrases, box_threshold, text_threshold)
        for (x, y), dets in zip(batch, per_tile, strict=True):
            found += [Detection(shift(d.box, x, y), d.label, d.score) for d in dets]
    merged = merge(found, contained=0.8)
    return _result(im, image, phrases, merged, f" over {len(tiles)} tile(s) of {window}px, stride {stride}",
                   {"tiles": len(tiles), "window": window, "stride": stride, "raw_detections": len(found)})


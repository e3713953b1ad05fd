"""Independent measurements of rendered illusion probes, read from the pixels alone.

Generator params are used only to know where to look (which half, which box); every size, length, curvature,
offset, angle and shade is measured from the image. A measurement says either which two values are compared
(`values`, in the order the generator names them: left/right, upper/lower, AB/BC) or whether the asked-about
property holds (`holds`), plus `departure`: how far the stimulus is from the genuine illusion, in the family's
magnitude units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trompe_agents.probes.base import Probe


@dataclass
class Measured:
    departure: float
    values: tuple[float, float] | None = None
    holds: bool | None = None

    def __post_init__(self):
        self.departure = float(self.departure)
        self.holds = None if self.holds is None else bool(self.holds)


def pixels(probe: Probe) -> np.ndarray:
    return np.asarray(probe.image, dtype=np.float64)


def chroma_cover(probe: Probe) -> np.ndarray:
    """How much of each pixel is the (saturated) target, given that everything else is grey."""
    arr = pixels(probe)
    chroma = arr.max(axis=2) - arr.min(axis=2)
    return chroma / chroma.max()


def clusters(profile: np.ndarray, floor: float = 1e-6) -> list[tuple[int, int]]:
    """Runs [start, stop) where a 1-D profile is above `floor`."""
    on = np.concatenate([[False], profile > floor, [False]])
    edges = np.flatnonzero(on[1:] != on[:-1])
    return list(zip(edges[::2], edges[1::2]))


def centroids(cover: np.ndarray, trim: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Per column: the coverage-weighted row of the target, over columns well inside its extent."""
    mass = cover.sum(axis=0)
    cols = np.flatnonzero(mass > 0.5 * mass.max())
    cols = cols[(cols >= cols.min() + trim) & (cols <= cols.max() - trim)]
    rows = np.arange(cover.shape[0])
    return cols.astype(float), (cover[:, cols] * rows[:, None]).sum(axis=0) / mass[cols]


def sagitta(cover: np.ndarray) -> tuple[float, int]:
    """Fit y = a·x² + b·x + c to a roughly horizontal stroke; return its bulge over the stroke's full length."""
    mass = cover.sum(axis=0)
    covered = np.flatnonzero(mass > 0.5 * mass.max())
    length = covered.max() - covered.min() + 1
    xs, ys = centroids(cover)
    a = np.polyfit(xs - xs.mean(), ys, 2)[0]
    return abs(a) * (length / 2) ** 2, length


def relative(values: tuple[float, float]) -> float:
    """Difference relative to the mean, the unit of the size and length magnitudes."""
    return abs(values[0] - values[1]) / ((values[0] + values[1]) / 2)


# --- size -----------------------------------------------------------------------------------------------


def halves(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mid = image.shape[1] // 2
    return image[:, :mid], image[:, mid:]


def circle_radii(probe: Probe) -> Measured:
    radii = tuple(math.sqrt(h.sum() / math.pi) for h in halves(chroma_cover(probe)))
    return Measured(relative(radii), values=radii)


def irradiation_sizes(probe: Probe) -> Measured:
    """Each shape's side as sqrt(area): light coverage on the dark half, dark coverage on the light half."""
    grey = pixels(probe).mean(axis=2) / 255.0
    sizes = []
    for half in halves(grey):
        dark_ground = half[0, 0] < 0.5
        cover = half if dark_ground else 1.0 - half
        sizes.append(math.sqrt(cover.sum()))
    return Measured(relative(tuple(sizes)), values=tuple(sizes))


# --- line length ----------------------------------------------------------------------------------------


def bar_lengths(probe: Probe) -> Measured:
    """The upper and lower coloured bars: their length is the largest coverage sum along one row."""
    cover = chroma_cover(probe)
    mid = cover.shape[0] // 2
    lengths = (cover[:mid].sum(axis=1).max(), cover[mid:].sum(axis=1).max())
    return Measured(relative(lengths), values=lengths)


def marker_gaps(probe: Probe) -> Measured:
    """Centres of the three coloured markers A, B, C from the column profile; return AB and BC."""
    profile = chroma_cover(probe).sum(axis=0)
    found = clusters(profile, floor=0.05)
    assert len(found) == 3, f"expected three markers, found {len(found)}"
    xs = [np.average(np.arange(a, b), weights=profile[a:b]) for a, b in found]
    gaps = (xs[1] - xs[0], xs[2] - xs[1])
    return Measured(relative(gaps), values=gaps)


# --- straightness ---------------------------------------------------------------------------------------

STRAIGHT_PX = 0.75  # a fitted bulge below this is a straight line drawn on pixels


def two_lines_bend(probe: Probe) -> Measured:
    cover = chroma_cover(probe)
    mid = cover.shape[0] // 2
    bends = [sagitta(part) for part in (cover[:mid], cover[mid:])]
    worst = max(b for b, _ in bends)
    return Measured(max(b / length for b, length in bends), holds=worst < STRAIGHT_PX)


def square_sides_bend(probe: Probe) -> Measured:
    """Each side of the coloured square, looked at in a band around where the generator put it."""
    cover = chroma_cover(probe)
    (x0, y0), _, (x1, y1), _ = probe.params["corners"]
    band = (x1 - x0) * 0.3
    inner = slice(round(x0 + band / 2), round(x1 - band / 2))
    views = []
    for y in (y0, y1):
        views.append(cover[max(0, round(y - band)): round(y + band), inner])
    for x in (x0, x1):
        views.append(cover[inner, max(0, round(x - band)): round(x + band)].T)
    bulges = []
    for view in views:
        xs, ys = centroids(view, trim=0)
        a = np.polyfit(xs - xs.mean(), ys, 2)[0]
        bulges.append(abs(a) * ((x1 - x0) / 2) ** 2)
    return Measured(max(bulges) / (x1 - x0), holds=max(bulges) < STRAIGHT_PX)


# --- alignment ------------------------------------------------------------------------------------------


def poggendorff_offset(probe: Probe) -> Measured:
    """Fit a line to each visible segment and compare where both reach the middle of the occluding bar."""
    cover = chroma_cover(probe)
    top_row = pixels(probe)[0].mean(axis=1)
    bar = np.flatnonzero(top_row < 254.5)
    centre = (bar.min() + bar.max()) / 2
    ends = []
    for part, x_from in ((cover[:, : bar.min() - 1], 0), (cover[:, bar.max() + 2:], bar.max() + 2)):
        xs, ys = centroids(part)
        slope, intercept = np.polyfit(xs + x_from, ys, 1)
        ends.append(slope * centre + intercept)
    offset = abs(ends[1] - ends[0])
    return Measured(offset / probe.image.width, holds=offset < 1.0)


# --- parallelism ----------------------------------------------------------------------------------------

PARALLEL_DEG = 0.3


def zollner_angles(probe: Probe) -> Measured:
    """Find each coloured column, fit x = a·y + b to its rows, and compare the angles."""
    cover = chroma_cover(probe)
    angles = []
    for a, b in clusters(cover.sum(axis=0), floor=0.5):
        ys, xs = centroids(cover[:, a:b].T)
        angles.append(math.degrees(math.atan(np.polyfit(ys, xs + a, 1)[0])))
    return spread(angles)


def spread(angles: list[float]) -> Measured:
    assert len(angles) >= 3, f"expected several lines, found {len(angles)}"
    return Measured(max(abs(p - q) for p, q in zip(angles, angles[1:])),
                    holds=max(angles) - min(angles) < PARALLEL_DEG)


def cafe_wall_angles(probe: Probe) -> Measured:
    """Mortar is the commonest pixel value that is neither black nor white; track each mortar line across."""
    grey = pixels(probe)[..., 0]
    values, counts = np.unique(grey[(grey > 0) & (grey < 255)], return_counts=True)
    mortar = grey == values[counts.argmax()]
    height, width = grey.shape
    cx = width // 2
    starts = [(a + b - 1) / 2 for a, b in clusters(mortar[:, cx].astype(float))]
    starts = [y for y in starts if 2 < y < height - 3]
    window = min(np.diff(starts)) * 0.35
    angles = []
    for start in starts:
        points = []
        for direction in (range(cx, width), range(cx - 1, -1, -1)):
            y = start
            for x in direction:
                rows = np.flatnonzero(mortar[max(0, round(y - window)): round(y + window) + 1, x])
                if len(rows):
                    y = rows.mean() + max(0, round(y - window))
                    points.append((x, y))
        xs, ys = np.array(points).T
        angles.append(math.degrees(math.atan(np.polyfit(xs, ys, 1)[0])))
    return spread(angles)


# --- colour ---------------------------------------------------------------------------------------------


def flat_value(probe: Probe, box: list[int]) -> float:
    """The single value of a flat box; fails if the box is not flat."""
    x0, y0, x1, y1 = box
    patch = pixels(probe)[y0:y1, x0:x1]
    assert patch.size and np.ptp(patch) == 0, f"region {box} is not flat"
    return float(patch[0, 0, 0])


def shade_gap(values: tuple[float, float]) -> Measured:
    return Measured(abs(values[0] - values[1]) / 255, values=values)


def box_shades(probe: Probe) -> Measured:
    return shade_gap(tuple(flat_value(probe, box) for box in probe.params["boxes"]))


def bar_shades(probe: Probe) -> Measured:
    """All grey bars on one side share a value; compare the left side's with the right side's."""
    sides: dict[int, set[float]] = {0: set(), 1: set()}
    for side, *box in probe.params["bars"]:
        sides[side].add(flat_value(probe, box))
    assert all(len(v) == 1 for v in sides.values())
    return shade_gap((sides[0].pop(), sides[1].pop()))


def plateau_shades(probe: Probe) -> Measured:
    """The far left and far right columns, with a check that the edge really carries the Cornsweet ramp."""
    width, height = probe.image.size
    row = pixels(probe)[height // 2, :, 0]
    left, right = flat_value(probe, [0, 0, 3, height]), flat_value(probe, [width - 3, 0, width, height])
    mid = width // 2
    assert abs(row[mid - 1] - left) >= 20 and abs(row[mid] - right) >= 20
    return shade_gap((left, right))


def circle_colours(probe: Probe) -> Measured:
    arr = pixels(probe)
    found = []
    for cx, cy in probe.params["centres"]:
        patch = arr[cy - 3: cy + 4, cx - 3: cx + 4].reshape(-1, 3)
        assert np.ptp(patch, axis=0).max() == 0, "circle centre is not flat"
        found.append(patch[0])
    assert np.abs(arr[2, 2] - arr[2, -3]).max() > 60, "the two surrounds should clearly differ"
    diff = np.abs(found[0] - found[1])
    return Measured(diff.max() / 255, holds=bool(diff.max() == 0))


# --- boundary -------------------------------------------------------------------------------------------


def strip_edges(probe: Probe) -> Measured:
    """Compare where a row's value changes with where the tick marks below the strips are."""
    return _strip_edges(pixels(probe)[..., 0])


def strip_edges_horizontal(probe: Probe) -> Measured:
    """The same, down a column of horizontal strips with the ticks on their right."""
    return _strip_edges(pixels(probe)[..., 0].T)


def _strip_edges(arr: np.ndarray) -> Measured:
    row = arr[arr.shape[0] // 3]
    changes = set(np.flatnonzero(np.diff(row) != 0) + 1)
    tick_rows = [r for r in range(arr.shape[0]) if (arr[r] == 0).any() and (arr[r] > 0).mean() > 0.5]
    ticks = [(a + b) // 2 for a, b in clusters((arr[tick_rows[0]] == 0).astype(float))]
    assert changes <= {t for t in range(min(ticks) - 3, max(ticks) + 4)} and all(
        any(abs(c - t) <= 2 for t in ticks) for c in changes), "a value changes away from a tick"
    missing = sum(1 for t in ticks if not any(abs(c - t) <= 2 for c in changes))
    return Measured(float(missing), holds=missing == 0)


MEASURE = {
    "ebbinghaus": circle_radii,
    "delboeuf": circle_radii,
    "irradiation": irradiation_sizes,
    "muller_lyer": bar_lengths,
    "muller_lyer_markers": marker_gaps,
    "ponzo": bar_lengths,
    "hering": two_lines_bend,
    "wundt": two_lines_bend,
    "orbison": square_sides_bend,
    "poggendorff": poggendorff_offset,
    "zollner": zollner_angles,
    "cafe_wall": cafe_wall_angles,
    "simultaneous_contrast": box_shades,
    "whites": bar_shades,
    "cornsweet": plateau_shades,
    "colour_circles": circle_colours,
    "chevreul": strip_edges,
    "chevreul_horizontal": strip_edges_horizontal,
}

# How unequal two measured sizes/lengths may be and still count as equal (pixels blur ~1%), and how close the
# measured departure must come to the requested magnitude.
EQUAL_REL = {"size": 0.02, "line length": 0.02, "colour": 0.0}


def expected_answer(probe: Probe, measured: Measured) -> str:
    """The answer implied by the measurement and by how the question was put (params['ask'])."""
    ask = probe.params["ask"]
    if measured.holds is not None:
        yes = measured.holds if ask["form"] == "affirm" else not measured.holds
    else:
        v = measured.values
        equal = abs(v[0] - v[1]) <= EQUAL_REL[probe.category] * min(v)
        if ask["form"] == "same":
            yes = equal
        elif ask["form"] == "differ":
            yes = not equal
        else:
            first, second = ask["order"]
            yes = not equal and v[first] > v[second]
    return "yes" if yes else "no"

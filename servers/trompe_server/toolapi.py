"""What a plugin's tool function sees: argument types, a context to read images, and its result."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from PIL import Image, ImageColor
from pydantic import Field

from .admission import PIXEL_BYTES, WORK_FACTOR
from .errors import LimitError, ToolInputError
from .registry import Registry

ImageId = Annotated[str, Field(description="id of an image in this session, e.g. 'original' or 'img_002'")]
Finite = Annotated[float, Field(allow_inf_nan=False)]  # "NaN", "inf" or "1e309" sent as text are refused too
Box = Annotated[list[Finite], Field(min_length=4, max_length=4,
                                    description="[x0, y0, x1, y1] in pixels of the referenced image, x0<x1, y0<y1")]
Point = Annotated[list[Finite], Field(min_length=2, max_length=2, description="[x, y] in pixels")]
Color = Annotated[str, Field(description="colour name ('red') or hex ('#ff0000', '#ff000080')")]


@dataclass
class ToolOutput:
    """A tool's result: a one-line summary, optionally a new image, optionally extra metadata."""

    summary: str
    image: Image.Image | None = None  # kept by the registry as it is: the tool never changes it afterwards
    data: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool: its function, tags and the plugin that provided it."""

    name: str
    fn: Callable[..., ToolOutput]
    tags: frozenset[str]
    plugin: str
    copies: float = WORK_FACTOR  # full-size working copies (4 bytes a pixel) a call holds per image it reads

    @property
    def summary(self) -> str:
        """The docstring's first line, for --list-tools."""
        return next(iter((self.fn.__doc__ or "").strip().splitlines()), "")


class Cancelled(Exception):
    """The caller gave up on the call (MCP `notifications/cancelled`): the tool stops at its next progress point."""


@dataclass
class Progress:
    """A long call's line back to its caller: how far it got (MCP progress notifications), whether it was cancelled.

    `report` is the transport's (a no-op where the caller asked for no progress); `cancelled` is set from the event
    loop when the caller cancels, and read by the worker thread at each progress point."""

    report: Callable[[float, float | None, str], None] = lambda done, total, message: None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled


@dataclass
class ToolContext:
    """Reads images of one session for one tool call and remembers which ones it read (the parents)."""

    registry: Registry
    session: str
    parents: list[str] = field(default_factory=list)
    copies: float = WORK_FACTOR  # the tool's ToolSpec.copies: what each image read reserves, in working copies
    line: Progress = field(default_factory=Progress)

    def progress(self, done: float, total: float | None = None, message: str = "") -> None:
        """Say how far a long tool got (e.g. tiles done of all); ends the call here if the caller cancelled it."""
        self.line.check()
        self.line.report(done, total, message)

    @property
    def limits(self):
        return self.registry.limits

    def image(self, image_id: str, argument: str = "image") -> Image.Image:
        """A copy of the image's pixels (RGB or RGBA), safe to draw on."""
        im = self.view(image_id, argument)
        return im.copy() if im.readonly else im  # a storage's shared image, or one made for this call alone

    def view(self, image_id: str, argument: str = "image") -> Image.Image:
        """The image's stored pixels, shared with other calls: for tools that only read them (crop, measure).

        Never draw on it; image() gives a copy to draw on. A crop of a view costs the box, not the image."""
        new = image_id not in self.parents
        if new and len(self.parents) >= self.limits.max_inputs:
            raise LimitError(argument, f"one tool call may combine at most {self.limits.max_inputs} images "
                             "(max_inputs)")
        record = self.registry.record(self.session, image_id, argument)
        if new:
            self.registry.work.reserve(round(self.copies * PIXEL_BYTES * record.width * record.height))
        im = self.registry.pixels(self.session, record)
        if new:
            self.parents.append(image_id)
        return im

    def size(self, image_id: str, argument: str = "image") -> tuple[int, int]:
        record = self.registry.record(self.session, image_id, argument)
        return record.width, record.height


def check_box(box: Sequence[float], size: tuple[int, int], argument: str = "box") -> tuple[int, int, int, int]:
    """Round a box to pixels and require it to be non-empty, ordered and inside the image."""
    width, height = size
    x0, y0, x1, y1 = (round(v) for v in box)
    accepted = f"accepted: 0 <= x0 < x1 <= {width}, 0 <= y0 < y1 <= {height}"
    if x0 >= x1 or y0 >= y1:
        raise ToolInputError(argument, f"{_numbers(box)} is empty or inverted; {accepted}")
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise ToolInputError(argument, f"{_numbers(box)} is outside the {width}x{height} image; {accepted}")
    return x0, y0, x1, y1


def check_point(point: Sequence[float], size: tuple[int, int], argument: str = "point",
                margin: float = 0) -> tuple[float, float]:
    """Require a point to lie within the image (plus an optional margin, for line ends)."""
    width, height = size
    x, y = point
    if not (-margin <= x <= width + margin and -margin <= y <= height + margin):
        low, right, bottom = -margin, width + margin, height + margin
        raise ToolInputError(argument, f"{_numbers(point)} is outside the {width}x{height} image; "
                             f"accepted: {low:g} <= x <= {right:g}, {low:g} <= y <= {bottom:g}")
    return float(x), float(y)


def _numbers(values: Sequence[float]) -> str:
    """[40, 8, 8, 24] as the caller wrote it, not [40.0, 8.0, ...] after pydantic made floats of it."""
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def check_range(value: float, low: float, high: float, argument: str) -> float:
    """Require low <= value <= high, naming the argument and the range."""
    if not low <= value <= high:
        raise ToolInputError(argument, f"{value:g} is out of range; accepted: {low:g} to {high:g}")
    return value


def parse_color(color: str, argument: str = "color") -> tuple[int, int, int, int]:
    """RGBA from a colour name or hex string."""
    try:
        rgba = ImageColor.getrgb(color.strip())
    except (ValueError, AttributeError):
        raise ToolInputError(argument, f"{color!r} is not a colour; use a name ('red') or hex "
                             "('#RRGGBB' or '#RRGGBBAA')") from None
    if not all(0 <= v <= 255 for v in rgba):  # Pillow passes rgb(300,0,0) through unclipped
        raise ToolInputError(argument, f"{color!r} has a component outside 0 to 255; accepted: rgb(R, G, B) "
                             "with each of R, G, B from 0 to 255, a name ('red') or hex ('#RRGGBB')")
    return rgba if len(rgba) == 4 else (*rgba, 255)

"""Refusals built from a tool's JSON schema: the exact one line a caller reads, for every kind of constraint a
plugin can declare with type hints and Field (ranges, exclusive bounds, counts, choices, kinds, optional
values), and nothing stored when a call is refused."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from trompe_server import ImageId, Point, ToolContext, ToolOutput, check_point, hookimpl


def adjust(ctx: ToolContext, image: ImageId,
           level: Annotated[float, Field(ge=0, le=1, description="blend weight")] = 0.5,
           gain: Annotated[float, Field(gt=0, lt=4)] = 1,
           count: Annotated[int, Field(ge=2)] = 2,
           cap: Annotated[float, Field(le=9.5)] = 1,
           step: Annotated[int, Field(multiple_of=2)] = 2,
           flip: bool = False,
           options: dict[str, Any] | None = None,
           tags: Annotated[list[str], Field(max_length=3)] = [],  # noqa: B006 (pydantic copies defaults)
           weights: Annotated[list[int], Field(min_length=1, max_length=3)] = [1],  # noqa: B006
           anything: list = [],  # noqa: B006
           mode: Literal["only"] = "only",
           either: float | str = 0) -> ToolOutput:
    """Take constrained arguments and report the image's size (test plugin)."""
    width, height = ctx.size(image)
    return ToolOutput(f"{image} is {width}x{height}")


def pin(ctx: ToolContext, image: ImageId, point: Point) -> ToolOutput:
    """Check a point with check_point's defaults: named 'point', no margin (test plugin)."""
    x, y = check_point(point, ctx.size(image))
    return ToolOutput(f"pin at ({x:g}, {y:g})")


class ConstrainedPlugin:
    """Registers `adjust`, whose arguments carry one of each constraint the schema can state, and `pin`."""

    @hookimpl
    def register_tools(self, register):
        register(adjust, tags=("test",))
        register(pin, tags=("test",))


@pytest.fixture
def app(make_app):
    return make_app(extra_plugins={"constrained": ConstrainedPlugin()})


CROPS = [{"image": "original", "box": [0, 0, 5, 5]}] * 2


@pytest.mark.parametrize("tool, arguments, line", [
    ("adjust", {"level": 2}, "level: 2 is out of range; accepted: a number from 0 to 1 (blend weight)"),
    ("adjust", {"level": -0.5}, "level: -0.5 is out of range; accepted: a number from 0 to 1 (blend weight)"),
    ("adjust", {"gain": 0}, "gain: 0 is out of range; accepted: a number of more than 0 and less than 4"),
    ("adjust", {"gain": 4.5}, "gain: 4.5 is out of range; accepted: a number of more than 0 and less than 4"),
    ("adjust", {"count": 1}, "count: 1 is out of range; accepted: a whole number of at least 2"),
    ("adjust", {"count": 2.5}, "count: 2.5 is not a whole number; accepted: a whole number of at least 2"),
    ("adjust", {"cap": 10}, "cap: 10 is out of range; accepted: a number of at most 9.5"),
    ("adjust", {"step": 3}, "step: input should be a multiple of 2; accepted: a whole number"),
    ("adjust", {"flip": "maybe"}, "flip: 'maybe' is not true or false; accepted: true or false"),
    ("adjust", {"options": 3}, "options: 3 is not an object; accepted: an object"),
    ("adjust", {"tags": ["a", "b", "c", "d"]}, "tags: has 4 items, at most 3 allowed; accepted: a list of 0 to 3 "
                                               "strings"),
    ("adjust", {"tags": [1]}, "tags[0]: 1 is not text; accepted: a list of 0 to 3 strings"),
    ("adjust", {"weights": []}, "weights: has 0 items, needs at least 1 item; accepted: a list of 1 to 3 whole "
                                "numbers"),
    ("adjust", {"weights": ["x"]}, "weights[0]: 'x' is not a whole number; accepted: a list of 1 to 3 whole "
                                   "numbers"),
    ("adjust", {"anything": 5}, "anything: 5 is not a list; accepted: a list of values"),
    ("adjust", {"mode": "other"}, "mode: 'other' is not one of 'only'; accepted: 'only'"),
    ("adjust", {"either": [1]}, "either[float]: [1] is not a number; accepted: a value (and 1 more argument "
                                "error)"),
    ("adjust", {"level": 2, "gain": 0, "count": 0}, "level: 2 is out of range; accepted: a number from 0 to 1 "
                                                    "(blend weight) (and 2 more argument errors)"),
    ("adjust", {"image": None}, "image: None is not text; accepted: text (id of an image in this session, e.g. "
                                "'original' or 'img_002')"),
    ("pin", {"point": [64.5, 0]}, "point: [64.5, 0] is outside the 64x48 image; accepted: 0 <= x <= 64, 0 <= y <= 48"),
    ("pin", {"point": [0, -0.1]}, "point: [0, -0.1] is outside the 64x48 image; accepted: 0 <= x <= 64, 0 <= y <= 48"),
    ("sample_color", {"image": "original", "points": [[1]]},
     "points[0]: has 1 item, needs at least 2 items; accepted: a list of at least 1 lists (1 to 12 points [x, y] "
     "to sample)"),
    ("sample_color", {"image": "original"}, "points: missing; accepted: a list of at least 1 lists (1 to 12 points "
                                            "[x, y] to sample)"),
    ("crop", {"image": "original", "box": [0, 0, 5, 5, 6]},
     "box: has 5 items, at most 4 allowed; accepted: a list of 4 numbers ([x0, y0, x1, y1] in pixels of the "
     "referenced image, x0<x1, y0<y1)"),
    ("crop", {"image": "original", "box": [0, 0, "1e309", 5]},
     "box[2]: 1e309 is not a finite number; accepted: a list of 4 numbers ([x0, y0, x1, y1] in pixels of the "
     "referenced image, x0<x1, y0<y1)"),
    ("draw_circle", {"image": "original", "center": ["NaN", 4], "radius": 3},
     "center[0]: NaN is not a finite number; accepted: a list of 2 numbers ([x, y] in pixels)"),
    ("compare_crops", {"crops": CROPS, "layout": "diagonal"},
     "layout: 'diagonal' is not one of 'horizontal', 'vertical' or 'grid'; accepted: one of 'horizontal', "
     "'vertical' or 'grid' (place regions in a row, a column or a grid)"),
    ("compare_crops", {"crops": CROPS, "scale": "big"},
     "scale: 'big' is not a number; accepted: a number (output pixels per source pixel for every region, 0.1 to "
     "16; default: the largest whole number (1 to 8) that keeps the biggest region within 512 px)"),
    ("compare_crops", {"crops": ["x", {"image": "original", "box": ["-inf", 0, 5, 5]}]},
     "crops[0]: input should be a valid dictionary or instance of Region; accepted: a list of values (2 to 6 "
     "regions {image, box}, from any images of the session) (and 1 more argument error)"),
])
async def test_schema_refusals_read_exactly(client, open_image, tool, arguments, line):
    session = await open_image()
    before = await client.call_tool("list_images", {"session": session})
    result = await client.call_tool(tool, {"session": session, "image": "original", **arguments})
    assert result.is_error
    assert result.content[0].text == f"Error executing tool {tool}: {line}"
    assert (await client.call_tool("list_images", {"session": session})).structured_content == \
        before.structured_content


async def test_valid_constrained_arguments_reach_the_tool(client, open_image):
    session = await open_image()
    result = await client.call_tool("adjust", {"session": session, "image": "original", "level": 1, "gain": 3.9,
                                               "count": 9, "cap": 9.5, "step": 4, "weights": [1, 2, 3]})
    assert not result.is_error, result.content[0].text
    assert result.content[0].text == "original is 64x48"
    for point in ([0, 0], [64, 48]):  # the image's edges are inside
        result = await client.call_tool("pin", {"session": session, "image": "original", "point": point})
        assert result.content[0].text == f"pin at ({point[0]}, {point[1]})"


@pytest.mark.parametrize("arguments, line", [
    ({"level": math.nan}, "level: nan is not a finite number; accepted: a number from 0 to 1 (blend weight)"),
    ({"options": {"a": [1, -math.inf]}}, "options[a][1]: -inf is not a finite number; accepted: an object"),
    ({"unknown": math.inf}, "unknown: inf is not a finite number; accepted: see the tool's description"),
])
async def test_non_finite_numbers_are_refused_before_the_tool_runs(app, arguments, line):
    """The MCP client turns NaN into null, so these call the server's tools/call handler directly, as its JSON
    reader would after reading NaN, Infinity or 1e309."""
    with pytest.raises(ToolError) as refused:
        await app.mcp.call_tool("adjust", {"session": "s_none", "image": "original", **arguments})
    assert str(refused.value) == f"Error executing tool adjust: {line}"

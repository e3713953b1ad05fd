"""A third-party trompe plugin: one tool that posterizes an image."""

from typing import Annotated

from PIL import ImageOps
from pydantic import Field
from trompe_server import ImageId, ToolContext, ToolOutput, check_range, hookimpl


def posterize(ctx: ToolContext, image: ImageId,
              bits: Annotated[int, Field(description="bits kept per channel, 1 to 8")] = 2) -> ToolOutput:
    """Keep only the top bits of each channel, so regions of near-equal colour merge into flat patches."""
    check_range(bits, 1, 8, "bits")
    im = ctx.image(image)
    rgb = ImageOps.posterize(im.convert("RGB"), bits)
    if im.mode == "RGBA":
        rgb.putalpha(im.getchannel("A"))
    return ToolOutput(f"posterize {image} to {bits} bits per channel", rgb)


@hookimpl
def register_tools(register):
    register(posterize, tags=("example",))

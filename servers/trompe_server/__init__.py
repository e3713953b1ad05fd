"""trompe's MCP image-tool server: an immutable image registry and tools from plugins."""

from trompe_kernel import __version__, hookimpl

from .errors import LimitError, ToolInputError
from .toolapi import (
    Box,
    Color,
    ImageId,
    Point,
    ToolContext,
    ToolOutput,
    check_box,
    check_point,
    check_range,
    parse_color,
)

__all__ = [
    "Box", "Color", "ImageId", "LimitError", "Point", "ToolContext", "ToolInputError", "ToolOutput",
    "__version__", "check_box", "check_point", "check_range", "hookimpl", "parse_color",
]

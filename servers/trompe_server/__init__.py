"""trompe's MCP image-tool server: an immutable image registry and tools from plugins."""

from .errors import LimitError, ToolInputError
from .hookspecs import hookimpl
from .version import __version__
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

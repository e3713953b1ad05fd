"""The server's MCP App (the MCP Apps extension, `io.modelcontextprotocol/ui`, spec 2026-01-26): `list_images`
names a `ui://` HTML resource in its tool `_meta.ui.resourceUri`, and a host that renders MCP Apps shows the
session's images beside the result as a strip with each one's lineage (operation, arguments, parents), each opened
full size on a click. The view reads the pixels through the host with `resources/read` of `image://SESSION/ID`.

Hosts without MCP Apps ignore the `_meta` and get `list_images`' text and structured content as before. The tool
list is the same for every client (cached, public), so the link is always there rather than only for clients that
announce the extension: the spec lets a host that does not render Apps treat the tool as a plain one.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
LINEAGE_URI = "ui://trompe/lineage.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"  # what the spec requires of an MCP App's HTML resource
VIEW_FILE = "lineage_view.html"
# the view loads nothing from the network: no CSP domains; a border, since it is a strip of pictures
RESOURCE_META: dict[str, Any] = {"ui": {"prefersBorder": True}}
TOOL_META: dict[str, Any] = {"ui": {"resourceUri": LINEAGE_URI}}


def lineage_view() -> str:
    """The app's HTML document, shipped in the package beside this module."""
    return files(__package__).joinpath(VIEW_FILE).read_text(encoding="utf-8")

"""Server-test helpers: a programmatic test plugin, fake installed distributions, real server processes.

A module with a unique name (not conftest) so test files can import it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated

from distkit import env_with  # noqa: F401  (re-exported: the server tests import it from here)
from netkit import free_port  # noqa: F401  (re-exported: the server tests import it from here)
from PIL import Image, ImageChops, ImageDraw
from pydantic import Field
from trompe_server import (
    Color,
    ImageId,
    Point,
    ToolContext,
    ToolInputError,
    ToolOutput,
    hookimpl,
    parse_color,
)

EXAMPLE_PLUGIN = Path(__file__).parent / "example_plugin"
SERVER = str(Path(sys.executable).with_name("trompe-server"))
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",  # an MCP client's first request
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "0"}}}


SPILL_BUDGET = "18KiB"  # a server given this budget spills the original of a 64x48 image at its first full crop


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def spill_over_stdio(proc: subprocess.Popen) -> None:
    """Over a text-mode stdio server's pipes: initialize, open a session and crop it whole, so a server started
    with SPILL_BUDGET has written its spill folder."""
    from imagekit import data_url, gradient

    _send(proc, INITIALIZE)  # answered only once the loop serves requests
    assert json.loads(proc.stdout.readline())["id"] == 1
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "open_session", "arguments": {"source": data_url(gradient())}}})
    session = json.loads(proc.stdout.readline())["result"]["structuredContent"]["session"]
    _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "crop", "arguments": {"session": session, "image": "original", "box": [0, 0, 64, 48]}}})
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 3 and not reply["result"]["isError"], reply


# A test plugin registered programmatically (ServerConfig.extra_plugins) -------------------------------

def paint_line(ctx: ToolContext, image: ImageId, start: Point, end: Point, color: Color = "red",
               width: Annotated[int, Field(ge=1, le=20)] = 1) -> ToolOutput:
    """Draw a straight line (test plugin)."""
    rgba = parse_color(color)
    im = ctx.image(image)
    ImageDraw.Draw(im).line([tuple(start), tuple(end)], fill=rgba[: len(im.mode)], width=width)
    return ToolOutput(f"line {start}->{end} on {image}", im)


def invert_colors(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Invert RGB (test plugin)."""
    return ToolOutput(f"inverted {image}", ImageChops.invert(ctx.image(image).convert("RGB")))


def blend_images(ctx: ToolContext, image: ImageId, other: ImageId) -> ToolOutput:
    """Average two images of the same size (test plugin): an output with two parents."""
    a, b = ctx.image(image).convert("RGB"), ctx.image(other, "other").convert("RGB")
    if a.size != b.size:
        raise ToolInputError("other", f"is {b.width}x{b.height}; accepted: the size of {image}, "
                             f"{a.width}x{a.height}")
    return ToolOutput(f"blend of {image} and {other}", Image.blend(a, b, 0.5))


def scribble_then_reject(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Draw on the copy it read, then fail (test plugin): the stored image must not change."""
    im = ctx.image(image)
    ImageDraw.Draw(im).rectangle([0, 0, im.width, im.height], fill="black")
    raise ToolInputError("image", "rejected on purpose after drawing on the copy")


def stack_images(ctx: ToolContext, images: list[str]) -> ToolOutput:
    """Read several images (test plugin), to exercise max_inputs."""
    ims = [ctx.image(i, "images") for i in images]
    out = Image.new("RGB", (max(i.width for i in ims), sum(i.height for i in ims)))
    y = 0
    for im in ims:
        out.paste(im.convert("RGB"), (0, y))
        y += im.height
    return ToolOutput(f"stack of {len(ims)}", out)


def buggy_tool(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Fail with an unexpected exception, as a plugin bug would (test plugin)."""
    ctx.image(image)
    return ToolOutput("never", Image.new("RGB", (1, 1 // 0)))


class Rendezvous:
    """Two tool calls that can only both finish if they run at the same time, i.e. off the event loop."""

    def __init__(self):
        self.barrier = threading.Barrier(2, timeout=10)

    def meet(self, ctx: ToolContext, image: ImageId) -> ToolOutput:
        """Wait for a second concurrent call (test plugin)."""
        ctx.size(image)
        self.barrier.wait()
        return ToolOutput(f"met on {image}")


class ToolkitPlugin:
    """Registers the test tools under tag `test`."""

    def __init__(self):
        self.rendezvous = Rendezvous()

    @hookimpl
    def register_tools(self, register):
        for fn in (paint_line, invert_colors, blend_images, scribble_then_reject, stack_images, buggy_tool):
            register(fn, tags=("test",))
        register(self.rendezvous.meet, tags=("test",), name="meet")


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the server answers on `port`; the bound only catches a stuck one (a start is ~8 s of CPU, far more
    on a loaded 2-core box)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early: {proc.communicate()[1]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port} within {timeout} s")


def same_pixels(a: Image.Image, b: Image.Image) -> bool:
    """Exact equality of size, mode and every pixel value."""
    return a.mode == b.mode and a.size == b.size and a.tobytes() == b.tobytes()


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, so the server removes its spill folder as a user's Ctrl-C or service stop would; kill if stuck."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.communicate(timeout=15)
            return
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.communicate()

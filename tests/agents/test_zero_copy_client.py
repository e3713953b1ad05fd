"""ToolClient with shared pixels against a real `trompe-server` over stdio: images arrive as read-only mapped pixels,
a model is shown the same PNG as before, and killing either side (SIGKILL) leaves nothing behind in /dev/shm or
in any process."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from imagekit import noise, png_bytes
from mcp import StdioServerParameters
from PIL import Image
from proctree import descendants
from distkit import env_with
from trompe_agents.pixel_segments import SharedImagePart, mapped, shared_parts
from trompe_agents.toolclient import ToolClient

PICTURE = noise((120, 80))
DRAW = {"image": "original", "start": [0, 0], "end": [119, 79], "width": 3}
SHM = Path("/dev/shm")
SERVER = str(Path(sys.executable).with_name("trompe-server"))


def client(shared: bool, *flags: str) -> ToolClient:
    """A stdio ToolClient of this checkout's server (ToolClient.stdio passes the SDK's default environment only)."""
    tools = ToolClient(StdioServerParameters(command=SERVER, args=list(flags), env=env_with()), label="test")
    tools.shared_pixels = shared
    return tools


def shm_files() -> set[tuple[str, int]]:
    """/dev/shm's files with their sizes (other programs on the machine add and remove their own meanwhile)."""
    found = set()
    for entry in SHM.iterdir():
        with contextlib.suppress(FileNotFoundError):
            found.add((entry.name, entry.stat().st_size))
    return found


def leaked(before: set[tuple[str, int]]) -> list[str]:
    """Files new in /dev/shm that could hold the picture's pixels (a segment would be exactly their size)."""
    return [name for name, size in shm_files() - before if size == PICTURE.width * PICTURE.height * 3]


def segment_mappings() -> list[str]:
    """This process's mappings of pixel segments."""
    return [line for line in Path("/proc/self/maps").read_text().splitlines() if "/memfd:trompe-pixels" in line]


def gone(pid: int, seconds: float) -> bool:
    """Whether process `pid` has ended (or is a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


@pytest.mark.parametrize("preview_side", ["1568", "50"])
async def test_shared_pixels_are_read_only_and_show_a_model_the_same_png(preview_side):
    """The full-size pixels, mapped read-only; the PNG a model gets (`data`) is the server's preview, byte for byte,
    downscaled or not, with the same text and structure."""
    replies = {}
    for shared in (False, True):
        async with client(shared, "--max-preview-side", preview_side) as tools:
            info = await tools.open_session({"original": png_bytes(PICTURE)})
            replies[shared] = await tools.call(info.id, "draw_line", DRAW)
            full = Image.open(io.BytesIO(await tools.image_png(info.id, "img_001")))
    plain, part = replies[False], replies[True].images[0]
    assert isinstance(part, SharedImagePart) and not isinstance(plain.images[0], SharedImagePart)
    assert (part.id, part.data, part.mime_type) == (plain.images[0].id, plain.images[0].data, "image/png")
    assert (replies[True].text, replies[True].structured) == (plain.text, plain.structured)
    assert np.array_equal(part.pixels, np.asarray(full)) and part.image().tobytes() == full.tobytes()
    assert not part.pixels.flags.writeable
    with pytest.raises(ValueError):
        part.pixels[0, 0] = 0
    with pytest.raises(ValueError):
        part.pixels.setflags(write=True)


async def test_a_segment_not_as_described_is_read_through_the_resource():
    """Another host's, PID namespace's or a closed segment: not mapped; the pixels come from image:// instead."""
    async with client(True) as tools:
        info = await tools.open_session({"original": png_bytes(PICTURE)})
        result = await tools._call_tool("draw_line", {"session": info.id, **DRAW})
        descriptor = result.meta["trompe/shared-pixels"]
        assert mapped(descriptor) is not None
        for wrong in ({"inode": descriptor["inode"] + 1}, {"pid": os.getpid()}, {"size": descriptor["size"] - 1},
                      {"version": 2}, {"mode": "CMYK"}):
            assert mapped(descriptor | wrong) is None
        result.meta["trompe/shared-pixels"] = descriptor | {"fd": descriptor["fd"] + 1000}
        [part] = await shared_parts(result, lambda image: tools.image_png(info.id, image))
        assert part.pixels.tobytes() == Image.open(io.BytesIO(await tools.image_png(info.id, "img_001"))).tobytes()


async def test_killing_the_server_leaves_nothing_and_the_client_keeps_what_it_mapped():
    shm = shm_files()
    before = descendants(os.getpid())
    async with client(True) as tools:
        [server] = descendants(os.getpid()) - before
        info = await tools.open_session({"original": png_bytes(PICTURE)})
        part = (await tools.call(info.id, "draw_line", DRAW)).images[0]
        kept = part.pixels.copy()
        os.kill(server, signal.SIGKILL)
        assert gone(server, 30)
        assert np.array_equal(part.pixels, kept) and segment_mappings()
        del part
        gc.collect()
        assert segment_mappings() == []  # the client's last reference gone: the kernel frees the segment
    assert leaked(shm) == []


def test_killing_the_client_ends_the_server_and_leaves_nothing(tmp_path):
    """The server sees its stdin close and exits; its segments go with it. Nothing was ever named in /dev/shm."""
    script = tmp_path / "client.py"
    script.write_text(textwrap.dedent(f"""
        import anyio, os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_zero_copy_client import DRAW, PICTURE, client
        from imagekit import png_bytes
        from trompe_agents.pixel_segments import shared_parts
        async def main():
            async with client(True) as tools:
                info = await tools.open_session({{"original": png_bytes(PICTURE)}})
                result = await tools._call_tool("draw_line", {{"session": info.id, **DRAW}})
                [part] = await shared_parts(result, None)
                print(result.meta["trompe/shared-pixels"]["pid"], part.pixels.shape, flush=True)
                await anyio.sleep(600)
        anyio.run(main)
    """))
    shm = shm_files()
    holder = subprocess.Popen([sys.executable, str(script)], env=env_with(PYTHONPATH=os.pathsep.join(sys.path)),
                              stdout=subprocess.PIPE, text=True)
    line = holder.stdout.readline().split()
    holder.kill()
    holder.wait()
    server = int(line[0])
    try:
        assert line[1:] == ["(80,", "120,", "3)"]
        assert gone(server, 60), "the server outlived its client"
    finally:
        if not gone(server, 0):
            os.kill(server, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # reparented to this process (the suite's subreaper)
            os.waitpid(server, 0)
    assert leaked(shm) == []

"""The memory budget holds on every decoder path: each mode's admitted work covers its real peak, and a real
server with --memory-budget 256MiB stays under budget + 100 MiB (issue 40's goal) on the inputs that once
took GBs: a 16-bit or 32-bit grey is made 8-bit before its working copy, so the two never coexist."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from PIL import Image
from proctree import children

from serverkit import env_with

PROBE = Path(__file__).with_name("decodeprobe.py")
MiB = 1 << 20
BUDGET = 256 * MiB
SIDE = 7000  # 49 MP, under max_pixels' default: small files that decode to hundreds of MB


def test_the_admitted_work_covers_the_real_peak_of_every_mode_pillow_decodes():
    done = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=300, check=True)
    rows = json.loads(done.stdout)
    over = [f"{r['label']} ({r['decoded']}): peak {r['peak']} > admitted {r['work']}" for r in rows
            if r["peak"] > r["work"]]
    assert not over, over
    assert {r["decoded"] for r in rows} >= {"1", "L", "P", "LA", "PA", "RGB", "RGBA", "I;16", "I", "F", "CMYK",
                                             "LAB", "YCbCr"}
    assert {r["out"] for r in rows} == {"RGB", "RGBA"}


def _png(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=9)
    return buf.getvalue()


def _tiff(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="TIFF", compression="tiff_adobe_deflate")
    return buf.getvalue()


def vm_hwm(pid: int) -> int:
    """Peak resident set size of a live process, in bytes."""
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


async def peak_rss(folder: Path, source: str, tool: dict | None) -> int:
    """Peak RSS of a fresh stdio server (--memory-budget 256MiB) that opens `source` and runs `tool` on it."""
    params = StdioServerParameters(command=sys.executable, env=env_with(),
                                   args=["-c", "from trompe_server.cli import main; main()", "--root", str(folder),
                                         "--memory-budget", "256MiB"])
    async with Client(params) as client:
        pid = children(os.getpid())[-1]
        opened = await client.call_tool("open_session", {"source": source})
        assert not opened.is_error, opened.content[0].text
        if tool is not None:
            done = await client.call_tool(tool.pop("name"), {"session": opened.structured_content["session"],
                                                             "image": "original", **tool})
            assert not done.is_error, done.content[0].text
        return vm_hwm(pid)


@pytest.mark.parametrize("name, make, tool", [
    ("grey16.png", lambda: _png(Image.new("I;16", (SIDE, SIDE), 30000)), None),
    ("float32.tif", lambda: _tiff(Image.new("F", (SIDE, SIDE), 100.0)), None),
    ("int32.tif", lambda: _tiff(Image.new("I", (SIDE, SIDE), 30000)), None),
    ("flat.png", lambda: _png(Image.new("RGB", (SIDE, SIDE), (90, 140, 200))),
     {"name": "extract_channel", "channel": "H"}),
], ids=["16-bit grey PNG", "32-bit float TIFF", "32-bit integer TIFF", "extract_channel H"])
def test_a_49_megapixel_input_stays_under_the_budget_plus_100_mib(tmp_path, name, make, tool):
    data = make()
    assert len(data) < 400_000  # small on disk, 49 MP decoded: the shape of the attack
    (tmp_path / name).write_bytes(data)
    peak = anyio.run(peak_rss, tmp_path, name, tool)
    assert peak < BUDGET + 100 * MiB, f"peak RSS {peak / MiB:.0f} MiB"

"""Memory admission: work in flight counts against the memory budget before any pixel is decoded."""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import numpy as np
from mcp import Client
from PIL import Image

from imagekit import data_url, gradient
from trompe_server.admission import PIXEL_BYTES, REPLY_COPIES, WORK_FACTOR, WorkBudget
from trompe_server.limits import Limits

ONE = 64 * 48 * 3  # bytes of the 64x48 RGB test image


async def test_an_image_that_could_never_fit_the_budget_is_refused_before_decoding(make_app):
    app = make_app(Limits(memory_budget=10_000))
    async with Client(app.mcp) as client:
        result = await client.call_tool("open_session", {"source": data_url(gradient())})
    assert result.is_error
    assert ("source: image is 64x48; decoding it needs 12288 bytes, over the 10000-byte memory budget "
            "(memory_budget)") in result.content[0].text
    assert app.registry.session_ids() == []


async def test_work_in_flight_pushes_kept_pixels_out_of_ram(make_app):
    # a crop reserves 2 working copies of 4 bytes a pixel, its reply's encoding 3 more: room for 2 kept meanwhile
    budget = (WORK_FACTOR + REPLY_COPIES + 2) * PIXEL_BYTES * 64 * 48
    app = make_app(Limits(memory_budget=budget))
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        for _ in range(3):
            await client.call_tool("crop", {"session": session["session"], "image": "original", "box": [0, 0, 64, 48]})
    assert app.registry.bytes_in_memory > ONE
    app.registry.work.reserve(budget - ONE)
    try:
        assert app.registry.bytes_in_memory <= ONE
    finally:
        app.registry.work.release()


def wait_until(condition) -> None:
    """Wait for another thread to reach a state (bounded: a hung thread fails the test, it does not hang it)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the other thread never got there"
        time.sleep(0.01)


def test_large_work_waits_for_room_and_runs_when_it_is_released():
    work = WorkBudget(100)
    work.reserve(80)
    started = threading.Event()

    def second_call() -> None:
        work.reserve(50)
        started.set()
        work.release()

    other = threading.Thread(target=second_call)
    other.start()
    wait_until(lambda: work.waiting == 1)
    assert not started.is_set() and work.reserved == 80
    work.release()
    other.join(timeout=30)
    assert started.is_set() and work.reserved == 0


def test_a_call_that_already_holds_memory_never_waits_for_more():
    """Two calls each waiting for the other's bytes would deadlock; the second reservation goes over instead."""
    work = WorkBudget(100)
    work.reserve(80)
    work.reserve(500)  # capped at the budget, granted at once
    assert work.reserved == 180
    work.release()
    assert work.reserved == 0


def test_spill_folders_of_killed_servers_are_removed_at_the_next_start(make_app, tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = Path(tempfile.gettempdir()) / f"trompe-spill-{dead.pid}-abc123"
    orphan.mkdir()
    (orphan / "s_x-img_001.raw").write_bytes(b"\0" * 64)
    live = Path(tempfile.mkdtemp(prefix=f"trompe-spill-{os.getpid()}-"))
    try:
        make_app()
        assert not orphan.exists() and live.exists()
    finally:
        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(orphan, ignore_errors=True)


async def test_full_size_resource_reads_wait_for_room_like_tool_work(make_app):
    """`image://` reads hold the pixels and their PNG: they are admitted against the budget like a tool call."""
    app = make_app(Limits(memory_budget=4 * ONE))
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        read: dict = {}

        async def reader():
            read["result"] = await client.read_resource(f"image://{session['session']}/original")

        app.registry.work.reserve(4 * ONE)  # another call holds the whole budget
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(reader)
                with anyio.fail_after(30):
                    while app.registry.work.waiting == 0:
                        await anyio.sleep(0.01)
                assert "result" not in read, "the read went ahead of the memory it needs"
                app.registry.work.release()
        finally:
            app.registry.work.release()
    pixels = Image.open(io.BytesIO(base64.b64decode(read["result"].contents[0].blob)))
    assert np.array_equal(np.asarray(pixels), np.asarray(gradient()))
    assert app.registry.work.reserved == 0


def _encoded(im: Image.Image, fmt: str, **options) -> str:
    buf = io.BytesIO()
    im.save(buf, format=fmt, **options)
    return f"data:image/{fmt.lower()};base64," + base64.b64encode(buf.getvalue()).decode()


async def test_a_format_that_decodes_through_extra_copies_is_refused_where_they_would_pass_the_budget(make_app):
    """WebP decodes through three full-size buffers besides the image (16 bytes a pixel at the peak): at a budget
    a little over one 2000x2000 working copy, such a WebP is refused before decoding, the same pixels as PNG
    (8 bytes a pixel at the peak) are not."""
    app = make_app(Limits(memory_budget=20_000_000))
    flat = Image.new("RGB", (2000, 2000), (90, 140, 200))
    async with Client(app.mcp) as client:
        webp = await client.call_tool("open_session", {"source": _encoded(flat, "WEBP", lossless=True)})
        png = await client.call_tool("open_session", {"source": _encoded(flat, "PNG")})
    assert webp.is_error
    assert ("source: image is 2000x2000; its format decodes through 64000000 bytes at the peak, over the "
            "20000000-byte memory budget (memory_budget) plus one 16000000-byte working copy and 8388608 bytes of "
            "conversion") in webp.content[0].text
    assert not png.is_error, png.content[0].text


MALLOC_PROBE = """
import resource
from pathlib import Path
from PIL import Image
from trompe_server.admission import return_freed_pixels_to_the_os

return_freed_pixels_to_the_os()
def rss(): return int(Path("/proc/self/statm").read_text().split()[1]) * 4096
def call(): return Image.new("RGB", (1024, 1024), (1, 2, 3)).convert("RGBA").tobytes()  # a 1024x1024 call's buffers
for _ in range(3):
    call()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    call()
per_call = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
base = rss()
big = Image.new("RGB", (4096, 4096), (1, 2, 3))
held = rss() - base
del big
print(per_call, held, rss() - base)
"""


def test_the_server_heap_reuses_small_image_buffers_and_gives_large_ones_back():
    """As the server tunes malloc: 1024x1024 buffers come from the heap again without faulting pages in (with
    the 1 MiB threshold each such call faulted ~4,000 pages, bench/README.md), and a freed 64 MiB image leaves
    the process at once (what keeps memory admission's peak)."""
    done = subprocess.run([sys.executable, "-c", MALLOC_PROBE], capture_output=True, text=True, check=True)
    per_call, held, left = (float(v) for v in done.stdout.split())
    assert per_call < 100, done.stdout
    assert held >= 48 << 20 and left < 8 << 20, done.stdout


TRIM_PROBE = """
from pathlib import Path
from PIL import Image
from trompe_server.admission import return_freed_pixels_to_the_os, trim_heap

return_freed_pixels_to_the_os()
def rss(): return int(Path("/proc/self/statm").read_text().split()[1]) * 4096
base = rss()
session, kept = [], []
for _ in range(40):  # a session's 1 MP versions, 160 MiB, each followed by something that outlives it
    session.append(Image.new("RGB", (1024, 1024), (1, 2, 3)))
    kept.append(bytearray(256 << 10))
del session
freed = rss() - base
trim_heap()
print(freed, rss() - base)
"""


def test_a_closed_sessions_pixels_leave_the_heap():
    """Images under the mmap threshold live in the heap, which keeps the pages of those freed below its top;
    trim_heap (run by close_session) gives them back: RSS within 20 MiB of where it was before the session."""
    done = subprocess.run([sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True, check=True)
    freed, trimmed = (int(v) for v in done.stdout.split())
    assert freed > 20 << 20 and trimmed < 20 << 20, done.stdout


HOLES_PROBE = """
from PIL import Image
from trompe_server.admission import heap_free, return_freed_pixels_to_the_os
from trompe_server.limits import Limits
from trompe_server.registry import Registry

return_freed_pixels_to_the_os()
MiB = 1 << 20
registry = Registry(Limits(memory_budget=128 * MiB))
session = registry.create_session()
images, pins = [], []
for i in range(40):  # 1 MP versions, each followed by something small that stays (a record, a reply's text)
    images.append(Image.new("RGB", (1024, 1024), (i, 2, 3)))
    pins.append(bytearray(256 << 10))
for i in range(20):
    registry.add_input(session, f"v{i}", Image.new("RGB", (1024, 1024), (i, 9, 9)), "probe")  # 80 MiB kept
registry.work.reserve(8 * MiB)
registry.work.release()
before = registry.bytes_in_memory
del images[::2]  # every other one freed: 80 MiB of holes between what stays
holes = heap_free()
registry.work.reserve(8 * MiB)
print(before // MiB, holes // MiB, registry.bytes_in_memory // MiB)
registry.close()
"""


def test_holes_in_the_heap_count_against_the_memory_budget():
    """Freed buffers leave holes between what stays, resident (100 MiB over 100 draws at a 256 MiB budget,
    bench/README.md): work in flight then leaves room for the holes too, and kept pixels spill for them."""
    done = subprocess.run([sys.executable, "-c", HOLES_PROBE], capture_output=True, text=True, check=True)
    before, holes, kept = (int(v) for v in done.stdout.split())
    assert before == 80 and holes >= 80, done.stdout  # nothing spilled while the heap had no holes
    assert kept + holes + 8 <= 128, done.stdout  # the images spilled free holes the next ones fit


def test_a_listing_run_in_another_programs_process_leaves_its_heap_uncounted(capsys):
    """Only a serving trompe-server tunes malloc and counts the heap's holes against its budget: `main` run in a
    test or a notebook to list tools must not make every later in-process registry spill (CI saw it do so)."""
    from trompe_server.admission import heap_free
    from trompe_server.cli import main

    main(["--list-tools"])
    assert "crop" in capsys.readouterr().out
    assert heap_free() == 0

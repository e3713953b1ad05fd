"""Memory admission: work in flight counts against the memory budget before any pixel is decoded."""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import anyio
import numpy as np
from mcp import Client
from PIL import Image

from imagekit import data_url, gradient
from trompe_server.admission import WorkBudget
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
    app = make_app(Limits(memory_budget=4 * ONE))
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        for _ in range(3):
            await client.call_tool("crop", {"session": session["session"], "image": "original", "box": [0, 0, 64, 48]})
    assert app.registry.bytes_in_memory > ONE
    app.registry.work.reserve(3 * ONE)
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

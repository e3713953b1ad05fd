"""Pixels over the memory budget spill to disk: they come back exact, the files are what the docs say (one raw
file per image, in a folder named for the server's pid), and a temp cleaner deleting them breaks nothing."""

from __future__ import annotations

import io
import os
import shutil
import tracemalloc

import pytest
from PIL import Image

from imagekit import gradient, noise
from serverkit import same_pixels
from trompe_server.errors import ToolInputError
from trompe_server.limits import Limits

ONE = 64 * 48 * 4  # the RAM one gradient() takes: Pillow keeps RGB at 4 bytes a pixel, as the budget counts it


def test_spilled_images_of_sessions_with_the_same_ids_keep_their_own_pixels(make_app):
    """Every session has an img_001: spilled to disk side by side, each must come back as its own."""
    registry = make_app(Limits(memory_budget=1)).registry  # everything spills at once
    pictures = {shade: Image.new("RGB", (40, 30), (shade, 255 - shade, 7)) for shade in (10, 200)}
    sessions = {}
    for shade, im in pictures.items():
        session, _ = registry.open_session("local", "original", im, f"{shade}.png")
        registry.add_output(session, im.transpose(Image.Transpose.FLIP_LEFT_RIGHT), "flip", {}, ("original",))
        sessions[shade] = session
    assert registry.bytes_in_memory == 0
    for shade, session in sessions.items():
        assert same_pixels(registry.load(session, "original"), pictures[shade])
        assert registry.record(session, "original").arguments == {"source": f"{shade}.png"}


def test_an_image_larger_than_a_spill_band_comes_back_exact(make_app):
    """Spill files are written and read in bands of about 8 MiB: a 9 MB image crosses a band boundary."""
    registry = make_app(Limits(memory_budget=1)).registry
    random = noise((2000, 1500), seed=1)
    session, _ = registry.open_session("local", "original", random, "noise.png")
    assert registry.bytes_in_memory == 0
    assert same_pixels(registry.load(session, "original"), random)


def test_images_that_spill_later_keep_their_session_apart(make_app):
    """RAM holds one image: each new one pushes the older to disk, where sessions sharing ids must not mix."""
    one = 40 * 30 * 4
    registry = make_app(Limits(memory_budget=one + 100)).registry
    pictures = {shade: Image.new("RGB", (40, 30), (shade, 255 - shade, 7)) for shade in (10, 200)}
    sessions = {shade: registry.open_session("local", "original", im, f"{shade}.png")[0]
                for shade, im in pictures.items()}
    assert registry.bytes_in_memory == one  # the first session's original went to disk
    registry.storage.set_ram_budget(0)
    assert registry.bytes_in_memory == 0 and len(list(registry.storage.spill_dir.iterdir())) == 2
    for shade, session in sessions.items():
        assert same_pixels(registry.load(session, "original"), pictures[shade])


def test_an_image_exactly_the_memory_budget_stays_in_ram(make_app):
    registry = make_app(Limits(memory_budget=ONE)).registry
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    assert registry.bytes_in_memory == ONE and not list(registry.storage.spill_dir.iterdir())
    registry.add_output(session, gradient().rotate(90), "rotate", {}, ("original",))
    assert registry.bytes_in_memory == ONE and len(list(registry.storage.spill_dir.iterdir())) == 1
    assert same_pixels(registry.load(session, "original"), gradient())


def test_closing_the_registry_frees_its_ram_and_spill_folder(make_app):
    registry = make_app(Limits(memory_budget=ONE)).registry
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    registry.add_output(session, gradient().rotate(90), "rotate", {}, ("original",))
    spill = registry.storage.spill_dir
    registry.close()
    assert registry.bytes_in_memory == 0 and not spill.exists() and registry.session_ids() == []


def test_the_least_recently_used_image_spills_first(make_app):
    registry = make_app(Limits(memory_budget=2 * ONE)).registry
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    registry.add_output(session, gradient().rotate(90), "rotate", {}, ("original",))
    registry.load(session, "original")  # now img_001 is the least recently used
    registry.add_output(session, gradient().rotate(180), "rotate", {}, ("original",))
    assert [f.name for f in registry.storage.spill_dir.iterdir()] == [f"{session}-img_001.raw"]
    assert registry.bytes_in_memory == 2 * ONE


def test_spill_files_hold_exactly_the_raw_pixels_in_a_folder_named_for_the_pid(make_app):
    """The pid lets a later server tell a killed server's folder from a live one's; the files are raw bytes."""
    registry = make_app(Limits(memory_budget=1)).registry
    random = noise((2000, 1500), seed=2)
    session, _ = registry.open_session("local", "original", random, "noise.png")  # over one 8 MiB band
    assert registry.storage.spill_dir.name.startswith(f"trompe-spill-{os.getpid()}-")
    spilled = registry.storage.spill_dir / f"{session}-original.raw"
    assert spilled.read_bytes() == random.tobytes()


def test_an_image_over_the_budget_never_has_a_whole_raw_copy_in_ram(make_app):
    """It goes to disk band by band: the process's extra memory stays well under the image's raw size."""
    big = Image.new("RGB", (6000, 4000), (9, 99, 199))  # 72 MB raw, over a 16 MiB budget
    registry = make_app(Limits(memory_budget=16 << 20)).registry
    tracemalloc.start()
    try:
        session, _ = registry.open_session("local", "original", big, "big.png")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert registry.bytes_in_memory == 0 and peak < len(big.mode) * big.width * big.height // 2, peak
    assert registry.load(session, "original").getextrema() == ((9, 9), (99, 99), (199, 199))


def test_a_temp_cleaner_deleting_spill_files_breaks_nothing(make_app):
    """systemd-tmpfiles and tmpreaper delete old files under /tmp: closing a session or the server still works."""
    registry = make_app(Limits(memory_budget=1)).registry
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    registry.add_output(session, gradient().rotate(90), "rotate", {}, ("original",))
    for spilled in registry.storage.spill_dir.iterdir():
        spilled.unlink()
    with pytest.raises(ToolInputError) as error:
        registry.load(session, "img_001")
    assert str(error.value) == ("image: the pixels of 'img_001' were deleted from disk (a temp cleaner may have "
                                "removed the server's spill files); open the image again in a new session")
    assert registry.record(session, "img_001").operation == "rotate"  # the lineage is kept
    assert registry.close_session(session) == 2
    shutil.rmtree(registry.storage.spill_dir)
    registry.close()
    assert registry.session_ids() == [] and registry.bytes_in_memory == 0


def test_an_image_its_maker_saved_as_png_spills_and_comes_back_exact(make_app):
    """A plugin tool or a library caller may have saved its image with Pillow first, which leaves the PNG
    writer's settings on the image (`encoderconfig`); spilling it used to hand those to the raw encoder and fail."""
    registry = make_app(Limits(memory_budget=1)).registry
    random = noise((300, 200), seed=5)
    random.save(io.BytesIO(), "PNG")
    session, _ = registry.open_session("local", "original", random, "noise.png")
    spilled = registry.storage.spill_dir / f"{session}-original.raw"
    assert spilled.read_bytes() == random.tobytes()
    assert registry.load(session, "original").tobytes() == random.tobytes()

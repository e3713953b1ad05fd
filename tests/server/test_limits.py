"""Every limit: its default, how to set it, and what happens at it (error, spill or eviction)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from mcp import Client

from imagekit import data_url, gradient
from serverkit import same_pixels
from trompe_server.cli import build_parser, config_from_args
from trompe_server.errors import LimitError, ToolInputError
from trompe_server.limits import GiB, MiB, Limits, format_limit
DOC = Path(__file__).parents[2] / "docs" / "server.md"


async def open_with(client, im=None) -> str:
    result = await client.call_tool("open_session", {"source": data_url(im or gradient())})
    assert not result.is_error, result.content[0].text
    return result.structured_content["session"]


async def crop(client, session, box=(0, 0, 64, 48), zoom=1.0, image="original"):
    return await client.call_tool("crop", {"session": session, "image": image, "box": list(box), "zoom": zoom})


async def listing(client, session):
    return (await client.call_tool("list_images", {"session": session})).structured_content


async def test_max_pixels_refuses_output_and_keeps_session(test_app):
    async with Client(test_app(limits=Limits(max_pixels=5000)).mcp) as client:
        session = await open_with(client)
        before = await listing(client, session)
        result = await client.call_tool("stack_images", {"session": session, "images": ["original"] * 2})
        assert result.is_error
        assert "output: 64x96 = 6144 pixels is over the 5000 pixel limit (max_pixels)" in result.content[0].text
        assert await listing(client, session) == before
        assert (await crop(client, session, (0, 0, 10, 10))).structured_content["image"] == "img_001"


async def test_max_pixels_refuses_input(make_app):
    async with Client(make_app(Limits(max_pixels=1000)).mcp) as client:
        result = await client.call_tool("open_session", {"source": data_url(gradient())})
        assert result.is_error and "64x48 = 3072 pixels, over the 1000 pixel limit" in result.content[0].text


async def test_an_image_of_exactly_max_pixels_is_kept(make_app):
    async with Client(make_app(Limits(max_pixels=64 * 48)).mcp) as client:
        session = await open_with(client)  # 64x48: exactly at the limit, input and output alike
        assert (await crop(client, session)).structured_content["image"] == "img_001"
        refused = await crop(client, session, box=(0, 0, 33, 24), zoom=2)  # 66x48
        assert refused.is_error and "over the 3072 pixel limit (max_pixels)" in refused.content[0].text


async def test_max_images_per_session(make_app):
    async with Client(make_app(Limits(max_images=3)).mcp) as client:
        session = await open_with(client)
        for _ in range(2):
            assert not (await crop(client, session)).is_error
        result = await crop(client, session)
        assert result.is_error and "already holds 3 images (max_images)" in result.content[0].text


async def test_max_session_bytes(make_app):
    one = 64 * 48 * 3
    async with Client(make_app(Limits(max_session_bytes=2 * one)).mcp) as client:
        session = await open_with(client)
        assert not (await crop(client, session)).is_error
        result = await crop(client, session)
        assert result.is_error
        assert f"would hold {3 * one} pixel bytes, over the {2 * one} byte limit (max_session_bytes)" in \
            result.content[0].text


async def test_max_sessions_evicts_least_recently_used(make_app):
    async with Client(make_app(Limits(max_sessions=2)).mcp) as client:
        first, second = await open_with(client), await open_with(client)
        await listing(client, first)  # first is now the most recently used
        third = await open_with(client)
        assert (await client.call_tool("list_images", {"session": second})).is_error
        for alive in (first, third):
            assert not (await client.call_tool("list_images", {"session": alive})).is_error


async def test_the_one_client_of_an_in_process_server_is_not_held_to_a_per_client_quota(make_app):
    """An agent running many samples at once through its own server must not evict its own sessions; the
    per-client quota shares an HTTP server between clients (tested there), the server-wide cap still holds."""
    async with Client(make_app(Limits(max_sessions_per_client=2, max_sessions=4)).mcp) as client:
        sessions = [await open_with(client) for _ in range(4)]
        for alive in sessions:
            assert not (await client.call_tool("list_images", {"session": alive})).is_error
        fifth = await open_with(client)
        gone = await client.call_tool("list_images", {"session": sessions[0]})
        assert gone.is_error and f"session {sessions[0]!r} was evicted" in gone.content[0].text
        assert "the server holds at most 4 sessions (max_sessions)" in gone.content[0].text
        assert not (await client.call_tool("list_images", {"session": fifth})).is_error


async def test_idle_sessions_expire(make_app):
    """Idle for exactly idle_timeout a session lives; any longer and it is gone (on a clock the test moves)."""
    app = make_app(Limits(idle_timeout=30))
    now = [1000.0]
    app.registry.storage.clock = lambda: now[0]
    async with Client(app.mcp) as client:
        session, other = await open_with(client), await open_with(client)
        now[0] += 30
        assert not (await client.call_tool("list_images", {"session": session})).is_error
        now[0] += 29.5  # session was used 29.5 s ago, other 59.5 s ago
        assert not (await client.call_tool("list_images", {"session": session})).is_error
        result = await client.call_tool("list_images", {"session": other})
        assert result.is_error and "idle for 30 s are dropped" in result.content[0].text
        assert app.registry.session_ids() == [session]


async def test_memory_budget_spills_to_disk_and_keeps_pixels(make_app):
    one = 64 * 48 * 3
    app = make_app(Limits(memory_budget=3 * one))
    async with Client(app.mcp) as client:
        session = await open_with(client)
        for i in range(12):
            assert not (await crop(client, session, (i, 0, 64, 48))).is_error
            assert app.registry.bytes_in_memory <= 3 * one
        assert len(list(app.registry.storage.spill_dir.iterdir())) >= 9
        for i in range(12):  # spilled images come back exact
            assert same_pixels(app.registry.load(session, f"img_{i + 1:03d}"), gradient().crop((i, 0, 64, 48)))
        await client.call_tool("close_session", {"session": session})
        assert app.registry.bytes_in_memory == 0 and not list(app.registry.storage.spill_dir.iterdir())


async def test_max_inputs(test_app):
    async with Client(test_app(limits=Limits(max_inputs=2)).mcp) as client:
        session = await open_with(client)
        for name in ("b", "c"):
            await client.call_tool("add_image", {"session": session, "source": data_url(gradient()), "name": name})
        ok = await client.call_tool("stack_images", {"session": session, "images": ["original", "b"]})
        assert not ok.is_error and ok.structured_content["parents"] == ["original", "b"]
        result = await client.call_tool("stack_images", {"session": session, "images": ["original", "b", "c"]})
        assert result.is_error and "images: one tool call may combine at most 2 images" in result.content[0].text


def test_environment_then_flags(monkeypatch):
    monkeypatch.setenv("TROMPE_MAX_IMAGES", "7")
    monkeypatch.setenv("TROMPE_MEMORY_BUDGET", "512MiB")
    monkeypatch.setenv("TROMPE_IDLE_TIMEOUT", "90")
    monkeypatch.setenv("TROMPE_MAX_PREVIEW_SIDE", "1024")
    limits = config_from_args(build_parser().parse_args(["--max-images", "9", "--max-session-bytes", "1GiB"])).limits
    assert (limits.max_images, limits.memory_budget, limits.idle_timeout) == (9, 512 * MiB, 90.0)
    assert (limits.max_session_bytes, limits.max_preview_side) == (GiB, 1024)


def test_bad_limit_values_are_named():
    with pytest.raises(ValueError, match="max_images: 'lots' is not a number"):
        Limits.from_env({"TROMPE_MAX_IMAGES": "lots"})
    with pytest.raises(ValueError, match="max_sessions must be positive"):
        Limits.from_env({}, max_sessions=0)
    with pytest.raises(ValueError, match="max_pixels: '1.5' is not a whole number"):
        Limits.from_env({"TROMPE_MAX_PIXELS": "1.5"})
    assert Limits.from_env({"TROMPE_IDLE_TIMEOUT": "1.5", "TROMPE_MEMORY_BUDGET": "1.5GiB"}).idle_timeout == 1.5


def test_bad_limit_flag_exits_with_message(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-pixels", "huge"])
    assert "max_pixels: 'huge' is not a number" in capsys.readouterr().err


def test_every_limit_is_documented_with_its_default():
    text = DOC.read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `--([a-z-]+)`.*$", text, re.M)}
    for f in fields(Limits):
        row = rows[f.name.replace("_", "-")]
        assert f"TROMPE_{f.name.upper()}" in row
        assert f"| {format_limit(getattr(Limits(), f.name))} |" in row, (f.name, row)


def test_a_refused_first_image_leaves_no_session_behind(make_app):
    registry = make_app(Limits(max_pixels=100)).registry
    with pytest.raises(LimitError, match="max_pixels"):
        registry.open_session("local", "original", gradient(), "big.png")
    assert registry.storage.session_ids() == []


def test_an_unknown_image_in_an_empty_session_says_it_has_none(make_app):
    registry = make_app().registry
    session = registry.create_session()
    with pytest.raises(ToolInputError, match=r"^image: unknown image 'img_009'; this session has: none$"):
        registry.record(session, "img_009")


@pytest.mark.parametrize(("written", "value"), [("2048", 2048), ("3KiB", 3 * 1024), ("1.5KiB", 1536),
                                                ("2MiB", 2 * 1024 * 1024), ("1GiB", 1024 ** 3)])
def test_each_unit_is_a_power_of_1024(monkeypatch, written, value):
    """KiB, MiB and GiB are 1024, 1024² and 1024³ bytes (IEC), as a flag and as an environment setting."""
    assert config_from_args(build_parser().parse_args(["--max-source-bytes", written])).limits.max_source_bytes == \
        value
    monkeypatch.setenv("TROMPE_MAX_SOURCE_BYTES", written)
    assert config_from_args(build_parser().parse_args([])).limits.max_source_bytes == value


async def test_a_file_of_exactly_2kib_is_read_under_a_2kib_limit_and_one_byte_more_is_refused(make_app, tmp_path):
    """Where 1000 vs 1024 matters: with `--max-source-bytes 2KiB` a 2048-byte file opens, a 2049-byte one does
    not (a PNG padded after its IEND chunk, which decoders ignore)."""
    limits = config_from_args(build_parser().parse_args(["--max-source-bytes", "2KiB"])).limits
    png = tmp_path / "small.png"
    gradient(16, 12).save(png)
    body = png.read_bytes()
    assert len(body) < 2000
    at, over = tmp_path / "at.png", tmp_path / "over.png"
    at.write_bytes(body + bytes(2048 - len(body)))
    over.write_bytes(body + bytes(2049 - len(body)))
    async with Client(make_app(limits).mcp) as client:
        result = await client.call_tool("open_session", {"source": str(at)})
        assert not result.is_error, result.content[0].text
        refused = await client.call_tool("open_session", {"source": str(over)})
        assert refused.is_error and "file is 2049 bytes, over the 2048 byte limit" in refused.content[0].text


@pytest.mark.parametrize("written", ["2e15", "1e400", "inf", "1000000000000001"])
def test_a_limit_above_the_largest_accepted_is_refused_with_the_range(written):
    """Finite but too large (2e15, 10^15 + 1) and overflowing (1e400, inf) alike: one line with the range."""
    with pytest.raises(ValueError) as refused:
        Limits.from_env({"TROMPE_MAX_IMAGES": written})
    assert str(refused.value) == (f"max_images: {written!r} is too large; accepted: a positive number up to 1e+15 "
                                  "(examples: 500, 2GiB, 512MiB)")


def test_the_largest_accepted_limit_and_the_smallest_positive_one():
    assert Limits.from_env({"TROMPE_MAX_IMAGES": "1000000000000000"}).max_images == 10 ** 15
    assert Limits.from_env({}, max_images=1).max_images == 1  # 1 is positive: a one-image session is allowed
    assert Limits.from_env({"TROMPE_IDLE_TIMEOUT": "0.25"}).idle_timeout == 0.25


def test_a_fraction_of_a_unit_is_whole_bytes_and_a_unit_on_a_time_stays_a_float():
    """0.1MiB is 104857.6 bytes: whole bytes (rounded down), not refused as "not a whole number"; a unit written on
    a float setting keeps the float type."""
    assert Limits.from_env({"TROMPE_MAX_SOURCE_BYTES": "0.1MiB"}).max_source_bytes == 104857
    timeout = Limits.from_env({"TROMPE_IDLE_TIMEOUT": "1KiB"}).idle_timeout
    assert (timeout, type(timeout)) == (1024.0, float)


@pytest.mark.parametrize(("value", "written"), [(2 * GiB, "2GiB"), (3 * MiB, "3MiB"), (MiB + 1, "1048577"),
                                                 (3600.0, "3600"), (0.5, "0.5"), (2.5, "2.5")])
def test_help_texts_write_each_default_as_a_user_would(value, written):
    assert format_limit(value) == written

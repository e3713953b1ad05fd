"""trompe's linear-time stdio transport: the same lines as splitting the whole stream, and the same replies
as the official reader from a real `trompe-server` subprocess, for replies of many pipe chunks."""

from __future__ import annotations

import io
import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from imagekit import noise, png_bytes
from test_toolclient import server_command

from trompe_agents.stdio_lines import split_lines
from trompe_agents.toolclient import ToolClient


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"\n")), max_size=30))
def test_lines_are_those_of_the_whole_stream_however_it_is_chunked(chunks):
    pending: list[bytes] = []
    lines = [line for chunk in chunks for line in split_lines(pending, chunk)]
    *whole, rest = b"".join(chunks).split(b"\n")
    assert lines == whole
    assert b"".join(pending) == rest


async def test_a_reply_of_many_pipe_chunks_arrives_whole_and_exact():
    """A 1024² noise image crops to a PNG of ~3 MB: some fifty 64 KiB reads make up its one line."""
    image = noise((1024, 1024))
    pixels = np.asarray(image)
    async with ToolClient.stdio([*server_command(), "--tools", "core"]) as tools:
        info = await tools.open_session({"original": png_bytes(image)})
        box = [random.Random(1).randrange(0, 8), 3, 1020, 1019]
        result = await tools.call(info.id, "crop", {"image": "original", "box": box})
        assert not result.is_error, result.text
        data = await tools.image_png(info.id, result.images[0].id)
        await tools.close_session(info.id)
    assert len(data) > 2 * 1024 * 1024
    got = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert np.array_equal(got, pixels[3:1019, box[0]:1020])

"""What a serving trompe-server sets for its own process, seen from outside it as a client starts it over stdio."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from imagekit import data_url, noise
from mcp import Client, StdioServerParameters
from serverkit import SERVER, env_with


def _server_pid(root: Path) -> int:
    """The server this test started: the process whose command line names its own --root."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(root).encode() in argv and any(b"trompe-server" in part for part in argv):
                return int(entry)
    raise AssertionError(f"no trompe-server with --root {root} is running")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="OpenBLAS starts no second thread on one CPU")
async def test_numpy_s_blas_runs_on_one_thread_in_a_server_unless_the_user_set_it(tmp_path):
    """OpenBLAS starts a thread per core when numpy is imported (at the first image), ~50 ms of a cold start's
    CPU; the server sets OPENBLAS_NUM_THREADS=1 (no tool calls BLAS), and keeps a user's own value."""
    threads = {}
    for given in ("", "2"):
        root = tmp_path / (given or "unset")
        root.mkdir()
        env = {k: v for k, v in env_with().items() if k != "OPENBLAS_NUM_THREADS"}
        params = StdioServerParameters(command=SERVER, args=["--root", str(root)],
                                       env=env | ({"OPENBLAS_NUM_THREADS": given} if given else {}))
        async with Client(params) as client:
            opened = await client.call_tool("open_session", {"source": data_url(noise((64, 48)))})
            assert not opened.is_error, opened.content[0].text
            viewed = await client.call_tool("view_image", {"session": opened.structured_content["session"],
                                                           "image": "original"})
            assert [part.type for part in viewed.content][:2] == ["text", "image"]  # its PNG encoder loads numpy
            threads[given] = len(os.listdir(f"/proc/{_server_pid(root)}/task"))  # calls in turn: one worker
    assert threads["2"] == threads[""] + 1, threads

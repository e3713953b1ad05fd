"""A stdio server answers its first tools/list without loading what only a tool call needs, and without
starting any other process.

numpy was 55% of trompe's own share of the cold start (bench/cold_start.py, bench/README.md "Server cold
start"); the encoder, the image decoder and the built-in plugins import it, and torch, when a call needs them.
`ctypes.util.find_library("c")`, which the malloc tuning used, ran `ldconfig -p` (or a compiler) at every start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
DEFERRED = ("numpy", "simplejpeg", "torch", "transformers")  # loaded by the first call that needs them
NEVER_AT_START = ("ctypes.util",)  # finds libraries by running ldconfig or a compiler
# Audit events (https://docs.python.org/3/library/audit_events.html) of every way Python starts a process.
SPAWNS = ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.forkpty", "os.spawn", "os.system")
SERVER = f"""
import sys
def heard(event, args):
    if event in {SPAWNS!r}:
        print("spawned:", event, repr(args)[:200], file=sys.stderr, flush=True)
sys.addaudithook(heard)
from trompe_server.cli import main
main()
"""


@dataclass(frozen=True)
class Start:
    """What a real stdio server did by its first tools/list reply."""

    modules: set[str]  # every module imported (-X importtime), dotted names
    spawned: list[str]  # every process it started, as the audit hook heard it
    tools: int


@pytest.fixture(scope="module")
def start() -> Start:
    """One real stdio server, handshake and tools/list as plain JSON-RPC lines; its stdin then closes."""
    child = subprocess.Popen([sys.executable, "-X", "importtime", "-c", SERVER],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
        child.stdin.flush()
        tools = next(len(reply["result"]["tools"]) for reply in map(json.loads, child.stdout) if reply.get("id") == 2)
    finally:
        try:
            _, stderr = child.communicate(timeout=60)  # stdin closed: the server exits and removes its spill folder
        except subprocess.TimeoutExpired:
            child.kill()
            raise
    lines = stderr.decode().splitlines()
    modules = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:") and "|" in line}
    return Start(modules, [line for line in lines if line.startswith("spawned:")], tools)


def test_tools_are_listed_before_numpy_or_torch_load(start):
    loaded = {name.split(".")[0] for name in start.modules}
    assert start.tools > 10 and "PIL" in loaded and "trompe_draw" in loaded  # the server and its plugins did start
    assert not loaded & set(DEFERRED), f"imported before the first call: {sorted(loaded & set(DEFERRED))}"
    assert not start.modules & set(NEVER_AT_START), sorted(start.modules & set(NEVER_AT_START))


def test_starting_the_server_starts_no_other_process(start):
    assert start.tools > 10 and start.spawned == []

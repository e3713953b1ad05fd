"""A stdio server answers its first tools/list without loading what only a tool call needs.

numpy was 55% of trompe's own share of the cold start (bench/cold_start.py, bench/README.md "Server cold
start"); the encoder, the image decoder and the built-in plugins import it, and torch, when a call needs them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
DEFERRED = ("numpy", "simplejpeg", "torch", "transformers")  # loaded by the first call that needs them


def modules_loaded_until_first_listing() -> tuple[set[str], int]:
    """Top-level modules a real stdio server imported by its tools/list reply (-X importtime), and tool count."""
    child = subprocess.Popen([sys.executable, "-X", "importtime", "-c", "from trompe_server.cli import main; main()"],
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
    names = {line.rsplit("|", 1)[1].strip() for line in stderr.decode().splitlines()
             if line.startswith("import time:") and "|" in line}
    return {name.split(".")[0] for name in names}, tools


def test_tools_are_listed_before_numpy_or_torch_load():
    loaded, tools = modules_loaded_until_first_listing()
    assert tools > 10 and "PIL" in loaded and "trompe_draw" in loaded  # the server and its plugins did start
    assert not loaded & set(DEFERRED), f"imported before the first call: {sorted(loaded & set(DEFERRED))}"

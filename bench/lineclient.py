"""A minimal MCP stdio client for benchmarks: JSON-RPC lines over a pipe, read with linear buffering.

The official Python client (mcp 2.3) joins its buffer to every 64 KiB chunk and splits the whole again, so a
reply of M bytes costs it O(M²/64 KiB): for a 2-3 MB PNG that is tens to hundreds of milliseconds that belong
to the client, not to the server being measured. The TypeScript SDK made its reader linear (its PR #2245).
This client reads with asyncio's `readline`, which is linear, so a column measured through it shows what the
server itself costs over stdio. It speaks only what the benchmarks need: initialize, tools/list, tools/call.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

PROTOCOL = "2025-11-25"


@dataclass
class Reply:
    """The parts of a tools/call result the benchmarks read, named as on the official client's result."""

    is_error: bool
    content: list[dict[str, Any]] = field(default_factory=list)
    structured_content: dict[str, Any] | None = None


class LineClient:
    """One stdio server process, driven one request at a time."""

    def __init__(self, command: str, args: list[str], env: dict[str, str] | None = None, cwd: str | None = None):
        self.argv, self.env, self.cwd, self.last_id = [command, *args], env, cwd, 0

    async def __aenter__(self) -> LineClient:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=self.env or dict(os.environ), cwd=self.cwd, limit=1 << 30)
        await self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                          "clientInfo": {"name": "trompe-bench-line-client", "version": "1"}})
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    async def _send(self, message: dict[str, Any]) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request; lines that are not JSON-RPC (a server's stray prints) are skipped."""
        self.last_id += 1
        await self._send({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params})
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise EOFError(f"{self.argv[0]} closed its stdout")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == self.last_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Reply:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        return Reply(bool(result.get("isError")), result.get("content", []), result.get("structuredContent"))

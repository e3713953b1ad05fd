"""Which tool server an agent talks to, as plain data, so worker processes can open their own connection."""

from __future__ import annotations

from dataclasses import dataclass

from .toolclient import CALL_DEADLINE, ToolClient


@dataclass(frozen=True)
class ServerChoice:
    """A `trompe-server --http` URL, a server command over stdio, or (neither) a server inside the process.

    A server inside the process takes its limits from TROMPE_* variables, as `trompe-server` does.
    """

    url: str | None = None
    token: str | None = None
    command: str | None = None
    tags: list[str] | None = None
    timeout: float = CALL_DEADLINE  # seconds one call to a --server-url may take before it goes to the next replica

    def client(self) -> ToolClient:
        """A new, unopened client; `--tools` tags limit what the model is offered."""
        if self.url:
            client = ToolClient.http(self.url, self.token, self.timeout)
        elif self.command:
            client = ToolClient.stdio(self.command)
        else:
            from trompe_server.app import ServerConfig
            from trompe_server.limits import Limits

            client = ToolClient.in_process(ServerConfig(tags=self.tags, limits=Limits.from_env()))
        client.default_tags = self.tags
        return client

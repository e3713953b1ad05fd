"""A real redis-server on a free loopback port, and trompe-server replicas pointed at it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import redis

import needs
from serverkit import SERVER, env_with, free_port, stop, wait_for_port


class RedisServer:
    """One redis-server with an append-only file fsynced on every write, so a restart keeps what it acknowledged."""

    def __init__(self, directory: Path):
        binary = shutil.which("redis-server")
        if binary is None:
            needs.missing("redis-server", "Debian: apt-get install redis-server; .ci/run installs it")
        self.binary, self.directory, self.port = binary, directory, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"redis-server did not start: {self.proc.communicate()[0]}") from None
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        """SIGTERM: Redis finishes its append-only file and exits, as a service stop would."""
        if self.proc is not None:
            stop(self.proc)
            self.proc = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)


def start_replica(url: str, root: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    """A `trompe-server --http` process on the shared registry; returns it and its MCP endpoint."""
    port = free_port()
    proc = subprocess.Popen([SERVER, "--http", "--port", str(port), "--root", str(root), "--registry", url, *flags],
                            env=env_with(), stderr=subprocess.PIPE, text=True)
    wait_for_port(port, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"

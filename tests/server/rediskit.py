"""A real redis-server on a free loopback port, and trompe-server replicas pointed at it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import redis
from PIL import Image

import needs
from serverkit import SERVER, env_with, free_port, stop, wait_for_port
from trompe_agents.datasets.base import Sample


class RedisServer:
    """One redis-server with an append-only file fsynced on every write, so a restart keeps what it acknowledged;
    with `snapshots`, RDB persistence instead: a restart comes back with the state of the last SAVE."""

    def __init__(self, directory: Path, snapshots: bool = False):
        self.persistence = (["--appendonly", "no"] if snapshots else
                            ["--appendonly", "yes", "--appendfsync", "always"])
        binary = shutil.which("redis-server")
        if binary is None:
            needs.missing("redis-server", "Debian: apt-get install redis-server; .ci/run installs it")
        self.binary, self.directory, self.port = binary, directory, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log = directory / "redis-server.log"  # a pipe nobody reads would stall it once full
        self.proc: subprocess.Popen | None = None
        self.started = False  # once started, a restart keeps the port its clients hold

    def start(self) -> None:
        """Start it and wait until it answers, as this very process (INFO's process_id): never another run's
        Redis that took the port between `free_port()` and the bind. At its first start a port taken meanwhile is
        replaced by a fresh one; a restart keeps its port, which its clients hold."""
        for _ in range(5):
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                 "--save", "", *self.persistence, "--protected-mode", "yes",
                 "--logfile", str(self.log)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
            if self._answers():
                self.started = True
                return
            if self.proc.poll() is None:  # alive but not answering in time: not left running behind a retry
                self.proc.kill()
                self.proc.wait()
            if self.started:
                break
            self.port = free_port()  # it exited, most likely on a port another process bound first
            self.url = f"redis://127.0.0.1:{self.port}/0"
        shown = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else "(no log)"
        raise AssertionError(f"redis-server did not start: {shown}")

    def _answers(self) -> bool:
        """Whether the process started answers within 30 s; False as soon as it has exited."""
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 30
        try:
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    if client.info("server")["process_id"] == self.proc.pid:
                        return True
                except redis.RedisError:  # not up yet, or something else holds the port
                    pass
                time.sleep(0.05)
            return False
        finally:
            client.close()

    def stop(self) -> None:
        """SIGTERM: Redis finishes its append-only file and exits, as a service stop would."""
        if self.proc is not None:
            stop(self.proc)
            self.proc = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)


REPLICA_START = 240  # seconds: a bound for a replica that hangs, not a timing check (a start is some 8 s of CPU
# time, mostly imports, which a 2-core box under a load of 12 stretches past a minute)


def start_replicas(registry: str, root: Path, n: int, *flags: str) -> list[tuple[subprocess.Popen, str]]:
    """n `trompe-server --http` processes launched together (their imports overlap on free cores), each waited
    for until its port answers or it exits; logs go to files (a pipe nobody reads stalls a busy server)."""
    started = []
    for _ in range(n):
        port = free_port()
        with (root / f"replica-{port}.log").open("w") as log:
            started.append((port, subprocess.Popen(
                [SERVER, "--http", "--port", str(port), "--root", str(root), "--registry", registry, *flags],
                env=env_with(), stdout=log, stderr=log, text=True)))
    for port, proc in started:
        try:
            wait_for_port(port, proc, REPLICA_START)
        except AssertionError as failed:
            for _, other in started:
                stop(other)
            raise AssertionError(f"{failed}; its log: {(root / f'replica-{port}.log').read_text()[-3000:]}") from None
    return [(proc, f"http://127.0.0.1:{port}/mcp") for port, proc in started]


def start_replica(registry: str, root: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    """One replica, as start_replicas starts them."""
    return start_replicas(registry, root, 1, *flags)[0]


def line_samples(tmp_path: Path, n: int) -> list[Sample]:
    """`n` samples sharing one white image, each question naming its sample (`sample s3`) so a scripted model
    can tell them apart; the text is not ASCII, as it travels through the server and Redis."""
    image = tmp_path / "image.png"
    Image.new("RGB", (24, 24), "white").save(image)
    return [Sample(f"s{i}", [image], f"Is the line in sample s{i} straight (droite, épaisse)?", answer="yes",
                   category="line straightness") for i in range(n)]

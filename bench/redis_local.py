"""A throwaway redis-server on a free loopback port, for the benchmarks that measure the Redis registry."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time


def start_redis(folder: str) -> tuple[subprocess.Popen, str]:
    """A redis-server keeping nothing on disk (its --dir is `folder`), and its URL once it accepts connections."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", folder],
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start within 10 s")

"""Redis memory per live session, pixels in Redis (`redis`) or in S3 (`redis+s3`): the figures of docs/scaling.md.

Each session is what an agent's sample leaves while it runs: a 256x256 line drawing opened with a request id and
two crops stored with request ids (so its P:open and P:nonce keys are counted). Redis memory is INFO's
used_memory after the sessions are opened minus before, divided by their number: what an operator sizes
maxmemory by, Redis's own per-key overhead and the shared quota indexes included.

    python bench/redis_session_bytes.py [--sessions N]   # starts its own redis-server and moto S3 server
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import redis
from PIL import Image, ImageDraw

from trompe_server.limits import Limits
from trompe_server.redis_storage import RedisStorage
from trompe_server.registry import Registry
from trompe_server.s3_storage import S3Storage

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def drawing(seed: int) -> Image.Image:
    """A line drawing, different per session (equal pixels would be stored once and flatter the figure)."""
    im = Image.new("RGB", (256, 256), "white")
    pen = ImageDraw.Draw(im)
    for i in range(0, 256, 16):
        pen.line([(i, 0), (255 - i, 255)], fill=((i + seed) % 256, seed % 256, 255 - i), width=2)
    return im


def wait_until_up(check, what: str) -> None:
    for _ in range(600):
        try:
            check()
            return
        except Exception:  # noqa: BLE001 -- not up yet
            time.sleep(0.05)
    sys.exit(f"{what} did not start")


def per_session(storage, client: redis.Redis, sessions: int) -> float:
    client.flushall()
    registry = Registry(Limits(max_sessions=sessions + 1, max_sessions_per_client=sessions + 1), storage)
    before = client.info("memory")["used_memory"]
    for n in range(sessions):
        session, _ = registry.open_session(f"token:{n % 8}", "original", drawing(n), "bench", secrets.token_hex(9))
        for box in ((0, 0, 128, 128), (64, 64, 192, 192)):
            registry.add_output(session, drawing(n).crop(box), "crop", {"box": list(box)}, ("original",),
                                secrets.token_hex(9))
    used = client.info("memory")["used_memory"] - before
    storage.close()
    return used / sessions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    args = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    os.environ.update(CREDENTIALS)
    redis_port, s3_port, folder = free_port(), free_port(), tempfile.mkdtemp()
    procs = [subprocess.Popen([binary, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--dir",
                               folder], stdout=subprocess.DEVNULL),
             subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    url, endpoint = f"redis://127.0.0.1:{redis_port}/0", f"http://127.0.0.1:{s3_port}"
    client = redis.Redis.from_url(url)
    try:
        wait_until_up(client.ping, "redis-server")
        wait_until_up(lambda: urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close(), "moto")
        import boto3

        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="bench")
        s3_url = f"redis+s3://127.0.0.1:{redis_port}/0?bucket=bench&endpoint={endpoint}"
        print(f"{'registry':10s} {'sessions':>8s} {'Redis bytes a session':>22s}")
        for label, storage in (("redis", lambda: RedisStorage(url, 1 << 30)),
                               ("redis+s3", lambda: S3Storage(s3_url, 1 << 30))):
            print(f"{label:10s} {args.sessions:8d} {per_session(storage(), client, args.sessions):22.0f}")
    finally:
        client.close()
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

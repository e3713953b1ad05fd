"""Time inside Redis per session operation (open, crop, close) with 10k to 1M live sessions in the registry.

A fresh redis-server is filled with N live sessions by a Lua script run in batches (trimmed records: each
session has its index entries and its meta hash with a TTL, no images; spread over --clients clients, 1000 by
default, or 1: one shared token, as in docs/scaling.md), then one RedisStorage (the code a replica runs),
as the first client, opens sessions holding a 32x32 image, crops them (a touch and a stored output) and
closes them. The registry is at max_sessions N + 8, so every open after the 8th also evicts the least
recently used session of the client holding the most. Redis's slow log, set to record every command, gives
the time each script took inside Redis; a row shows, per operation (its one or two scripts), the mean and
the slowest. `--idle` fills with sessions idle past the timeout instead: they are swept as the opens go,
and the row shows what that costs the opens that do it.

    python bench/redis_sessions.py [--sizes 10000 100000 1000000] [--ops 300] [--clients 1000] [--idle]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis
from PIL import Image

from trompe_server.records import ImageRecord
from trompe_server.redis_storage import RedisStorage
from trompe_server.storage import Bounds, Quota

PREFIX = "trompe"
IDLE = 3600.0
BATCH = 5_000  # sessions per fill script: each one blocks Redis for a few ms

# ARGV: prefix, first index, count, clients, score of the first, ttl. Writes sessions fill<i> with the layout
# of redis_scripts.py (no images), owned round robin by clients c<i % clients>.
FILL = """
local P, first, count, clients, score, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), tonumber(ARGV[6])
for i = first, first + count - 1 do
  local sid, client, at = 'fill' .. i, 'c' .. (i % clients), score + i * 1e-6
  redis.call('ZADD', P .. ':sessions', at, sid)
  redis.call('HSET', P .. ':owners', sid, client)
  redis.call('ZADD', P .. ':c:' .. client, at, sid)
  redis.call('HSET', P .. ':s:' .. sid .. ':meta', 'counter', 0, 'nbytes', 0, 'refreshed', at)
  redis.call('EXPIRE', P .. ':s:' .. sid .. ':meta', ttl)
end
"""

# ARGV: prefix, clients. P:largest from the clients' sorted sets, as redis_scripts.restand() keeps it.
STANDINGS = """
local P = ARGV[1]
for i = 0, tonumber(ARGV[2]) - 1 do
  local key = P .. ':c:c' .. i
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then
    redis.call('ZADD', P .. ':largest', 0, string.format('%012d:%020.6f:%s', 1e12 - redis.call('ZCARD', key),
      tonumber(first[2]), 'c' .. i))
  end
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(directory: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            return proc, url
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def fill(db: redis.Redis, n: int, clients: int, idle: bool) -> float:
    """N sessions, live (used in the last minutes) or long idle; returns the seconds it took."""
    started = time.perf_counter()
    score = time.time() - (2 * IDLE if idle else 120.0) - n * 1e-6
    script = db.register_script(FILL)
    for first in range(0, n, BATCH):
        script(args=[PREFIX, first, min(BATCH, n - first), clients, score, int(IDLE * 2)])
    db.register_script(STANDINGS)(args=[PREFIX, clients])
    return time.perf_counter() - started


def image(side: int, seed: int) -> Image.Image:
    im = Image.radial_gradient("L").resize((side, side)).convert("RGB")
    im.putpixel((0, 0), (seed % 256, seed // 256 % 256, 0))  # distinct pixels: no sharing between sessions
    return im


def record(im: Image.Image, name: str, operation: str) -> ImageRecord:
    return ImageRecord(name, im.width, im.height, im.mode, operation, {}, (), time.time())


def verb(entry: dict) -> bytes:
    return entry["command"].split()[0].upper()


def script_time(db: redis.Redis) -> int:
    """µs spent in scripts since the slow log was reset (it also lists their inner commands: those are left out,
    as are the few plain commands a replica sends beside them, a SET of the pixels or a GET)."""
    return sum(e["duration"] for e in db.slowlog_get(100_000) if verb(e) == b"EVALSHA")


def measure(db: redis.Redis, url: str, n: int, clients: int, ops: int) -> dict[str, tuple[float, float]]:
    """Per operation: (mean µs inside Redis scripts, slowest µs), each operation timed alone."""
    store = RedisStorage(url, 64 << 20, PREFIX)
    # client c0 opens: at max_sessions from its 8th open on, each open evicts the oldest session of the client
    # holding the most (c0 itself, by then), as a shared token makes every agent one client
    quota, bounds = Quota(n + 8, n // clients + 8, IDLE), Bounds(100, 1 << 30, IDLE)
    opened: list[str] = []

    def do_open(k: int) -> None:
        opened.append(store.create_session(f"bench{k}", "c0", quota))
        im = image(32, k)
        store.append(opened[-1], record(im, "original", "input"), im, bounds)

    def do_crop(k: int) -> None:  # spread over c0's 8 newest sessions
        store.touch(opened[-1 - k % 8], IDLE)
        im = image(16, k)
        store.append(opened[-1 - k % 8], record(im, "", "crop"), im, bounds)

    def do_close(k: int) -> None:
        store.drop_session(opened.pop())

    rows = {}
    db.config_set("slowlog-log-slower-than", 0)
    db.config_set("slowlog-max-len", 100_000)
    for name, op, count in (("open", do_open, ops), ("crop", do_crop, ops), ("close", do_close, 8)):
        times = []
        for k in range(count):
            db.slowlog_reset()
            op(k)
            times.append(script_time(db))
        rows[name] = (sum(times) / count, max(times))
    db.config_set("slowlog-log-slower-than", 10000)
    store.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--ops", type=int, default=300, help="opens and crops per size (closes: 8)")
    parser.add_argument("--clients", type=int, default=1000, help="clients owning the filled sessions")
    parser.add_argument("--idle", action="store_true", help="fill with idle sessions (to be swept) instead")
    args = parser.parse_args(argv)
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install redis-server)")
    print(f"{'idle' if args.idle else 'live'} sessions filled ({args.clients} clients), {args.ops} opens (32x32) "
          "and crops (16x16) each, 8 closes (~38 images each); µs inside Redis scripts\n")
    print("| sessions | fill s | Redis memory | open mean | open max | crop mean | crop max | close mean "
          "| close max |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            proc, url = start_redis(tmp)
            try:
                db = redis.Redis.from_url(url, socket_timeout=None)
                seconds = fill(db, n, args.clients, args.idle)
                memory = db.info("memory")["used_memory"] / 2**20
                rows = measure(db, url, n, args.clients, args.ops)
                cells = " | ".join(f"{mean:.0f} | {worst:.0f}" for mean, worst in rows.values())
                print(f"| {n:,} | {seconds:.1f} | {memory:.0f} MiB | {cells} |", flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

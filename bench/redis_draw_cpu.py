"""Benchmark: CPU of a 1 MP draw_line on a Redis registry, this checkout beside an earlier tree in the same run.

Each round runs every tree in a fresh process (its own `servers/` and `plugins/` first on PYTHONPATH): a server
app on one redis-server started here, driven in-process through the official MCP client, `--calls` chained
draws on a 1024x1024 photo; the CPU of the whole process per call (time.process_time) and the Redis memory of
one stored result (the length of its pixel value). Rounds alternate between the trees; medians.

    python bench/redis_draw_cpu.py --baseline /tmp/before --rounds 5    # a checkout: git archive REF | tar -x
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image
from redis_local import start_redis
from sample_images import photo

CHILD = """
import json, sys, time, anyio, redis
from pathlib import Path
from mcp import Client
from trompe_server.app import ServerConfig, create_app

url, folder, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])

async def main():
    app = create_app(ServerConfig(roots=[Path(folder)], registry=url))
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": folder + "/photo.png"})
        assert not opened.is_error, opened.content[0].text
        session, image, cpu = opened.structured_content["session"], "original", []
        for i in range(calls):
            began = time.process_time()
            drawn = await client.call_tool("draw_line", {"session": session, "image": image,
                                                         "start": [i * 10 % 1024, 0], "end": [1023, 1023]})
            cpu.append(time.process_time() - began)
            assert not drawn.is_error, drawn.content[0].text
            image = drawn.structured_content["image"]
    r = redis.Redis.from_url(url)
    digest = json.loads(r.hget(f"trompe:s:{session}:records", image))["digest"]
    print(json.dumps({"cpu": cpu[1:], "bytes": r.strlen(f"trompe:px:{digest}")}))
    app.registry.close()

anyio.run(main)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="folder with an earlier checkout, run alternately")
    parser.add_argument("--calls", type=int, default=12, help="draws per process (the first is not counted)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"this checkout": Path(__file__).resolve().parents[1]}
    trees |= {"before": args.baseline.resolve()} if args.baseline else {}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    stored: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        Image.fromarray(photo(1024, 1024)).save(Path(tmp) / "photo.png", compress_level=1)
        proc, url = start_redis(tmp)
        try:
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    env = os.environ | {"PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("servers", "plugins"))}
                    out = subprocess.run([sys.executable, "-c", CHILD, url, tmp, str(args.calls)], env=env,
                                         capture_output=True, text=True)
                    if out.returncode:
                        sys.exit(f"{name}: {out.stderr[-2000:]}")
                    out = out.stdout
                    run = json.loads(out.strip().splitlines()[-1])
                    cpu[name] += run["cpu"]
                    stored[name] = run["bytes"]
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"\ndraw_line on a 1024x1024 photo, Redis registry, in-process MCP client; {args.rounds} rounds x "
          f"{args.calls - 1} calls; load {' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    print("| tree | median CPU ms per draw | bytes Redis keeps per stored image |")
    print("|---|---:|---:|")
    for name in trees:
        print(f"| {name} | {1000 * statistics.median(cpu[name]):.1f} | {stored[name]:,} |")


if __name__ == "__main__":
    main()

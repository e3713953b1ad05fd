"""Benchmark: client CPU to read one large stdio reply, the official SDK's reader vs trompe's linear one.

A stand-in server (a few lines of Python, started as a real subprocess) answers each request with one
JSON-RPC result of the given size, as a tool returning a large PNG does. Each measurement runs in a fresh
child process that opens the transport, sends REPEAT requests and reports the CPU time of its own process
while reading (the server's CPU is not counted); the two readers alternate, and the medians are printed with
their ratio and the growth slope (log CPU / log size: 1 is linear, 2 quadratic).

    python bench/stdio_reader.py --sizes 0.5 1 2 4 8 --runs 5
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys

SERVER = r'''
import sys
size = int(sys.argv[1])
blob = "A" * size
for line in sys.stdin:
    request_id = line.split('"id":', 1)[1].split(",", 1)[0].split("}", 1)[0].strip()
    sys.stdout.write('{"jsonrpc":"2.0","id":' + request_id + ',"result":{"blob":"' + blob + '"}}\n')
    sys.stdout.flush()
'''

CLIENT = r'''
import sys, time, anyio
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
import mcp_types as types
from trompe_agents.stdio_lines import linear_stdio_client

reader, size, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
server = StdioServerParameters(command=sys.executable, args=["-c", sys.argv[4], str(size)])
transport = stdio_client if reader == "sdk" else linear_stdio_client

async def main():
    async with transport(server) as (read, write):
        spent = 0.0
        for i in range(repeat):
            request = types.JSONRPCRequest(jsonrpc="2.0", id=i + 1, method="ping", params={})
            started = time.process_time()
            await write.send(SessionMessage(request))
            reply = await read.receive()
            spent += time.process_time() - started
            assert len(reply.message.result["blob"]) == size
        print(spent / repeat)

anyio.run(main)
'''


def measure(reader: str, size: int, repeat: int) -> float:
    done = subprocess.run([sys.executable, "-c", CLIENT, reader, str(size), str(repeat), SERVER],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.5, 1, 2, 4, 8], help="reply sizes, MiB")
    parser.add_argument("--runs", type=int, default=5, help="child processes per reader and size")
    parser.add_argument("--repeat", type=int, default=3, help="requests per child process")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON too")
    args = parser.parse_args()
    rows = []
    for mib in args.sizes:
        size = int(mib * 1024 * 1024)
        times: dict[str, list[float]] = {"sdk": [], "linear": []}
        for _ in range(args.runs):
            for reader in times:  # alternating, so load on the box falls on both alike
                times[reader].append(measure(reader, size, args.repeat))
        rows.append((mib, statistics.median(times["sdk"]), statistics.median(times["linear"])))
    print(f"{'reply MiB':>9} {'SDK ms':>9} {'linear ms':>10} {'linear/SDK':>11}")
    for mib, sdk, linear in rows:
        print(f"{mib:>9g} {sdk * 1000:>9.1f} {linear * 1000:>10.1f} {linear / sdk:>10.2f}x")
    if len(rows) > 1:
        (m0, s0, l0), (m1, s1, l1) = rows[0], rows[-1]
        print(f"growth slope (log CPU / log size): SDK {math.log(s1 / s0) / math.log(m1 / m0):.2f}, "
              f"linear {math.log(l1 / l0) / math.log(m1 / m0):.2f}")
    if args.json:
        print(json.dumps([{"mib": m, "sdk_s": s, "linear_s": lin} for m, s, lin in rows]))


if __name__ == "__main__":
    main()

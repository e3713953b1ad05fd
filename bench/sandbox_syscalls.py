"""The system calls the sandbox child makes for real candidate programs: where sevex/sandbox_syscalls.py's list
comes from.

    python bench/sandbox_syscalls.py        (needs strace: apt-get install strace)

Runs sandbox_child.py as `--sandbox none` starts it (the same child bubblewrap starts, without the filter, so
every call shows) under `strace -f`, gives it each program below as its job and answers its tool calls, then
counts the calls made after the job was read (the filter is in place from before that read), with the
arguments of the calls whose arguments the filter checks or could.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sevex"))
from scripted_models import CODE  # noqa: E402  -- the engineer's programs the SEVEX tests run

from trompe_agents.sevex import sandbox_frames as frames  # noqa: E402
from trompe_agents.sevex.isolation.base import CHILD  # noqa: E402

WORKLOAD = [code for key, code in CODE.items() if key != "secret"] + [
    # every allowed module, a big allocation, printing, a file in the work folder, a caught exception
    "import json, math, re, statistics, collections, itertools, functools, random, string, textwrap, dataclasses\n"
    "@dataclasses.dataclass\nclass Box:\n    x: float\n"
    "def main(images, question):\n    data = [random.random() for _ in range(200000)]\n"
    "    big = bytearray(300 * 1024 * 1024)\n    del big\n    s = statistics.mean(data) + math.sqrt(2)\n"
    "    words = re.findall(r'\\w+', question * 1000)\n    c = collections.Counter(words)\n    print('x' * 100000)\n"
    "    t = textwrap.fill(' '.join(words[:500]))\n    j = json.dumps({'a': list(range(1000))})\n"
    "    b = [Box(i) for i in range(1000)]\n    with open('scratch.txt', 'w') as f:\n        f.write(j)\n"
    "    with open('scratch.txt') as f:\n        f.read()\n    try:\n        1 / 0\n    except ZeroDivisionError:\n"
    "        pass\n    return ask_lvlm(images, str(len(c)) + str(s)[:4] + t[:10])\n",
    "import random\ndef main(images, question):\n    random.seed()\n    r = random.SystemRandom().random()\n"
    "    with open('a.txt', 'a+') as f:\n        f.write('x'); f.seek(0); f.read(); f.truncate(0); f.tell()\n"
    "    try:\n        open('missing.txt')\n    except OSError:\n        pass\n    return str(r)\n",
    "def main(images, question):\n    raise ValueError('a failure of its own')\n",  # its error, with a traceback
    "def main(images, question):\n    def f(n):\n        return f(n + 1)\n    return f(0)\n",  # the recursion limit
    "def main(images, question):\n    return len(bytearray(8 * 1024 ** 3))\n",  # the memory limit
    "def main(images, question):\n    return 'x' * (2 * 1024 * 1024)\n",  # an oversize answer
]
API = {"crop": ["image", "box", "zoom"], "ask_lvlm": ["images", "prompt"], "get_image_size": ["image"],
       "draw_line": ["image", "start", "end", "color", "width"]}
ARGUED = ("ioctl", "fcntl", "prctl", "socket", "clone", "clone3", "mmap", "exit_group")
LIMITS = json.dumps({"cpu": 30, "memory": 1024**3, "file": 16 * 1024**2, "files": 64, "processes": None,
                     "listener": None})


def trace(code: str, out: Path) -> None:
    """One program through the strace'd child, its tool calls answered as the tool server would."""
    child = subprocess.Popen(["strace", "-f", "-qq", "-o", str(out), sys.executable, "-I", "-S", str(CHILD),
                              tempfile.mkdtemp(), LIMITS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={})
    child.stdin.write(frames.encode({"code": code, "prompt": "{question}", "images": ["original"],
                                     "question": "Is it on the left?", "api": API}))
    child.stdin.flush()
    while (message := frames.read(child.stdout)) is not None and message["type"] == "call":
        result = {"width": 64, "height": 32} if message["name"] == "get_image_size" else "img_002"
        child.stdin.write(frames.encode({"ok": True, "result": result}))
        child.stdin.flush()
    child.stdin.close()
    child.wait()


def main() -> None:
    counts: collections.Counter[str] = collections.Counter()
    arguments: dict[str, set[str]] = collections.defaultdict(set)
    with tempfile.TemporaryDirectory() as folder:
        for i, code in enumerate(WORKLOAD):
            out = Path(folder) / f"trace{i}"
            trace(code, out)
            lines = out.read_text().splitlines()
            start = next(i for i, line in enumerate(lines) if re.match(r"\d+\s+read\(0,", line))  # the job
            for line in lines[start:]:
                if match := re.match(r"\d+\s+(\w+)\((.*)", line):
                    name, rest = match.groups()
                    counts[name] += 1
                    if name in ARGUED:
                        arguments[name].add(", ".join(rest.split(", ")[:3])[:60])
    for name, count in sorted(counts.items()):
        print(f"{name:16} {count:6}  {'; '.join(sorted(arguments.get(name, ())))[:150]}")


if __name__ == "__main__":
    main()

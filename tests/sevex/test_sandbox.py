"""Generated code runs in a locked-down child process: escapes and runaway programs fail cleanly."""

import asyncio
import os
import tempfile
import time
from pathlib import Path

import pytest

from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits, Worker

API = {"crop": ["image", "box"], "ask_lvlm": ["images", "prompt"]}


@pytest.fixture
async def sandbox():
    box = Sandbox(SandboxLimits(wall_seconds=10, cpu_seconds=2, memory_bytes=512 * 1024 * 1024), warm=1)
    yield box
    await box.close()


async def run(sandbox, body: str, calls: list | None = None):
    async def crop(args):
        calls is not None and calls.append(args)
        return "img_001"

    async def ask(args):
        return f"saw {args['images']}"

    code = "def main(images, question):\n" + "\n".join("    " + line for line in body.splitlines())
    return await sandbox.run(code, "P {question}", ["original"], "Q", API, {"crop": crop, "ask_lvlm": ask})


async def test_program_calls_back_the_api_and_returns_its_answer(sandbox):
    calls = []
    result = await run(sandbox, "c = crop(images[0], [0, 0, 4, 4])\nreturn ask_lvlm([c], PROMPT)", calls)
    assert result.kind == "ok" and result.answer == "saw ['img_001']"
    assert calls == [{"image": "original", "box": [0, 0, 4, 4]}]
    assert [c["name"] for c in result.calls] == ["crop", "ask_lvlm"]


@pytest.mark.parametrize(("body", "kind", "says"), [
    ("return open('/etc/hostname').read()", "forbidden", "outside the sandbox folder"),
    ("import socket\nreturn socket.socket()", "forbidden", "import of 'socket' is not allowed"),
    ("s = __import__('subprocess')\nreturn s.run(['ls'])", "forbidden", "import of 'subprocess' is not allowed"),
    ("import os\nreturn os.system('true')", "forbidden", "import of 'os' is not allowed"),
    ("real = __builtins__['__import__'] if isinstance(__builtins__, dict) else __builtins__.__import__\n"
     "os = real.__closure__[0].cell_contents('os')\nreturn os.listdir('/')", "forbidden", "os.listdir"),
    ("cells = [c.cell_contents for c in crop.__closure__]\n"
     "send = next(c for c in cells if getattr(c, '__name__', '') == 'send')\n"
     "pipe = next(c.cell_contents for c in send.__closure__ if hasattr(c.cell_contents, 'write'))\n"
     "pipe.write('not json\\n')\npipe.flush()\nreturn 'x'", "forbidden", "wrote to the sandbox's channel"),
    ("cells = [c.cell_contents for c in crop.__closure__]\n"
     "send = next(c for c in cells if getattr(c, '__name__', '') == 'send')\n"
     "send({'type': 'call', 'name': ['crop'], 'args': 1})\nreturn 'x'", "forbidden", "wrote to the sandbox's channel"),
    ("while True:\n    pass", "timeout", "CPU time limit"),
    ("x = bytearray(2 * 1024 ** 3)\nreturn len(x)", "memory", "memory limit"),
    ("return 1 / 0", "exception", "ZeroDivisionError"),
])
async def test_escapes_and_runaway_programs_fail_cleanly(sandbox, body, kind, says):
    result = await run(sandbox, body)
    assert result.answer is None
    assert result.kind == kind, result
    assert says in result.error
    # ...and the sandbox keeps serving the next program.
    assert (await run(sandbox, "return 'fine'")).answer == "fine"


async def test_program_may_use_its_own_folder_and_allowed_modules(sandbox):
    result = await run(sandbox, "import math, json\nopen('notes.txt', 'w').write(json.dumps(math.pi))\n"
                                "return open('notes.txt').read()")
    assert result.kind == "ok" and result.answer.startswith("3.14159")


async def test_wall_clock_limit_stops_a_program_waiting_on_calls():
    box = Sandbox(SandboxLimits(wall_seconds=0.5, cpu_seconds=5))

    async def slow(args):
        import asyncio
        await asyncio.sleep(5)

    async with box:
        result = await box.run("def main(images, question):\n    return crop('original', [0, 0, 1, 1])", "", [],
                               "", API, {"crop": slow})
    assert result.kind == "timeout" and "0.5 s" in result.error


async def test_a_failing_api_call_is_an_exception_the_program_can_catch(sandbox):
    async def broken(args):
        raise ValueError("box: outside the image")

    code = ("def main(images, question):\n    try:\n        crop(images[0], [0, 0, 99, 99])\n"
            "    except RuntimeError as e:\n        return 'caught ' + str(e)\n")
    result = await sandbox.run(code, "", ["original"], "", API, {"crop": broken})
    assert result.answer == "caught crop: box: outside the image"


async def test_code_without_main_is_reported(sandbox):
    result = await sandbox.run("x = 1", "", [], "", API, {})
    assert result.kind == "exception" and "main(images, question)" in result.error


def sandbox_children() -> set[int]:
    """Our live sandbox child processes (read from /proc, so nothing of ours is trusted to report them)."""
    pids = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        pids |= {int(p) for p in (task / "children").read_text().split()}
    alive = set()
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if status != "Z" and b"sandbox_child.py" in cmdline:
            alive.add(pid)
    return alive


def sandbox_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("sevex-sandbox-*"))


async def test_cancelled_runs_and_close_leave_no_process_or_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # folders of other test runs on the machine don't count
    before = sandbox_folders()
    box = Sandbox(SandboxLimits(wall_seconds=30), warm=2)

    async def forever(args):
        await asyncio.sleep(60)

    code = "def main(images, question):\n    return crop('original', [0, 0, 1, 1])"
    runs = [asyncio.ensure_future(box.run(code, "", [], "", API, {"crop": forever})) for _ in range(3)]
    deadline = time.monotonic() + 20
    while len(sandbox_children()) < 5 and time.monotonic() < deadline:  # 3 programs waiting + 2 warm
        await asyncio.sleep(0.05)
    assert len(sandbox_children()) == 5
    for run_ in runs:
        run_.cancel()
    await asyncio.gather(*runs, return_exceptions=True)
    await box.close()
    assert sandbox_children() == set() and sandbox_folders() <= before
    with pytest.raises(asyncio.CancelledError):
        await runs[0]


async def test_a_warm_worker_whose_parent_goes_away_removes_its_folder():
    worker = await Worker.start(SandboxLimits())
    worker.process.stdin.close()  # what the child sees when the parent is killed: end of input, no job
    assert await asyncio.wait_for(worker.process.wait(), 10) == 0
    assert not worker.folder.exists()

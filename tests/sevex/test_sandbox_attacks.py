"""Attack programs run under the real OS sandbox: nothing they try reaches the host.

Each program's result is checked the same way: the canary file's secret and the parent's API-key variable
are nowhere in what came back, nothing appeared outside the sandbox, the loopback listener got no
connection, and no process outlives the sample (this process is a child subreaper meanwhile, so anything
that escaped the sandbox's pid namespace would be re-parented to it and found).
"""

from __future__ import annotations

import json
import socket

import pytest
from attack_programs import ATTACKS, fill
from sandbox_support import require_os_sandbox, survivors

from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits

SECRET = "canary-5f1c0e9a-file-secret"
ENV_NAME, ENV_SECRET = "SEVEX_TEST_API_KEY", "sk-canary-7d2b41-env-secret"
API = {"crop": ["image", "box"], "ask_lvlm": ["images", "prompt"]}
LIMITS = SandboxLimits(wall_seconds=5, cpu_seconds=2, memory_bytes=512 * 1024 * 1024)


@pytest.fixture
def host(tmp_path, monkeypatch, subreaper):
    """The canary file, an empty folder outside the sandbox, a loopback listener and a secret variable."""
    (tmp_path / "canary").mkdir()
    canary = tmp_path / "canary" / "secret.txt"
    canary.write_text(SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv(ENV_NAME, ENV_SECRET)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        yield {"canary": canary, "outside": outside, "port": listener.getsockname()[1], "env": ENV_NAME,
               "listener": listener}


async def attack(code: str, host: dict):
    async def crop(args):
        return "img_001"

    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        values = {k: v for k, v in host.items() if k != "listener"}
        result = await box.run(fill(code, **values), "{question}", ["original"], "Q", API,
                               {"crop": crop, "ask_lvlm": crop})
    return result


def assert_contained(result, host: dict) -> None:
    said = json.dumps([result.answer, result.error, result.log, result.calls])
    assert SECRET not in said and ENV_SECRET not in said, said[:2000]
    assert list(host["outside"].iterdir()) == []
    assert host["canary"].read_text() == SECRET
    with pytest.raises(BlockingIOError):  # nobody connected: a connection would be queued already
        host["listener"].accept()
    assert survivors() == set()


@pytest.mark.parametrize(("code", "kinds"), [pytest.param(code, kinds, id=name) for name, code, kinds in ATTACKS])
async def test_attack_is_contained(host, code, kinds):
    result = await attack(code, host)
    assert_contained(result, host)
    if kinds is not None:
        assert result.kind in kinds, result
    if result.kind is not None:
        assert result.answer is None and result.error


async def test_the_program_sees_only_its_sandbox(host):
    """What a program can observe with the calls its filter allows: no environment, a file system of the
    interpreter, its libraries and a private /work (its uid and pid, the network and listing a folder are off
    the list; the host's view of its uid: test_sandbox_host.py)."""
    from attack_programs import UNGUARD, main

    code = UNGUARD + main('''
import os
return repr((dict(os.environ), os.getcwd(), [top for top in ("home", "etc", "tmp", "var", "proc", "usr")
                                             if os.path.exists("/" + top)]))''')
    result = await attack(code, host)
    environ, cwd, top = eval(result.answer)  # noqa: S307 -- our own repr of plain values
    assert set(environ) <= {"PWD"} and cwd == "/work" and top == ["usr"]
    assert_contained(result, host)


async def test_after_an_oversize_answer_the_same_sandbox_runs_the_next_program(host):
    async def crop(args):
        return "img_001"

    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        big = await box.run("def main(images, question):\n    return 'x' * (17 * 1024 * 1024)", "", [], "", API, {})
        fine = await box.run("def main(images, question):\n    return crop(images[0], [0, 0, 1, 1])", "",
                             ["original"], "", API, {"crop": crop})
    assert big.kind == "oversize" and "over the sandbox's limit of 1,048,576 bytes" in big.error
    assert fine.kind is None and fine.answer == "img_001"
    assert survivors() == set()


async def test_sandboxes_closed_while_still_starting_leave_no_process(subreaper):
    """A kill right after the start used to race with bubblewrap's --die-with-parent and orphan the sandbox."""
    for _ in range(10):
        box = Sandbox(LIMITS, warm=3, isolation=require_os_sandbox())
        box._refill()
        await box.close()
    assert survivors() == set()

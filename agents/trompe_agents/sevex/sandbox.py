"""Running generated visual-prompt code in a separate, limited process that can only call back to us."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("sandbox_child.py")

# name -> handler(args) -> JSON-able result; raising ValueError/RuntimeError sends the message to the program
Handler = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class SandboxLimits:
    wall_seconds: float = 120.0  # whole program, tool and model calls included
    cpu_seconds: int = 30  # the program's own computation
    memory_bytes: int = 1024 * 1024 * 1024  # address space of the child
    max_calls: int = 64  # API calls one program may make


@dataclass
class ProgramResult:
    answer: str | None
    error: str | None = None
    kind: str = "ok"  # ok | exception | forbidden | timeout | memory | crashed | call_limit
    log: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)


def _limit(limits: SandboxLimits) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


# what each message from the child must hold, and of which type
MESSAGES = {"done": {"answer": str}, "error": {"error": str, "kind": str}, "call": {"name": str, "args": dict}}


def _parse(line: bytes) -> dict[str, Any]:
    """One message from the child, checked, so a program that writes to the pipe itself cannot crash us."""
    message = json.loads(line)
    for key, kind in MESSAGES[message["type"]].items():
        if not isinstance(message[key], kind):
            raise TypeError(f"{key} must be {kind.__name__}")
    return message


class Worker:
    """A started child interpreter waiting for its one job (started ahead of time by the pool)."""

    def __init__(self, process: asyncio.subprocess.Process, folder: Path):
        self.process = process
        self.folder = folder

    @classmethod
    async def start(cls, limits: SandboxLimits) -> Worker:
        folder = Path(tempfile.mkdtemp(prefix="sevex-sandbox-"))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", str(CHILD), str(folder),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            preexec_fn=_limit(limits), cwd=folder, env={}, limit=16 * 1024 * 1024)
        return cls(process, folder)

    async def run(self, job: dict[str, Any], handlers: dict[str, Handler], limits: SandboxLimits) -> ProgramResult:
        """One job; however it ends (answer, error, timeout, cancellation) the process is killed at once."""
        try:
            return await asyncio.wait_for(self._converse(job, handlers, limits), limits.wall_seconds)
        except TimeoutError:
            return ProgramResult(None, f"time limit: the program ran over {limits.wall_seconds:g} s", "timeout")
        finally:
            self.kill()

    async def _converse(self, job, handlers, limits) -> ProgramResult:
        proc = self.process
        calls: list[dict[str, Any]] = []
        proc.stdin.write((json.dumps(job) + "\n").encode())
        await proc.stdin.drain()
        while True:
            line = await proc.stdout.readline()
            if not line:
                code = await proc.wait()
                kind = "timeout" if code in (-24, -9) and not calls else "crashed"
                reason = {-24: "CPU time limit reached", -9: "killed (memory or CPU limit)"}.get(
                    code, f"the program's process ended unexpectedly (exit {code})")
                return ProgramResult(None, reason, kind, calls=calls)
            try:
                message = _parse(line)
            except (ValueError, TypeError, KeyError):  # only a program tampering with the pipe gets here
                return ProgramResult(None, f"the program wrote to the sandbox's channel: {line[:80]!r}", "forbidden",
                                     calls=calls)
            if message["type"] == "done":
                return ProgramResult(message["answer"], log=message.get("log", ""), calls=calls)
            if message["type"] == "error":
                return ProgramResult(None, message["error"], message["kind"], message.get("log", ""), calls)
            if len(calls) >= limits.max_calls:
                return ProgramResult(None, f"the program made more than {limits.max_calls} API calls", "call_limit",
                                     calls=calls)
            calls.append({"name": message["name"], "args": message["args"]})
            reply = await self._dispatch(message["name"], message["args"], handlers)
            proc.stdin.write((json.dumps(reply) + "\n").encode())
            await proc.stdin.drain()

    @staticmethod
    async def _dispatch(name: str, args: dict[str, Any], handlers: dict[str, Handler]) -> dict[str, Any]:
        handler = handlers.get(name)
        if handler is None:
            return {"ok": False, "error": f"unknown function {name!r}"}
        try:
            return {"ok": True, "result": await handler(args)}
        except Exception as exc:  # any failure of a call is the program's to handle, never ours to crash on
            return {"ok": False, "error": f"{name}: {exc}"}

    def kill(self) -> None:
        """SIGKILL it directly: Popen.kill() polls first, which can reap the child behind asyncio's back (asyncio
        then logs 'Unknown child process' and reports exit code 255)."""
        if self.process.returncode is None:
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:  # already gone
                pass

    async def close(self) -> None:
        """Kill, reap and delete the folder (even if this is cancelled while waiting)."""
        self.kill()
        try:
            await self.process.wait()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class Sandbox:
    """Runs programs in fresh child processes, keeping `warm` of them started ahead of time.

    Finished processes are reaped in the background: `await close()` (or `async with Sandbox(...)`) before
    the event loop ends."""

    def __init__(self, limits: SandboxLimits | None = None, warm: int = 0):
        self.limits = limits or SandboxLimits()
        self.warm = warm
        self._ready: list[asyncio.Task[Worker]] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    def _refill(self) -> None:
        while not self._closed and len(self._ready) < self.warm:
            self._ready.append(asyncio.ensure_future(Worker.start(self.limits)))

    def _retire(self, worker: Worker) -> None:
        """Kill now; reap and clean up in the background, so a finished program's answer is not kept waiting."""
        worker.kill()
        task = asyncio.ensure_future(worker.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def run(self, code: str, prompt: str, images: list[str], question: str,
                  api: dict[str, list[str]], handlers: dict[str, Handler]) -> ProgramResult:
        """Run `main(images, question)` of `code`; `api` names each callable and its parameter order."""
        worker = await (self._ready.pop(0) if self._ready else Worker.start(self.limits))
        try:
            self._refill()
            job = {"code": code, "prompt": prompt, "images": images, "question": question, "api": api}
            return await worker.run(job, handlers, self.limits)
        finally:
            self._retire(worker)

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop the pool: no more warm starts; every started process is killed and reaped, its folder deleted."""
        self._closed = True
        ready, self._ready = self._ready, []
        for task in ready:
            try:
                self._retire(await task)
            except Exception:  # noqa: BLE001 -- a start that failed left nothing behind
                continue
        while self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

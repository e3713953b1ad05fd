"""Running generated visual-prompt code in an OS sandbox (see isolation/), with a warm pool of started ones."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..failures import ErrorKind, Source
from . import sandbox_frames as frames
from .isolation import Isolation, Launch, SandboxLimits, choose
from .isolation.cgroup import Counters
from .sandbox_listener import FilterRecord

__all__ = ["Handler", "ProgramResult", "Sandbox", "SandboxChild", "SandboxLimits"]

# name -> handler(args) -> JSON-able result; raising ValueError/RuntimeError sends the message to the program
Handler = Callable[[dict[str, Any]], Awaitable[Any]]

# what each message from the child must hold (exactly these keys), and of which type
MESSAGES = {"done": {"answer": str, "log": str}, "error": {"error": str, "kind": str, "log": str},
            "call": {"name": str, "args": dict}}
# the error kinds a child may report itself ("forbidden" and "memory" only under a filter whose record bears them
# out, or with no filter at all, `--sandbox none`)
CHILD_KINDS = frozenset({ErrorKind.EXCEPTION, ErrorKind.FORBIDDEN, ErrorKind.MEMORY, ErrorKind.OVERSIZE})
# every kind a run may end as without an answer (ProgramResult.kind): the program's endings of the shared vocabulary
KINDS = frozenset(kind for kind in ErrorKind if kind.source is Source.PROGRAM)
START_SECONDS = 60.0  # how long a started child may take to hand over its filter's listener (a loaded machine)
CPU_SIGNALS = (signal.SIGXCPU, signal.SIGKILL)  # RLIMIT_CPU's soft and hard limit
# rusage samples CPU time at scheduler ticks and reads a few percent under the exact count RLIMIT_CPU is checked
# against (2 s read 1.94 s); a limit the program lowered (the filter refuses that too) is a whole second lower
CPU_SLACK = 0.5
TEXT_CHARS = 4000  # of an error or log kept in results
CALL_RECORD = 2048  # bytes of a call's arguments kept in ProgramResult.calls; larger ones are kept as their size
CLOSE_SECONDS = 10.0  # after a kill, how long close() waits for the child to end before it SIGKILLs its group


@dataclass
class ProgramResult:
    answer: str | None
    error: str | None = None
    kind: ErrorKind | None = None  # one of KINDS; None: it answered
    log: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)


def _checked(message: dict[str, Any]) -> dict[str, Any]:
    """One message from the child, checked: whatever the program wrote, it cannot crash us or forge a kind."""
    schema = MESSAGES.get(message.get("type")) if isinstance(message.get("type"), str) else None
    if schema is None or set(message) != {"type", *schema}:
        raise frames.FrameError(f"unexpected message with keys {sorted(message)[:8]}")
    for key, kind in schema.items():
        if not isinstance(message[key], kind):
            raise frames.FrameError(f"{key} must be {kind.__name__}")
    if message["type"] == "error" and message["kind"] not in CHILD_KINDS:
        raise frames.FrameError(f"error kind {message['kind'][:40]!r} is not one a program may report")
    return message


def _bound_reached(counters: Counters | None, limits: SandboxLimits) -> tuple[ErrorKind, str] | None:
    """A kind and reason from the kernel's counts in the sandbox's cgroup, where it has one: its OOM killer
    ended a process of the sandbox (`memory`), or pids.max refused one (`crashed`: the sandbox could not run)."""
    if counters is not None and counters.oom_kills:
        return ErrorKind.MEMORY, (f"the sandbox's memory bound ({limits.cgroup_memory_bytes // 2**20:,} MiB, "
                                  f"kernel memory included) was reached: the kernel's OOM killer ended it (cgroup "
                                  f"oom_kill {counters.oom_kills})")
    if counters is not None and counters.pids_refused:
        return ErrorKind.CRASHED, (f"the sandbox's process bound ({limits.processes}) was reached: the kernel "
                                   f"refused new processes (cgroup pids.events max {counters.pids_refused})")
    return None


def _ending(code: int, cpu_seconds: float | None, limits: SandboxLimits, signal_statuses: bool,
            counters: Counters | None = None) -> tuple[ErrorKind, str]:
    """How a program that sent no result ended, from the parent's own view: the kernel's counts in its cgroup
    (`_bound_reached`), else its signal (a negative code, or 128 + N where the isolation reports signals so and
    keeps the program from exiting with such a status), else its exit status, which is the program's to choose
    and so always `crashed`. A CPU timeout is a CPU limit's signal after `cpu_seconds` reached the limit: the
    kernel's count of the program's CPU time. Without that count (`--sandbox none`, trusted code, or a launcher
    that could not report) SIGXCPU alone is read as the limit."""
    bound = _bound_reached(counters, limits)
    if bound is not None:
        return bound
    if code < 0 or (signal_statuses and code > 128):
        signum = -code if code < 0 else code - 128
    else:
        return ErrorKind.CRASHED, f"the program's process ended unexpectedly (exit {code})"
    name = signal.Signals(signum).name if signum in signal.valid_signals() else f"signal {signum}"
    if cpu_seconds is None and signum == signal.SIGXCPU:
        return ErrorKind.PROGRAM_TIMEOUT, "CPU time limit reached"
    if signum in CPU_SIGNALS and cpu_seconds is not None and cpu_seconds >= limits.cpu_seconds - CPU_SLACK:
        return ErrorKind.PROGRAM_TIMEOUT, f"CPU time limit reached ({cpu_seconds:.1f} s of CPU)"
    used = "" if cpu_seconds is None else f" after {cpu_seconds:.2f} s of CPU (limit {limits.cpu_seconds} s)"
    return ErrorKind.CRASHED, f"the program's process was killed by {name}{used}"


def _unencodable(text: str) -> int | None:
    """The index of the first lone surrogate in `text` (None: it is valid Unicode, and so can be saved)."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _printable(text: str) -> str:
    """Text with any lone surrogate replaced (U+FFFD), as logs and errors are kept."""
    if _unencodable(text) is None:
        return text
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


def _recorded(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A call as kept in the result: small arguments as they are, large ones only by size."""
    size = len(json.dumps(args))
    return {"name": name, "args": args if size <= CALL_RECORD else f"<{size:,} bytes>"}


class SandboxChild:
    """A started child waiting for its one job (started ahead of time by the pool)."""

    def __init__(self, process: asyncio.subprocess.Process, launch: Launch):
        self.process = process
        self.launch = launch
        self.record: FilterRecord | None = None  # the filter's record, once its listener has arrived

    @classmethod
    async def start(cls, isolation: Isolation, limits: SandboxLimits) -> SandboxChild:
        """A child under `isolation`, in a session and process group of its own (which kill() signals)."""
        launch = isolation.launch(limits)
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, cwd=launch.cwd, env={}, start_new_session=True,
                pass_fds=launch.pass_fds)
        except BaseException:
            launch.cleanup()
            raise
        finally:
            for fd in launch.pass_fds:
                os.close(fd)
        return cls(process, launch)

    async def run(self, job: dict[str, Any], handlers: dict[str, Handler], limits: SandboxLimits) -> ProgramResult:
        """One job, given only once the child's filter listener has arrived (where it has a filter); however it
        ends (answer, error, timeout, cancellation) the process tree is killed at once. Any call the filter
        refused makes it `forbidden`, whatever else the program did."""
        try:
            if self.launch.listener is not None:
                self.record = await FilterRecord.receive(self.launch.listener, START_SECONDS, limits.memory_bytes,
                                                         self.kill)
                if self.record is None:
                    kind, reason = _bound_reached(self._counters(), limits) or \
                        (ErrorKind.CRASHED, "its filter's listener never arrived")
                    return ProgramResult(None, f"the sandbox did not start: {reason}", kind)
            async with asyncio.timeout(limits.wall_seconds):  # a cancel is never dropped (3.11's wait_for can)
                result = await self._converse(job, handlers, limits)
        except TimeoutError:
            result = ProgramResult(None, f"time limit: the program ran over {limits.wall_seconds:g} s",
                                   ErrorKind.PROGRAM_TIMEOUT)
        finally:
            self.kill()
        if self.record is not None and self.record.count and result.kind is not ErrorKind.FORBIDDEN:
            return ProgramResult(None, self.record.summary(), ErrorKind.FORBIDDEN, result.log, result.calls)
        if self.record is not None and self.record.stopped and result.kind is not ErrorKind.MEMORY:
            return ProgramResult(None, f"the sandbox was stopped: {self.record.stopped}", ErrorKind.CRASHED,
                                 result.log, result.calls)
        return result

    async def _send(self, message: dict[str, Any]) -> None:
        """A frame to the child; if it is gone, the next read reports how it ended."""
        try:
            self.process.stdin.write(frames.encode(message))
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass

    async def _receive(self) -> dict[str, Any] | None:
        """The child's next message, validated; None when it closed its end."""
        stream = self.process.stdout
        try:
            header = await stream.readexactly(frames.HEADER.size)
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return None
            raise frames.FrameError("output ended inside a frame header") from None
        try:
            body = await stream.readexactly(frames.body_size(header, frames.FROM_PROGRAM))
        except asyncio.IncompleteReadError:
            raise frames.FrameError("output ended inside a frame") from None
        return _checked(frames.decode(body))

    async def _converse(self, job, handlers, limits) -> ProgramResult:
        calls: list[dict[str, Any]] = []
        try:
            await self._send(job)
        except frames.FrameTooLarge as exc:
            return ProgramResult(None, f"oversize: the job (code, prompt and question) is too large: {exc}",
                                 ErrorKind.OVERSIZE)
        while True:
            try:
                message = await self._receive()
            except frames.FrameTooLarge as exc:
                return ProgramResult(None, f"oversize: {exc} (answer, output or API arguments too large)",
                                     ErrorKind.OVERSIZE, calls=calls)
            except frames.FrameError as exc:  # only a program tampering with the channel gets here: it broke
                # its own result, and no call was refused (only the filter's record makes a run `forbidden`)
                return ProgramResult(None, f"the program wrote a malformed result to the sandbox's channel: {exc}",
                                     ErrorKind.CRASHED, calls=calls)
            if message is None:
                code = await self.process.wait()
                kind, reason = _ending(code, self._cpu_seconds(), limits, self.launch.signal_statuses,
                                       self._counters())
                return ProgramResult(None, reason, kind, calls=calls)
            log = _printable(message.get("log", "")[-TEXT_CHARS:])
            if message["type"] == "done":
                at = _unencodable(message["answer"])
                if at is not None:
                    return ProgramResult(None, f"the answer is not valid Unicode text: a lone surrogate at index "
                                               f"{at:,}", ErrorKind.EXCEPTION, log, calls)
                return ProgramResult(message["answer"], log=log, calls=calls)
            if message["type"] == "error":
                kind, error = ErrorKind(message["kind"]), _printable(message["error"][:TEXT_CHARS])
                if kind is ErrorKind.FORBIDDEN and self.record is not None and not self.record.count:
                    kind = ErrorKind.EXCEPTION  # the program's word, which no refusal bears out
                if kind is ErrorKind.MEMORY and self.record is not None:  # its word, which only a fact bears out
                    fact = self._memory_fact(limits)
                    kind, error = (ErrorKind.EXCEPTION, error) if fact is None else \
                        (ErrorKind.MEMORY, f"memory limit reached: {fact}")
                return ProgramResult(None, error, kind, log, calls)
            if len(calls) >= limits.max_calls:
                return ProgramResult(None, f"the program made more than {limits.max_calls} API calls",
                                     ErrorKind.CALL_LIMIT, calls=calls)
            calls.append(_recorded(message["name"], message["args"]))
            await self._send(await self._dispatch(message["name"], message["args"], handlers))

    def _memory_fact(self, limits: SandboxLimits) -> str | None:
        """Why the program's MemoryError was its memory bound, from facts it cannot write: its cgroup's OOM kills,
        or what its filter's listener saw of its mappings (None: no such fact, so it raised it like any other)."""
        bound = _bound_reached(self._counters(), limits)
        if bound is not None and bound[0] is ErrorKind.MEMORY:
            return bound[1]
        return self.record.memory if self.record is not None else None

    def _counters(self) -> Counters | None:
        """The kernel's counts so far in the sandbox's cgroup (None: it has no cgroup)."""
        return self.launch.cgroup.counters() if self.launch.cgroup else None

    def _cpu_seconds(self) -> float | None:
        """The CPU seconds the launcher read from the kernel once bubblewrap ended (None: it wrote none)."""
        if self.launch.report is None:
            return None
        try:
            return float(os.read(self.launch.report, 256))
        except (OSError, ValueError):
            return None

    @staticmethod
    async def _dispatch(name: str, args: dict[str, Any], handlers: dict[str, Handler]) -> dict[str, Any]:
        handler = handlers.get(name)
        if handler is None:
            return {"ok": False, "error": f"unknown function {name[:80]!r}"}
        try:
            reply = {"ok": True, "result": await handler(args)}
            frames.encode(reply)  # a result the program could not be sent becomes its error, not ours
            return reply
        except Exception as exc:  # any failure of a call is the program's to handle, never ours to crash on
            return {"ok": False, "error": f"{name}: {exc}"}

    def kill(self) -> None:
        """Signal the child's process group: under bubblewrap SIGTERM, and the launcher then SIGKILLs
        bubblewrap, pid 1 of the launcher's own pid namespace, so the kernel kills every process of the
        sandbox, in any phase of its start, and the launcher reaps it before it exits (isolation/launcher.py);
        an unsandboxed child gets SIGKILL, which it cannot ignore. Sent directly: Popen.kill() polls first,
        which can reap the child behind asyncio's back (asyncio then logs 'Unknown child process'). Closing
        the job pipe ends a child that still waits for its job."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # already gone
                os.killpg(self.process.pid, self.launch.stop_signal)
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.transport.abort()  # close() would first wait to flush what the child never read

    async def close(self) -> None:
        """Kill, reap and delete its folder (even if this is cancelled while waiting); always returns: a
        child still there after CLOSE_SECONDS gets SIGKILL to its group (no process of a sandbox outlives
        that, see kill()), its transport is closed and it is left to the child watcher."""
        self.kill()
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(self.process.wait())
        except TimeoutError:
            if self.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            self.process._transport.close()  # noqa: SLF001 -- asyncio has no public way to drop a process
        finally:
            if self.record is not None:
                self.record.close()
                self.record = None
            self.launch.cleanup()


class Sandbox:
    """Runs programs in fresh child processes, keeping `warm` of them started ahead of time.

    Finished processes are reaped in the background: `await close()` (or `async with Sandbox(...)`) before
    the event loop ends."""

    def __init__(self, limits: SandboxLimits | None = None, warm: int = 0, isolation: Isolation | None = None):
        self.limits = limits or SandboxLimits()
        self.isolation = isolation or choose()  # the strongest OS sandbox here, or SandboxUnavailable
        self.warm = warm
        self._ready: list[asyncio.Task[SandboxChild]] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    def _refill(self) -> None:
        while not self._closed and len(self._ready) < self.warm:
            self._ready.append(asyncio.ensure_future(SandboxChild.start(self.isolation, self.limits)))

    def _retire(self, worker: SandboxChild) -> None:
        """Kill now; reap and clean up in the background, so a finished program's answer is not kept waiting."""
        worker.kill()
        task = asyncio.ensure_future(worker.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def run(self, code: str, prompt: str, images: list[str], question: str,
                  api: dict[str, list[str]], handlers: dict[str, Handler]) -> ProgramResult:
        """Run `main(images, question)` of `code`; `api` names each callable and its parameter order."""
        worker = await (self._ready.pop(0) if self._ready else SandboxChild.start(self.isolation, self.limits))
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

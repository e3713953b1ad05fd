"""Runs one generated visual prompt; spoken to in length-prefixed frames over stdin/stdout.

Started as `python -I -S sandbox_child.py WORKDIR LIMITS_JSON`, normally inside bubblewrap, which is the
security boundary. Before its job arrives the process sets its own rlimits (kernel-enforced, so the program
cannot raise them) and, under bubblewrap, puts itself under the allow-list seccomp filter whose listener it
hands the parent (sandbox_filter.py; the limits' "listener" is the socket for that); before running the
untrusted code it installs a second, Python-level layer (an audit hook and an import allow-list) that turns
common mistakes into clear "forbidden" errors, which the filter records. That layer shares this
interpreter with the code it guards, so it is no boundary: the parent trusts nothing this process sends.
"""

import builtins
import collections
import contextlib
import dataclasses
import functools
import heapq
import io
import itertools
import json
import math
import os
import random
import re
import resource
import statistics
import string
import sys
import textwrap
import traceback

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import sandbox_filter  # noqa: E402  -- beside this file, in the sandbox too
import sandbox_frames as frames  # noqa: E402

ALLOWED_MODULES = {"collections", "dataclasses", "functools", "itertools", "json", "math", "random", "re",
                   "statistics", "string", "textwrap"}
# loaded here, before the filter, since the import system cannot load a module under it (it lists folders and
# maps code): the allowed modules and what they import inside their functions (collections' Counter.most_common
# imports heapq, whose C half is a shared library; the others' are loaded already; test_sandbox_imports.py)
_PRELOADED = (collections, dataclasses, functools, heapq, itertools, json, math, random, re, statistics, string,
              textwrap)
# Audit events the program may never raise; "os." covers listing, creating and deleting files, processes
# and signals, and "import" stops loading any module not preloaded from the allow-list.
BLOCKED_EVENTS = ("os.", "socket.", "subprocess.", "ctypes.", "pty.", "shutil.", "glob.", "gc.", "signal.",
                  "fcntl.", "mmap.", "resource.", "urllib.", "http.", "ftplib.", "smtplib.", "sqlite3.",
                  "pickle.", "marshal.", "import", "sys._getframe", "sys._current_frames", "sys.settrace",
                  "sys.setprofile", "sys.setrecursionlimit", "sys.addaudithook")
LOG_CHARS = 4000  # the tail of what the program prints that goes back with its result


class Forbidden(PermissionError):
    """The program tried to leave the sandbox."""


class Tail(io.TextIOBase):
    """What the program prints, keeping only the last LOG_CHARS characters (printing cannot exhaust memory)."""

    def __init__(self) -> None:
        self.text = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text = (self.text + text[-LOG_CHARS:])[-LOG_CHARS:]
        return len(text)


def set_limits(limits: dict) -> None:
    """rlimits on this process and whatever it could start; CPU's hard limit one second later, so SIGXCPU
    (reported as the CPU limit) comes before SIGKILL."""
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu"], limits["cpu"] + 1))
    for name, key in (("RLIMIT_AS", "memory"), ("RLIMIT_FSIZE", "file"), ("RLIMIT_NOFILE", "files"),
                      ("RLIMIT_NPROC", "processes")):
        if limits[key] is not None:
            resource.setrlimit(getattr(resource, name), (limits[key], limits[key]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _module_code(namespace: object) -> bool:
    """Whether an import comes from a loaded module's code (its globals are that module's namespace), rather
    than from the program's (its own namespace, any dict it made, or none). A program may pass a module's
    namespace itself: it then gets a module already loaded, which it could reach anyway (`statistics.sys`)."""
    return namespace is not None and any(getattr(module, "__dict__", None) is namespace
                                         for module in list(sys.modules.values()))


def lock_down(folder: str) -> list[str]:
    """Install the audit hook and the import allow-list (the second layer); returns the list of violations,
    so a program that catches the Forbidden error still ends as forbidden."""
    real_folder = os.path.realpath(folder)
    violations: list[str] = []

    def refuse(reason: str) -> None:
        """Under the OS sandbox's filter, getppid (off its list) has the parent record the refusal: its record,
        not this process's word, is what makes the run `forbidden`."""
        violations.append(reason)
        os.getppid()
        raise Forbidden(reason)

    def audit(event: str, args: tuple) -> None:
        if event == "open":
            path = args[0]
            if isinstance(path, int):
                return
            real = os.path.realpath(os.fsdecode(path))
            if not (real == real_folder or real.startswith(real_folder + os.sep)):
                refuse(f"file access outside the sandbox folder: {os.fsdecode(path)}")
        elif event.startswith(BLOCKED_EVENTS):
            refuse(f"operation not allowed in the sandbox: {event}")

    sys.addaudithook(audit)
    real_import = builtins.__import__

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        """The program's own imports must name an allowed module; imports inside a loaded module's code (the
        allowed modules' own, such as Counter.most_common's `import heapq`) go on, and get only modules already
        loaded: loading any other raises the audit hook's "import" event, which is refused."""
        if (level or name.partition(".")[0] not in ALLOWED_MODULES) and not _module_code(globals):
            refuse(f"import of {'.' * level + name!r} is not allowed; available: {', '.join(sorted(ALLOWED_MODULES))}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded_import
    return violations


def main() -> None:
    folder, limits = sys.argv[1], json.loads(sys.argv[2])
    set_limits(limits)
    if limits["listener"] is not None:  # the OS sandbox: from here on only the allow-list's calls
        sandbox_filter.install(limits["listener"])
    channel_in, channel_out = sys.stdin.buffer, sys.stdout.buffer
    job = frames.read(channel_in)
    if job is None:  # the parent went away before giving a job: leave nothing behind
        if limits["listener"] is None:  # (bubblewrap's private tmpfs is gone with the sandbox)
            os.rmdir(folder)
        return
    os.chdir(folder)
    log = Tail()
    sys.stdout = sys.stderr = log

    def send(message: dict, what: str) -> None:
        """One frame to the parent; a message over the cap ends the program with an `oversize` error, and a
        channel the program closed ends it at once (the parent reads what it left there)."""
        try:
            data, last = frames.encode(message, frames.FROM_PROGRAM), False
        except frames.FrameTooLarge as exc:
            data = frames.encode({"type": "error", "kind": "oversize", "error": f"{what}: {exc}", "log": log.text})
            last = True
        try:
            channel_out.write(data)
            channel_out.flush()
        except (OSError, ValueError):  # closed by the program: nothing more can be said, nor a traceback printed
            os._exit(1)
        if last:
            os._exit(1)

    def remote(name: str, params: list[str]):
        def call(*args, **kwargs):
            if len(args) > len(params):
                raise TypeError(f"{name}() takes at most {len(params)} positional arguments")
            payload = dict(zip(params, args)) | kwargs
            send({"type": "call", "name": name, "args": payload}, f"the arguments of {name}()")
            reply = frames.read(channel_in)
            if reply is None:  # the parent ended the run
                os._exit(1)
            if not reply.get("ok"):
                raise RuntimeError(reply.get("error", "tool failed"))
            return reply["result"]

        call.__name__ = name
        return call

    namespace = {"__name__": "visual_prompt", "PROMPT": job["prompt"]}
    namespace.update({name: remote(name, params) for name, params in job["api"].items()})
    violations = lock_down(folder)
    try:
        exec(compile(job["code"], "visual_prompt.py", "exec"), namespace)
        if "main" not in namespace:
            raise NameError("the code must define main(images, question)")
        answer = str(namespace["main"](job["images"], job["question"]))
        if violations:
            raise Forbidden(violations[0])
        send({"type": "done", "answer": answer, "log": log.text}, "the answer")
    except Forbidden as exc:
        send({"type": "error", "kind": "forbidden", "error": str(exc), "log": log.text}, "the error")
    except MemoryError as exc:  # the parent reads the peak of our address space while we make the probe
        with contextlib.suppress(OSError):  # refused (not recorded) under the filter, harmless without one
            os.getpid()
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
        send({"type": "error", "kind": "memory", "error": text, "log": ""}, "the error")
    except BaseException as exc:  # the program's own failure, reported, never raised in the parent
        forbidden = isinstance(exc.__context__, Forbidden)
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
        send({"type": "error", "kind": "forbidden" if forbidden else "exception", "error": text, "log": log.text},
             "the error")


if __name__ == "__main__":
    main()

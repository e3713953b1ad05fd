"""Runs one generated visual prompt in a locked-down interpreter; spoken to over stdin/stdout.

Started as `python -I -S sandbox_child.py TMPDIR`. It waits for one job line, then installs the locks
(an audit hook that cannot be removed, an import allow-list) before running the untrusted code. Only the
visual-tool API functions, which are calls back to the parent, reach anything outside this process.
"""

import builtins
import collections
import dataclasses
import functools
import io
import itertools
import json
import math
import os
import random
import re
import statistics
import string
import sys
import textwrap
import traceback

ALLOWED_MODULES = {"collections", "dataclasses", "functools", "itertools", "json", "math", "random", "re",
                   "statistics", "string", "textwrap"}
_PRELOADED = (collections, dataclasses, functools, itertools, json, math, random, re, statistics, string, textwrap)
# Audit events the program may never raise; "os." covers listing, creating and deleting files, processes
# and signals, and "import" stops loading any module not preloaded from the allow-list.
BLOCKED_EVENTS = ("os.", "socket.", "subprocess.", "ctypes.", "pty.", "shutil.", "glob.", "gc.", "signal.",
                  "fcntl.", "mmap.", "resource.", "urllib.", "http.", "ftplib.", "smtplib.", "sqlite3.",
                  "pickle.", "marshal.", "import", "sys._getframe", "sys._current_frames", "sys.settrace",
                  "sys.setprofile", "sys.setrecursionlimit", "sys.addaudithook")


class Forbidden(PermissionError):
    """The program tried to leave the sandbox."""


def lock_down(folder: str) -> None:
    """Install the audit hook and the import allow-list; after this nothing can undo them."""
    real_folder = os.path.realpath(folder)

    def audit(event: str, args: tuple) -> None:
        if event == "open":
            path = args[0]
            if isinstance(path, int):
                return
            real = os.path.realpath(os.fsdecode(path))
            if not (real == real_folder or real.startswith(real_folder + os.sep)):
                raise Forbidden(f"file access outside the sandbox folder: {os.fsdecode(path)}")
        elif event.startswith(BLOCKED_EVENTS):
            raise Forbidden(f"operation not allowed in the sandbox: {event}")

    sys.addaudithook(audit)
    real_import = builtins.__import__

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.partition(".")[0] not in ALLOWED_MODULES:
            raise Forbidden(f"import of {name!r} is not allowed; available: {', '.join(sorted(ALLOWED_MODULES))}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded_import


def main() -> None:
    folder = sys.argv[1]
    channel_in, channel_out = sys.stdin, sys.stdout
    line = channel_in.readline()
    if not line:  # the parent went away before giving a job (killed or closed): leave nothing behind
        os.rmdir(folder)
        return
    job = json.loads(line)
    os.chdir(folder)
    captured = io.StringIO()
    sys.stdout = sys.stderr = captured

    def send(message: dict) -> None:
        channel_out.write(json.dumps(message) + "\n")
        channel_out.flush()

    def remote(name: str, params: list[str]):
        def call(*args, **kwargs):
            if len(args) > len(params):
                raise TypeError(f"{name}() takes at most {len(params)} positional arguments")
            payload = dict(zip(params, args)) | kwargs
            send({"type": "call", "name": name, "args": payload})
            reply = json.loads(channel_in.readline())
            if not reply.get("ok"):
                raise RuntimeError(reply.get("error", "tool failed"))
            return reply["result"]

        call.__name__ = name
        return call

    namespace = {"__name__": "visual_prompt", "PROMPT": job["prompt"]}
    namespace.update({name: remote(name, params) for name, params in job["api"].items()})
    lock_down(folder)
    try:
        exec(compile(job["code"], "visual_prompt.py", "exec"), namespace)
        if "main" not in namespace:
            raise NameError("the code must define main(images, question)")
        answer = namespace["main"](job["images"], job["question"])
        send({"type": "done", "answer": str(answer), "log": captured.getvalue()[-4000:]})
    except Forbidden as exc:
        send({"type": "error", "kind": "forbidden", "error": str(exc), "log": captured.getvalue()[-4000:]})
    except MemoryError:
        send({"type": "error", "kind": "memory", "error": "memory limit reached"})
    except BaseException as exc:  # the program's own failure, reported, never raised in the parent
        forbidden = isinstance(exc.__context__, Forbidden) or "not allowed" in str(exc)
        send({"type": "error", "kind": "forbidden" if forbidden else "exception",
              "error": "".join(traceback.format_exception_only(type(exc), exc)).strip(),
              "trace": traceback.format_exc()[-3000:], "log": captured.getvalue()[-4000:]})


if __name__ == "__main__":
    main()

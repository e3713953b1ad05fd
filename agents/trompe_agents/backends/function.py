"""`function` backend: a Python callable plays the model, so prompts and apps can be tested offline.

The callable receives the conversation so far and the tools on offer, and returns the next assistant turn:

    def decide(messages: list[Message], tools: list[ToolSchema]) -> Reply   # may also be `async def`

where Reply is one of
    str                         final text (the loop parses a JSON answer out of it)
    dict                        a final answer, sent as its JSON text
    ToolCall | list[ToolCall]   tool calls; build them with `tool_call("crop", image="original", box=[...])`
    Message                     a full assistant message (text and tool calls)

`messages[-1]` is what the model would react to: the user question on the first turn, then the tool
results (`role == "tool"`, `.text`, `.images`, `.is_error`). Use it as `--backend function --model
mypkg.mymod:decide`, or pass the callable itself as `BackendOptions(settings=FunctionSettings(function=decide))`.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trompe_kernel.hookspecs import hookimpl

from ..messages import Message, TextPart, ToolCall, ToolSchema, Turn, Usage
from .base import BackendError, BackendOptions
from .settings import BackendSettings, python_only, setting

_ids = itertools.count(1)


def tool_call(name: str, **arguments: Any) -> ToolCall:
    """A tool call with a fresh id, for functions that script a model."""
    return ToolCall(f"call_{next(_ids):04d}", name, arguments, json.dumps(arguments))


def load_function(spec: str) -> Callable[..., Any]:
    """Import `module:function` (or `module.function`); the error says which part was not found."""
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise BackendError(f"--model for the function backend must be 'module:function', got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # console scripts omit the working directory; `mymodel.py` here must import
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BackendError(f"function backend: cannot import module {module_name!r}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise BackendError(f"function backend: module {module_name!r} has no callable {attr!r}")
    return fn


def as_message(reply: Any) -> Message:
    """Turn whatever the function returned into an assistant message."""
    if isinstance(reply, Message):
        return reply
    if isinstance(reply, ToolCall):
        reply = [reply]
    if isinstance(reply, list) and all(isinstance(c, ToolCall) for c in reply):
        return Message("assistant", tool_calls=list(reply))
    if isinstance(reply, dict):
        reply = json.dumps(reply)
    if isinstance(reply, str):
        return Message("assistant", [TextPart(reply)])
    raise BackendError("the function backend's callable must return str, dict, ToolCall, list[ToolCall] or "
                       f"Message; it returned {type(reply).__name__}")


@dataclass(frozen=True)
class FunctionSettings(BackendSettings):
    """The callable itself, for a caller in Python (the command line names it with --model)."""

    function: Callable[..., Any] | None = setting(None, python_only("a callable", "--model module:function"),
                                                  "the callable that plays the model", shown="--model")


class FunctionBackend:
    """Calls a Python function for every turn; reports zero tokens."""

    name = "function"

    def __init__(self, fn: Callable[..., Any], model: str | None = None):
        self.fn = fn
        self.model = model or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"

    @classmethod
    def from_options(cls, options: BackendOptions) -> FunctionBackend:
        fn = FunctionSettings.of(options).function
        if fn is None:
            if not options.model:
                raise BackendError("the function backend needs --model module:function (the callable that "
                                   "plays the model)")
            fn = load_function(options.model)
        return cls(fn, options.model)

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        reply = self.fn(list(messages), list(tools))
        if inspect.isawaitable(reply):
            reply = await reply
        message = as_message(reply)
        stop = "tool_use" if message.tool_calls else "end_turn"
        return Turn(message, Usage(), self.model, stop)


@hookimpl
def register_backends(register):
    register("function", FunctionBackend.from_options, settings=FunctionSettings)

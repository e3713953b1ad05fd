"""The ReAct loop: the model calls image tools for some rounds, then gives a JSON answer."""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .final_answer import AnswerError, parse_answer
from .replies import ReplyTooLong
from .backends.base import Backend
from .messages import ImagePart, Message, TextPart, ToolCall, Usage
from .toolclient import SessionInfo, ToolClient, ToolInfrastructureError, ToolResultParts
from .trace import Trace
from .failures import ErrorKind, failure_kind

MAX_EMPTY = 2  # empty replies in a row before the agent gives up (Claude documents them; Gemini 3 when thinking
# spends the output budget); an empty assistant turn is never sent back, since the vendors reject it with a 400
MAX_TOOL_CALLS = 16  # tool calls run per reply; the rest are answered with an error naming the cap, never run
OUTPUT_ID = re.compile(r"img_\d{3,}")  # the registry's names for tool outputs; any other id is an input
Stop = Literal["answer", "max_rounds", "error", "invalid_answer"]


@dataclass
class AgentResult:
    """What one agent run produced, and why it stopped."""

    answer: dict[str, Any] | None
    text: str
    rounds: int
    usage: Usage
    stop: Stop
    error: str | None = None
    tool_calls: list[str] = field(default_factory=list)  # calls the server executed
    session: str = ""
    trace_path: Path | None = None
    error_kind: ErrorKind | None = None  # why there is no answer: a backend's kind, empty_reply, invalid_answer, ...
    refused: list[str] = field(default_factory=list)  # calls with bad arguments, the server refused, or past the
    # per-reply cap (MAX_TOOL_CALLS)
    unknown: list[str] = field(default_factory=list)  # calls of tools that were not offered
    empty_replies: int = 0  # replies with neither text nor tool calls; each was answered with a re-prompt


def introduction(sizes: dict[str, tuple[int, int]]) -> str:
    """Tell the model the registry's rules: which ids exist, their sizes, how outputs are named."""
    if not sizes:
        return "This question comes without an image: answer from the text alone (there are no image tools)."
    inputs = ", ".join(f"`{name}` ({w}x{h} px)" for name, (w, h) in sizes.items())
    return (f"Input images: {inputs}. Tools never change an image: each result is a new image named "
            "`img_001`, `img_002`, ... in order, and every id stays usable. Coordinates are pixels of the "
            "image you reference.")


def answer_instruction(schema: dict[str, Any]) -> str:
    return ("When you are done, reply without tool calls with only a JSON object matching this schema:\n"
            + json.dumps(schema))


async def run_agent(backend: Backend, tools: ToolClient, *, system: str, question: str,
                    images: dict[str, Path | bytes] | None = None, final_schema: dict[str, Any], max_rounds: int = 10,
                    tags: list[str] | None = None, allow: list[str] | None = None, trace: Trace | None = None,
                    agent_name: str = "main", session: str | None = None, offer_tools: bool = True) -> AgentResult:
    """Run one sample: open (or reuse) a session, loop model turns and tool calls, validate the answer."""
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    text_only = not images and session is None
    if text_only and offer_tools:
        raise ValueError("images is empty: give at least one, or offer_tools=False for a text-only question")
    own_session = session is None and not text_only
    if text_only:
        info = SessionInfo("", {})  # nothing to open: no image, no tools
    elif own_session:
        info = await tools.open_session(images or {})
    else:
        info = SessionInfo(session, await _input_sizes(tools, session, images))
    try:
        loop = _Loop(backend, tools, info.id, final_schema, trace, agent_name)
        return await loop.run(system, question, info, max_rounds, tags, allow, offer_tools)
    finally:
        if own_session:
            await tools.close_session(info.id)


async def _input_sizes(tools: ToolClient, session: str, images: dict[str, Any] | None) -> dict[str, tuple]:
    """Sizes of the named images (all inputs when none are named) of a session we continue."""
    listing = await tools.call(session, "list_images", {})
    if listing.is_error:
        raise ValueError(f"session: {listing.text}")
    records = listing.structured["images"]
    wanted = set(images) if images else {r["id"] for r in records if not OUTPUT_ID.fullmatch(r["id"])}
    return {r["id"]: (r["width"], r["height"]) for r in records if r["id"] in wanted}


class _Loop:
    """State of one run: messages so far, usage, and where the trace goes."""

    def __init__(self, backend: Backend, tools: ToolClient, session: str, schema: dict[str, Any],
                 trace: Trace | None, agent: str):
        self.backend, self.tools, self.session, self.schema = backend, tools, session, schema
        self.trace, self.agent = trace, agent
        self.messages: list[Message] = []
        self.usage = Usage()
        self.calls: list[str] = []
        self.refused: list[str] = []
        self.unknown: list[str] = []
        self.empty = self.empty_total = 0  # empty replies in a row, and in all

    def add(self, message: Message) -> None:
        self.messages.append(message)
        if self.trace and message.role in ("system", "user"):
            self.trace.message(self.agent, message)

    async def run(self, system: str, question: str, info: SessionInfo, max_rounds: int,
                  tags: list[str] | None, allow: list[str] | None, offer_tools: bool = True) -> AgentResult:
        schemas = await self.tools.list_tools(tags, allow) if offer_tools else []  # no tools: the baseline
        offered = {t.name for t in schemas}
        if self.trace:
            self.trace.event("start", self.agent, backend=self.backend.name, model=self.backend.model,
                             session=self.session, max_rounds=max_rounds, tools=sorted(offered),
                             final_schema=self.schema)
        self.add(Message("system", [TextPart(system + "\n\n" + answer_instruction(self.schema))]))
        shown = [ImagePart(name, await self.tools.image_png(self.session, name)) for name in info.sizes]
        self.add(Message("user", [TextPart(introduction(info.sizes) + "\n\n" + question), *shown]))
        corrected, rounds, text = False, 0, ""
        while rounds < max_rounds:
            rounds += 1
            started = time.monotonic()
            try:
                turn = await self.backend.complete(self.messages, schemas, final_schema=self.schema)
            except Exception as exc:  # noqa: BLE001 -- a failed backend ends this sample, not the run
                billed = getattr(exc, "usage", None)  # e.g. a reply cut off twice: both were billed
                self.usage = self.usage + billed if isinstance(billed, Usage) else self.usage
                return self.finish(None, text, rounds, "error", f"{type(exc).__name__}: {exc}",
                                   failure_kind(exc))
            self.usage = self.usage + turn.usage
            if self.trace:
                self.trace.assistant(self.agent, turn, self.backend.name, time.monotonic() - started)
            if not turn.message.tool_calls and not turn.message.text.strip():
                if (stop := self.empty_reply(rounds)) is not None:
                    return stop
                continue
            self.empty = 0
            self.messages.append(turn.message)
            text = turn.message.text
            if turn.message.tool_calls:
                calls = turn.message.tool_calls
                for call in calls[:MAX_TOOL_CALLS]:
                    await self.run_tool(call, offered)
                for call in calls[MAX_TOOL_CALLS:]:
                    self.over_cap(call, len(calls))
                continue
            try:
                return self.finish(parse_answer(text, self.schema), text, rounds, "answer")
            except ReplyTooLong as exc:  # a typed failure: a correction would only ask for more of the same
                return self.finish(None, text, rounds, "invalid_answer", str(exc), exc.kind)
            except AnswerError as exc:
                if corrected:
                    return self.finish(None, text, rounds, "invalid_answer", str(exc), ErrorKind.INVALID_ANSWER)
                corrected = True
                self.add(Message("user", [TextPart(f"Your final answer is not valid: {exc}. "
                                                   + answer_instruction(self.schema))]))
        return self.finish(None, text, rounds, "max_rounds", f"no final answer after {max_rounds} rounds",
                           ErrorKind.MAX_ROUNDS)

    def empty_reply(self, rounds: int) -> AgentResult | None:
        """Re-prompt after an empty reply (never echoed back); give up after MAX_EMPTY in a row."""
        self.empty += 1
        self.empty_total += 1
        if self.trace:
            self.trace.event("empty_reply", self.agent, round=rounds, in_a_row=self.empty)
        if self.empty >= MAX_EMPTY:
            return self.finish(None, "", rounds, "error", f"the model replied with nothing {self.empty} times in a "
                               "row", ErrorKind.EMPTY_REPLY)
        self.add(Message("user", [TextPart("Your reply was empty. Continue: call a tool, or give your final answer. "
                                           + answer_instruction(self.schema))]))
        return None

    async def run_tool(self, call: ToolCall, offered: set[str]) -> None:
        """Run one call; the model's failures become an error result it can read and recover from.

        The server's (ToolInfrastructureError: the session lost, the registry down, no replica answering)
        end the sample instead: shown to the model, they would turn into an answer made without the tools."""
        started = time.monotonic()
        if call.arguments is None:
            result = ToolResultParts(f"error: the arguments of {call.name} are not valid JSON "
                                     f"({call.raw_arguments[:200]!r}); send one JSON object", is_error=True)
        elif call.name not in offered:
            result = ToolResultParts(f"error: unknown tool {call.name!r}; available: {', '.join(sorted(offered))}",
                                     is_error=True)
        else:
            try:
                result = await self.tools.call(self.session, call.name, call.arguments)
            except ToolInfrastructureError:
                raise
            except Exception as exc:  # noqa: BLE001 -- any other trouble: tell the model, go on
                result = ToolResultParts(f"error: {call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        kept = self.unknown if call.name not in offered else self.refused if result.is_error else self.calls
        self.answer_call(call, result, kept, started)

    def over_cap(self, call: ToolCall, count: int) -> None:
        """A call past MAX_TOOL_CALLS in one reply: not run; its result says why (every call needs a result)."""
        result = ToolResultParts(f"error: {call.name} was not run: this reply made {count} tool calls and at most "
                                 f"{MAX_TOOL_CALLS} are run per reply; call it again in a later reply if you "
                                 "still need it", is_error=True)
        self.answer_call(call, result, self.refused, time.monotonic())

    def answer_call(self, call: ToolCall, result: ToolResultParts, kept: list[str], started: float) -> None:
        """Record a call under `kept` and give the model its result."""
        kept.append(call.name)
        message = result.to_message(call.id, call.name)
        self.messages.append(message)
        if self.trace:
            self.trace.tool_result(self.agent, message, time.monotonic() - started)

    def finish(self, answer: dict[str, Any] | None, text: str, rounds: int, stop: Stop,
               error: str | None = None, kind: ErrorKind | None = None) -> AgentResult:
        if self.trace:
            self.trace.event("answer", self.agent, answer=answer, stop=stop, rounds=rounds, error=error,
                             error_kind=kind, usage=asdict(self.usage), tool_calls=self.calls,
                             refused=self.refused, unknown=self.unknown)
        return AgentResult(answer, text, rounds, self.usage, stop, error, self.calls, self.session,
                           self.trace.path if self.trace else None, kind, self.refused, self.unknown,
                           self.empty_total)

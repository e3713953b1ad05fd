"""One illusion sample end to end: route, main agent, rescue agent on the same session, last-resort default."""

from __future__ import annotations

import io
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from ..backends.base import Backend
from ..loop import AgentResult, run_agent
from ..messages import Usage
from ..toolclient import SessionInfo, ToolClient
from ..trace import Trace
from .normalize import normalize_image
from .prompts import Prompts
from .router import Route, route

LETTERS = ("A", "B", "C", "D")
TASK_TAGS = {1: ["core"], 2: ["core", "analysis"]}
DEFAULT_ANSWER = {1: "no", 2: "A"}  # the last resort, recorded as agent "default"


def answer_schema(task: int) -> dict[str, Any]:
    """Task I: yes/no; Task II: one letter A-D. Reasons first, so models reason before committing."""
    choices = ["yes", "no"] if task == 1 else list(LETTERS)
    return {"type": "object", "additionalProperties": False, "required": ["reasons", "answer"],
            "properties": {"reasons": {"type": "string"}, "answer": {"type": "string", "enum": choices}}}


@dataclass
class AgentConfig:
    """How samples are answered; everything here is recorded with a run."""

    task: int = 1
    tags: list[str] | None = None  # None: the task's default (Task I core, Task II core+analysis)
    allow: list[str] | None = None
    max_rounds: int = 10
    rescue_rounds: int = 3
    normalize: bool = False
    prompts: Prompts = field(default_factory=Prompts)

    def __post_init__(self):
        if self.task not in (1, 2):
            raise ValueError(f"task must be 1 (yes/no) or 2 (multiple choice A-D), got {self.task!r}")
        if self.max_rounds < 1 or self.rescue_rounds < 1:
            raise ValueError(f"max_rounds and rescue_rounds must be at least 1, got {self.max_rounds} and "
                             f"{self.rescue_rounds}")

    @property
    def effective_tags(self) -> list[str]:
        return self.tags if self.tags is not None else TASK_TAGS[self.task]

    def describe(self) -> dict[str, Any]:
        return {"task": self.task, "tags": self.effective_tags, "allow": self.allow, "max_rounds": self.max_rounds,
                "rescue_rounds": self.rescue_rounds, "normalize": self.normalize,
                "prompts": self.prompts.hashes()}


@dataclass
class Outcome:
    """The final word on one sample: a valid answer always, and which agent gave it."""

    answer: str
    reasons: str
    agent: str  # "main", "rescue" or "default"
    route: Route
    rounds: int
    usage: Usage
    tool_calls: list[str]
    stops: dict[str, str]  # agent -> why it stopped
    errors: list[str]
    trace_dir: Path | None
    seconds: float


def compose_question(question: str, choices: list[str] | None, hint: str) -> str:
    """The question, its lettered options (unless already in the text) and the router's hint."""
    text = question.strip()
    if choices and not all(c.strip() in text for c in choices):
        text += "\n\nOptions:\n" + "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices[:4]))
    return f"{text}\n\n{hint}"


def prepare_images(paths: list[Path], normalize: bool) -> tuple[dict[str, Path | bytes], list[dict]]:
    """Name inputs original, image_2, ...; with normalize, send snapped PNG bytes and say what changed."""
    names = ["original"] + [f"image_{i}" for i in range(2, len(paths) + 1)]
    if not normalize:
        return dict(zip(names, paths)), []
    images: dict[str, Path | bytes] = {}
    stats = []
    for name, path in zip(names, paths):
        with Image.open(path) as im:
            fixed, info = normalize_image(im)
        buf = io.BytesIO()
        fixed.save(buf, format="PNG")
        images[name] = buf.getvalue()
        stats.append({"image": name, **asdict(info)})
    return images, stats


class IllusionAgent:
    """Answers one sample with the main agent, then the rescue agent, then the default if both fail."""

    def __init__(self, backend: Backend, tools: ToolClient, config: AgentConfig | None = None):
        self.backend, self.tools = backend, tools
        self.config = config or AgentConfig()

    async def answer(self, images: list[Path], question: str, choices: list[str] | None = None,
                     trace_dir: Path | None = None) -> Outcome:
        cfg = self.config
        started = time.monotonic()
        trace = Trace(trace_dir) if trace_dir else None
        routed = route(question, cfg.task)
        prompt = compose_question(question, choices, routed.hint())
        inputs, normalized = prepare_images(images, cfg.normalize)
        if trace:
            trace.event("route", "router", **asdict(routed))
            if cfg.normalize:
                trace.event("normalize", "preprocess", images=normalized)
        info = await self.tools.open_session(inputs)
        results: dict[str, AgentResult] = {}
        try:
            results["main"] = await self._attempt("main", cfg.prompts.system(cfg.task), prompt, cfg.max_rounds,
                                                  info, trace)
            if _needs_rescue(results["main"]):  # same session: every image main made is still there
                note = f"\n\n(A previous attempt stopped: {_why(results['main'])}.)"
                results["rescue"] = await self._attempt("rescue", cfg.prompts.rescue(cfg.task), prompt + note,
                                                        cfg.rescue_rounds, info, trace)
        finally:
            await self.tools.close_session(info.id)
        return self._outcome(results, routed, trace, trace_dir, time.monotonic() - started)

    async def _attempt(self, agent: str, system: str, question: str, rounds: int, info: SessionInfo,
                       trace: Trace | None) -> AgentResult:
        """One agent's run; a broken session or tool listing becomes an error result, not an exception."""
        cfg = self.config
        try:
            return await run_agent(self.backend, self.tools, system=system, question=question,
                                   images={name: Path(name) for name in info.sizes},
                                   final_schema=answer_schema(cfg.task), max_rounds=rounds,
                                   tags=cfg.effective_tags, allow=cfg.allow, trace=trace, agent_name=agent,
                                   session=info.id)
        except Exception as exc:
            return AgentResult(None, "", 0, Usage(), "error", f"{type(exc).__name__}: {exc}")

    def _outcome(self, results: dict[str, AgentResult], routed: Route, trace: Trace | None,
                 trace_dir: Path | None, seconds: float) -> Outcome:
        errors = [f"{name}: {r.error}" for name, r in results.items() if r.error]
        answered = next(((name, r) for name, r in results.items() if not _needs_rescue(r)), None)
        if answered:
            agent, answer, reasons = answered[0], answered[1].answer["answer"], answered[1].answer["reasons"]
        else:
            agent, answer = "default", DEFAULT_ANSWER[self.config.task]
            reasons = "no agent gave a valid answer; deterministic default"
        usage = sum((r.usage for r in results.values()), Usage())
        stops = {name: r.stop for name, r in results.items()}
        if trace:
            trace.event("final", agent, answer=answer, reasons=reasons, stops=stops, errors=errors)
        return Outcome(answer, reasons, agent, routed, sum(r.rounds for r in results.values()), usage,
                       [c for r in results.values() for c in r.tool_calls], stops, errors, trace_dir, seconds)


def _needs_rescue(result: AgentResult) -> bool:
    return result.stop != "answer" or not isinstance(result.answer, dict) or "answer" not in result.answer


def _why(result: AgentResult) -> str:
    return {"max_rounds": "it used all its tool rounds without answering",
            "invalid_answer": "its final answer did not match the required format"}.get(
        result.stop, f"an error ({result.error})")

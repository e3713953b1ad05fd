"""One illusion sample end to end: route, main agent, rescue agent on the same session; never an invented answer."""

from __future__ import annotations

import io
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from ..backends.base import Backend
from ..datasets.answer_types import AnswerType
from ..final_answer import LETTERS, choice_schema, option_letters, without_format_instructions
from ..loop import AgentResult, run_agent
from ..messages import ImagePart, Usage
from ..runfolder import RunFolder
from ..failures import ErrorKind, failure_kind
from ..toolclient import SessionInfo, ToolClient
from ..trace import Trace
from .normalize import normalize_image
from .prompts import Prompts
from .classify import CLASSIFY_MODES, ROUTERS, decide_route
from .router import TASK_TOOLS, Route

TASK_TAGS = {1: ["core"], 2: ["core", "analysis"]}


def answer_schema(task: int, choices: list[str] | None = None, answer_type: AnswerType | None = None) -> dict[str, Any]:
    """The item's answer type's schema (a count, a pair, a letter, ...); without one, Task I: yes/no; Task II:
    one letter per real option of the item (A-C for three, up to A-H; A-D if the item lists none)."""
    if answer_type is not None:
        return answer_type.schema()
    if task == 1:
        return choice_schema(["yes", "no"])
    return choice_schema(option_letters(len(choices)) if choices else list(LETTERS[:4]))


def format_note(task: int, answer_type: AnswerType | None) -> str:
    """The item's answer form, when it is not the task prompt's (Task I yes/no, Task II an option letter)."""
    if answer_type is None or answer_type.kind == ("yesno" if task == 1 else "choice"):
        return ""
    return "\n\n" + answer_type.instruction()


@dataclass
class AgentConfig:
    """How samples are answered; everything here is recorded with a run."""

    task: int = 1
    tags: list[str] | None = None  # None: the task's default (Task I core, Task II core+analysis)
    allow: list[str] | None = None
    max_rounds: int = 10
    rescue_rounds: int = 3
    normalize: bool = False
    no_tools: bool = False  # the baseline: same prompts, no tools offered
    router: str = "model"  # the paper: the model names the category first; regex is the hint/fallback
    classify: str = "first-turn"
    prompts: Prompts = field(default_factory=Prompts)

    def __post_init__(self):
        if self.task not in (1, 2):
            raise ValueError(f"task must be 1 (yes/no) or 2 (multiple choice A-D), got {self.task!r}")
        if self.max_rounds < 1 or self.rescue_rounds < 1:
            raise ValueError(f"max_rounds and rescue_rounds must be at least 1, got {self.max_rounds} and "
                             f"{self.rescue_rounds}")
        if self.router not in ROUTERS:
            raise ValueError(f"router must be one of {', '.join(ROUTERS)}, got {self.router!r}")
        if self.classify not in CLASSIFY_MODES:
            raise ValueError(f"classify must be one of {', '.join(CLASSIFY_MODES)}, got {self.classify!r}")

    @property
    def effective_tags(self) -> list[str]:
        return self.tags if self.tags is not None else TASK_TAGS[self.task]

    @property
    def effective_allow(self) -> list[str] | None:
        """The paper's table of tools for the task, unless --tools or --allow chose otherwise."""
        if self.allow is not None or self.tags is not None:
            return self.allow
        return list(TASK_TOOLS[self.task])

    def describe(self) -> dict[str, Any]:
        return {"task": self.task, "tags": self.effective_tags, "allow": self.effective_allow,
                "max_rounds": self.max_rounds, "rescue_rounds": self.rescue_rounds, "normalize": self.normalize,
                "no_tools": self.no_tools,
                "router": self.router, "classify": self.classify,
                "prompts": self.prompts.hashes()}


@dataclass
class Verdict:
    """The final word on one sample: the answer and which agent gave it, or why there is none."""

    answer: str | None
    reasons: str
    agent: str | None  # "main" or "rescue"; None when no agent answered (see error_kind)
    route: Route
    rounds: int
    usage: Usage
    tool_calls: list[str]
    stops: dict[str, str]  # agent -> why it stopped
    errors: list[str]
    trace_dir: Path | None
    seconds: float
    error_kind: ErrorKind | None = None  # why no agent answered: auth, not_found, empty_reply, invalid_answer, ...
    refused: list[str] = field(default_factory=list)  # tool calls refused (bad arguments) and ...
    unknown: list[str] = field(default_factory=list)  # ... of tools never offered
    empty_replies: int = 0
    roles: dict[str, Usage] = field(default_factory=dict)  # usage per role that ran: router, main, rescue
    reply: str | None = None  # what the model wrote last when no answer was read from it (harness scorers read it)


def compose_question(question: str, choices: list[str] | None, hint: str) -> str:
    """The question (without the dataset's own answer-format instructions), its lettered options (unless already
    in the text) and the router's hint."""
    text = without_format_instructions(question)
    if choices and not all(c.strip() in text for c in choices):
        text += "\n\nOptions:\n" + "\n".join(f"{letter}. {c}" for letter, c in zip(LETTERS, choices))
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
    """Answers one sample with the main agent, and with the rescue agent when main spent its round budget."""

    def __init__(self, backend: Backend, tools: ToolClient, config: AgentConfig | None = None):
        self.backend, self.tools = backend, tools
        self.config = config or AgentConfig()

    async def answer(self, images: list[Path], question: str, choices: list[str] | None = None,
                     trace_dir: RunFolder | Path | None = None, answer_type: AnswerType | None = None) -> Verdict:
        """`trace_dir`: where the trace goes (a run's trace folder is a RunFolder: written without links)."""
        cfg = self.config
        started = time.monotonic()
        folder = RunFolder.of(trace_dir) if trace_dir else None
        # One image store per run (traces are siblings): an image several samples show is kept once.
        trace = Trace(folder, store=folder.parent / ".images") if folder else None
        inputs, normalized = prepare_images(images, cfg.normalize)
        if trace and cfg.normalize:
            trace.event("normalize", "preprocess", images=normalized)
        # A text-only question (HallusionBench has some) is answered from its text: no session, no tools.
        info = await self.tools.open_session(inputs) if inputs else SessionInfo("", {})
        results: dict[str, AgentResult] = {}
        try:
            routed, routing_usage = await self._route(compose_question(question, choices, ""), info)
            if trace:
                trace.event("route", "router", **asdict(routed), usage=asdict(routing_usage))
            prompt = compose_question(question, choices, routed.hint()) + format_note(cfg.task, answer_type)
            schema = answer_schema(cfg.task, choices, answer_type)
            results["main"] = await self._attempt("main", cfg.prompts.system(cfg.task), prompt, cfg.max_rounds,
                                                  info, trace, schema)
            if _needs_rescue(results["main"]):  # same session: every image main made is still there
                note = "\n\n(A previous attempt stopped: it used all its tool rounds without answering.)"
                results["rescue"] = await self._attempt("rescue", cfg.prompts.rescue(cfg.task), prompt + note,
                                                        cfg.rescue_rounds, info, trace, schema)
        finally:
            if info.id:
                await self.tools.close_session(info.id)
        outcome = self._outcome(results, routed, trace, folder.path if folder else None, time.monotonic() - started)
        outcome.usage = outcome.usage + routing_usage
        outcome.roles = {**({"router": routing_usage} if routing_usage.total else {}),
                         **{name: r.usage for name, r in results.items()}}
        return outcome

    async def _route(self, question: str, info: SessionInfo) -> tuple[Route, Usage]:
        """The category: the model names it (shown the images in first-turn mode), or the regex router does."""
        cfg = self.config
        shown = []
        if cfg.router != "regex" and cfg.classify == "first-turn":
            shown = [ImagePart(name, await self.tools.image_png(info.id, name)) for name in info.sizes]
        decided = await decide_route(self.backend, task=cfg.task, question=question, router=cfg.router,
                                     mode=cfg.classify, system=cfg.prompts.system(cfg.task),
                                     template=cfg.prompts.text("classify"), images=shown)
        return decided.route, decided.usage

    async def _attempt(self, agent: str, system: str, question: str, rounds: int, info: SessionInfo,
                       trace: Trace | None, schema: dict[str, Any]) -> AgentResult:
        """One agent's run; a broken session or tool listing becomes an error result, not an exception."""
        cfg = self.config
        try:
            return await run_agent(self.backend, self.tools, system=system, question=question,
                                   images={name: Path(name) for name in info.sizes},
                                   final_schema=schema, max_rounds=rounds,
                                   tags=cfg.effective_tags, allow=cfg.effective_allow, trace=trace, agent_name=agent,
                                   session=info.id or None, offer_tools=not cfg.no_tools and bool(info.id))
        except Exception as exc:
            return AgentResult(None, "", 0, Usage(), "error", f"{type(exc).__name__}: {exc}",
                               error_kind=failure_kind(exc))

    def _outcome(self, results: dict[str, AgentResult], routed: Route, trace: Trace | None,
                 trace_dir: Path | None, seconds: float) -> Verdict:
        errors = [f"{name}: {r.error}" for name, r in results.items() if r.error]
        answered = next(((name, r) for name, r in results.items() if _answered(r)), None)
        agent, answer, reasons, kind, reply = None, None, "", None, None
        if answered:
            agent, answer, reasons = answered[0], answered[1].answer["answer"], answered[1].answer["reasons"]
        else:
            last = list(results.values())[-1]
            kind = last.error_kind or ErrorKind.NO_ANSWER  # the last agent's reason
            # the text it was refused for, kept for the harness scorers (one past the size cap is not kept)
            reply = last.text if last.text.strip() and kind is not ErrorKind.REPLY_TOO_LONG else None
        usage = sum((r.usage for r in results.values()), Usage())
        stops = {name: r.stop for name, r in results.items()}
        if trace:
            trace.event("final", agent or "none", answer=answer, reasons=reasons, stops=stops, errors=errors,
                        error_kind=kind)
        every = list(results.values())
        return Verdict(answer, reasons, agent, routed, sum(r.rounds for r in every), usage,
                       [c for r in every for c in r.tool_calls], stops, errors, trace_dir, seconds, kind,
                       [c for r in every for c in r.refused], [c for r in every for c in r.unknown],
                       sum(r.empty_replies for r in every), reply=reply)


def _answered(result: AgentResult) -> bool:
    return result.stop == "answer" and isinstance(result.answer, dict) and "answer" in result.answer


def _needs_rescue(result: AgentResult) -> bool:
    """The paper's trigger: the main agent spent its request budget without answering. Backend errors, empty
    replies and invalid answers are recorded as failures instead (a rescue on the same backend would not help)."""
    return result.stop == "max_rounds"

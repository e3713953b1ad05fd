"""The explorer model's three roles: Ideator, Engineer and Analyst, each a prompt and a JSON reply."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any

from trompe_prompts import read_prompt

from ..final_answer import AnswerError, parse_answer
from ..backends.base import Backend
from ..messages import ImagePart, Message, TextPart, Usage
from ..records import SampleResult
from .tree import Implementation, SelfEval

IDEAS_SCHEMA = {"type": "object", "required": ["ideas"], "properties": {"ideas": {"type": "array", "items": {
    "type": "object", "required": ["idea", "gain", "novelty", "feasibility"],
    "properties": {"idea": {"type": "string", "minLength": 1}, "gain": {"type": "number"},
                   "novelty": {"type": "number"}, "feasibility": {"type": "number"}}}}}}
CODE_SCHEMA = {"type": "object", "required": ["code", "prompt"],
               "properties": {"code": {"type": "string", "minLength": 1}, "prompt": {"type": "string"}}}
ANALYSIS_SCHEMA = {"type": "object", "required": ["analysis", "insights"],
                   "properties": {"analysis": {"type": "string"},
                                  "insights": {"type": "array", "items": {"type": "string"}}}}
PROMPTS_SCHEMA = {"type": "object", "required": ["prompts"],
                  "properties": {"prompts": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}
MIN_FEASIBILITY = 4
APE_PROPOSE = "proposal step: write an improved version of the current prompt that addresses its failures."
APE_RESAMPLE = ("resampling step (iterative APE): write a variation of the current best prompt that keeps its "
                "meaning, in new words, with the small changes its failures suggest.")


class RoleError(RuntimeError):
    """The explorer model did not give a usable reply after a corrective retry."""


@dataclass
class Costs:
    """Tokens spent, per role, per stage and per iteration (the quantities of the paper's Tables 2-3)."""

    by_role: dict[str, Usage] = field(default_factory=dict)
    by_stage: dict[str, Usage] = field(default_factory=dict)
    by_iteration: dict[int, Usage] = field(default_factory=dict)

    def add(self, role: str, stage: str, iteration: int, usage: Usage) -> None:
        for table, key in ((self.by_role, role), (self.by_stage, stage), (self.by_iteration, iteration)):
            table[key] = table.get(key, Usage()) + usage

    def exploration_total(self) -> int:
        return sum(u.total for u in self.by_iteration.values())

    def to_json(self) -> dict[str, Any]:
        def dump(table):
            return {str(k): vars(v) for k, v in table.items()}
        return {"by_role": dump(self.by_role), "by_stage": dump(self.by_stage),
                "by_iteration": dump(self.by_iteration)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Costs:
        def load(table, key=str):
            return {key(k): Usage(**v) for k, v in table.items()}
        return cls(load(data["by_role"]), load(data["by_stage"]), load(data["by_iteration"], int))


@dataclass
class Roles:
    """Talks to the explorer model; every reply is JSON validated against the role's schema."""

    explorer: Backend
    target_name: str
    costs: Costs = field(default_factory=Costs)
    iteration: int = 0

    async def _ask(self, role: str, stage: str, text: str, schema: dict[str, Any],
                   images: list[ImagePart] | None = None) -> dict[str, Any]:
        messages = [Message("user", [*(images or []), TextPart(text)])]
        for attempt in range(2):
            turn = await self.explorer.complete(messages, [], final_schema=schema)
            self.costs.add(role, stage, self.iteration, turn.usage)
            try:
                return parse_answer(turn.message.text, schema)
            except AnswerError as exc:
                if attempt:
                    raise RoleError(f"{role}: no usable reply ({exc})") from None
                messages += [turn.message, Message("user", [TextPart(
                    f"That reply could not be used ({exc}). Answer again with only the JSON object.")])]
        raise AssertionError("unreachable")

    async def ideas(self, *, task: str, lineage: str, insights: str, siblings: list[str], tools: str,
                    count: int, kind: str) -> list[tuple[str, SelfEval]]:
        """`count` feasible ideas; infeasible ones are rejected and asked for again (twice at most)."""
        accepted: list[tuple[str, SelfEval]] = []
        known = list(siblings)
        for _ in range(3):
            need = count - len(accepted)
            if need <= 0:
                break
            text = _fill("ideator.md", target=self.target_name, task=task, lineage=lineage, insights=insights,
                         siblings=_bullets(known), tools=tools, count=need, kind=kind)
            reply = await self._ask("ideator", "expansion", text, IDEAS_SCHEMA)
            for item in reply["ideas"]:
                if item["feasibility"] >= MIN_FEASIBILITY and item["idea"] not in known and len(accepted) < count:
                    accepted.append((item["idea"], SelfEval(item["gain"], item["novelty"], item["feasibility"])))
                    known.append(item["idea"])
        return accepted

    async def implement(self, *, task: str, idea: str, insights: str, tools: str, image_names: list[str],
                        answer_format: str) -> Implementation:
        text = _fill("engineer.md", target=self.target_name, task=task, idea=idea, insights=insights, tools=tools,
                     image_names=", ".join(f"'{n}'" for n in image_names), answer_format=answer_format)
        reply = await self._ask("engineer", "implementation", text, CODE_SCHEMA)
        return Implementation(reply["code"], reply["prompt"])

    async def analyse(self, *, task: str, idea: str, impl: Implementation, accuracy: float,
                      results: list[SampleResult], images: list[ImagePart]) -> tuple[str, list[str]]:
        lines = [f"- {r.id}{_run_label(r.source or {})}: predicted {r.answer!r}, truth {r.label!r}, "
                 f"{'correct' if r.right else 'WRONG'}" + (f" ({r.error})" if r.error else "")
                 for r in results]
        text = _fill("analyst.md", target=self.target_name, task=task, idea=idea, code=impl.code,
                     prompt=impl.prompt, accuracy=f"{accuracy:.3f}", results="\n".join(lines))
        reply = await self._ask("analyst", "backpropagation", text, ANALYSIS_SCHEMA, images)
        return reply["analysis"], [i for i in reply["insights"] if i.strip()]

    async def better_prompts(self, *, task: str, prompt: str, accuracy: float, failures: list[str],
                             tried: list[str], count: int, resample: bool) -> list[str]:
        """SketchPad+APE: rewrites of the agent's system prompt; the first from the failures (proposal), later
        ones variations of the best so far (APE's iterative resampling)."""
        mode = (APE_RESAMPLE if resample else APE_PROPOSE)
        text = _fill("ape.md", target=self.target_name, task=task, prompt=prompt, accuracy=f"{accuracy:.3f}",
                     failures=_bullets(failures), tried=_bullets(tried), count=count, mode=mode)
        reply = await self._ask("ape", "expansion", text, PROMPTS_SCHEMA)
        return reply["prompts"][:count]


def _fill(name: str, **values: Any) -> str:
    return Template(read_prompt("sevex", name)).safe_substitute({k: str(v) for k, v in values.items()})


def _run_label(line: Mapping[str, Any]) -> str:
    """' (run 2)' for a result of a repeated evaluation (--repeats), read from its line, else nothing."""
    return f" (run {line['run']})" if line.get("run") else ""


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items) if items else "(none yet)"

"""Running one visual prompt over samples: sandboxed code, tools on the server, the target LVLM."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import zip_longest
from string import Template
from typing import Protocol

from trompe_prompts import read_prompt

from ..backends.base import Backend
from ..datasets.base import Sample
from ..failures import ErrorKind
from ..loop import run_agent
from ..messages import Usage
from ..records import SampleResult
from ..runfolder import RunFolder
from ..toolclient import ToolClient
from .outcome import Evaluated, line, sample_result
from .sandbox import Sandbox
from .scoring import Scored
from .tasks import Task, question_text
from .tree import Implementation
from .visual_api import SampleBridge, api_reference, api_signatures

INPUT_NAMES = ["original", "image_2", "image_3", "image_4"]
ANSWER_SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


class Evaluator(Protocol):
    """Where a candidate is run on samples: a Runner in this process, or an executor's workers (distributed.py)."""

    async def evaluate(self, impl: Implementation, samples: list[Sample]) -> list[Evaluated]:
        """Every sample's result, in the samples' order."""
        ...


@dataclass
class Runner:
    """Everything needed to evaluate programs: the server, the target model, the sandbox and the task."""

    tools: ToolClient
    target: Backend
    task: Task
    sandbox: Sandbox
    tool_names: list[str]
    api: dict[str, list[str]]
    concurrency: int = 4
    tool_doc: str = ""  # the API reference the Engineer and Ideator are shown
    evaluator: Evaluator | None = None  # where candidates run instead of here (an executor's workers)

    @classmethod
    async def create(cls, tools: ToolClient, target: Backend, task: Task, sandbox: Sandbox,
                     concurrency: int = 4, evaluator: Evaluator | None = None) -> Runner:
        """Programs may use the task's tool tags, or the ones the user chose with --tools."""
        schemas = await tools.list_tools(tags=tools.default_tags or list(task.tags))
        return cls(tools, target, task, sandbox, [t.name for t in schemas], api_signatures(schemas), concurrency,
                   api_reference(schemas), evaluator)

    async def evaluate(self, impl: Implementation, samples: list[Sample]) -> list[Evaluated]:
        """Every sample in order; a sample's failure is its result. A prompt without code is an agent-loop
        system prompt (SketchPad and its APE rewrites)."""
        if self.evaluator is not None:
            return await self.evaluator.evaluate(impl, samples)
        if not impl.code:
            return await self.evaluate_agentic(samples, system=impl.prompt)
        return await self._each(samples, lambda sample: self.run_sample(impl, sample))

    async def _each(self, samples: list[Sample], run: Callable[[Sample], Awaitable[Evaluated]]) -> list[Evaluated]:
        """`run` on every sample, `concurrency` at a time. Only a target that can answer no one (quota, key)
        raises, after every sample has stopped, so the node is not scored on a broken model."""
        limit = asyncio.Semaphore(self.concurrency)

        async def one(sample: Sample) -> Evaluated:
            async with limit:
                return await run(sample)

        results = await asyncio.gather(*(one(s) for s in samples), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    async def run_sample(self, impl: Implementation, sample: Sample) -> Evaluated:
        images = dict(zip(INPUT_NAMES, sample.images))
        try:
            info = await self.tools.open_session(images)
        except Exception as exc:  # noqa: BLE001 -- an image the server refuses fails this sample, not the run
            return Evaluated(sample_result(sample, None, False, None, f"{type(exc).__name__}: {exc}",
                                           ErrorKind.INPUT, Usage()))
        bridge = SampleBridge(self.tools, info.id, self.target)
        try:
            result = await self.sandbox.run(impl.code, impl.prompt, list(images), question_text(sample), self.api,
                                            bridge.handlers(self.tool_names))
            sent = list(dict.fromkeys(i for call in bridge.sent for i in call["images"]))  # every ask_lvlm call's
            shown = [await self.tools.image_png(info.id, i) for i in sent[:len(INPUT_NAMES)]]
        finally:
            await self.tools.close_session(info.id)
        if bridge.fatal:
            raise bridge.fatal
        scored = await self._score(result.answer, sample)
        return Evaluated(sample_result(sample, scored.prediction, scored.correct, result.answer,
                                       scored.error or result.error, scored.kind or result.kind, bridge.usage), shown)

    async def _score(self, raw: str | None, sample: Sample) -> Scored:
        """The extracted answer and whether it matches the sample's (Task.score_bounded: an answer too long, or
        too slow to read, is its sample's failure, never the run's)."""
        if raw is None:
            return Scored(None, False)
        return await self.task.score_bounded(raw, sample)

    def sketchpad_system(self) -> str:
        """SketchPad's system prompt for this task: tool use with few-shot examples, then the answer format."""
        return Template(read_prompt("sevex", "sketchpad.md")).safe_substitute(answer_format=self.task.answer_format)

    async def evaluate_agentic(self, samples: list[Sample], max_rounds: int = 10,
                               system: str | None = None) -> list[Evaluated]:
        """The SketchPad baseline (or an APE rewrite of its prompt): tool use through the agent loop."""
        system = system or self.sketchpad_system()
        return await self._each(samples, lambda sample: self.run_agentic(sample, system, max_rounds))

    async def run_agentic(self, sample: Sample, system: str, max_rounds: int) -> Evaluated:
        result = await run_agent(self.target, self.tools, system=system, question=question_text(sample),
                                 images=dict(zip(INPUT_NAMES, sample.images)), final_schema=ANSWER_SCHEMA,
                                 max_rounds=max_rounds, allow=self.tool_names)
        raw = (result.answer or {}).get("answer")
        scored = await self._score(raw, sample)
        # the agent loop's own kind (a request's timeout, max_rounds, empty_reply, ...), as the illusion agent's
        return Evaluated(sample_result(sample, scored.prediction, scored.correct, raw, scored.error or result.error,
                                       scored.kind or result.error_kind, result.usage))


def write_results(folder: RunFolder, name: str, results: list[SampleResult]) -> None:
    """One JSON line per sample (`outcome.line`), replaced whole: a kill leaves the old file or the new."""
    folder.write_atomic(name, "".join(json.dumps(line(r)) + "\n" for r in results))


def representatives(runs: list[list[Evaluated]], folder: RunFolder, per_kind: int = 2) -> list[str]:
    """Save a few successes' and failures' LVLM inputs (every image the program sent), taken in turn from each
    run of the node (--repeats), so the analyst sees all runs, not only the first; not all images."""
    chosen = []
    for right in (True, False):
        pools = [[(r, e) for e in run if e.result.right == right and e.shown] for r, run in enumerate(runs)]
        turns = [pair for group in zip_longest(*pools) for pair in group if pair]
        chosen += turns[:per_kind]
    paths = []
    for r, e in chosen:
        run = f"_run{r + 1}" if len(runs) > 1 else ""
        for k, image in enumerate(e.shown[:len(INPUT_NAMES)]):
            name = f"{'ok' if e.result.right else 'fail'}{run}_{_safe(e.result.id)}{f'_{k + 1}' if k else ''}.png"
            folder.write_bytes(name, image)
            paths.append(str(folder.path / name))
    return paths


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:60]

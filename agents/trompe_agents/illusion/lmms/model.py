"""The model lmms-eval calls: each `generate_until` request answered by the illusion agent with its tools.

The request's images (the task's `doc_to_visual`) go into the tool server's registry, the agent answers the task's
own prompt (`doc_to_text`, pre and post prompts included) with a final answer written in the form that prompt asks
for, and that text is returned as it is, so the task's `process_results` scores it by its own rules. A request the
agent cannot answer is returned as an empty reply, which every task scores wrong, and is listed in summary.json;
an answer is never made up. Each request keeps its trace, its input images and the tool images under
OUT/<task>/<doc_id>/ (`illusion-agent trace show` reads them).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lmms_eval.api.instance import GenerationResult, TokenCounts
from lmms_eval.api.model import lmms
from PIL import Image
from tqdm import tqdm

from ...backends.base import Backend
from ...datasets.answer_types import AnswerType
from ...failures import failure_kind
from ...statefiles import write_json_atomic
from ...toolserver import ServerChoice
from ...trace import SAFE_NAME
from ..agent import AgentConfig, IllusionAgent, Verdict

REPLY = AnswerType("reply")  # the final answer in the task prompt's own form, handed to lmms-eval unchanged
REQUESTS = "requests.jsonl"  # one line per answered or failed request, per task folder
SUMMARY = "summary.json"


class NotAnImage(ValueError):
    """A task gave a visual the agent cannot put in its registry (a video path, an audio array)."""


@dataclass
class Settings:
    """What every request is answered with, read from `--model_args` (cli.py)."""

    backend: Backend
    server: ServerChoice
    config: AgentConfig
    out: Path
    concurrency: int = 4
    described: dict[str, Any] = field(default_factory=dict)  # the model_args as given and read, for summary.json


def input_images(visuals: Any, folder: Path) -> list[Path]:
    """The doc's images as lossless PNG files (image_1.png, ...) for the registry; anything else is refused."""
    visuals = visuals if isinstance(visuals, list) else [visuals]
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, visual in enumerate(visuals, start=1):
        if not isinstance(visual, Image.Image):
            raise NotAnImage(f"visual {k} of the doc is a {type(visual).__name__}; trompe answers image tasks "
                             "(doc_to_visual giving PIL images)")
        path = folder / f"image_{k}.png"
        visual.save(path, format="PNG")
        paths.append(path)
    return paths


def token_counts(outcome: Verdict | None) -> TokenCounts | None:
    if outcome is None:
        return None
    usage = outcome.usage
    return TokenCounts(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                       reasoning_tokens=usage.reasoning_tokens)


class TrompeModel(lmms):
    """lmms-eval's `trompe` model: the illusion agent behind lmms-eval's `generate_until`."""

    is_simple = True  # lmms-eval hands over the prompt text and doc_to_visual (not chat messages)

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.lines: list[dict[str, Any]] = []  # every request's line this process, for summary.json

    def generate_until(self, requests) -> list[GenerationResult]:
        return asyncio.run(self._answer_all(list(requests)))

    def generate_until_multi_round(self, requests) -> list[str]:
        raise NotImplementedError("trompe answers generate_until tasks (one agent run per request)")

    def loglikelihood(self, requests) -> list[tuple[float, bool]]:
        raise NotImplementedError("trompe answers generate_until tasks: an agent gives no log-likelihoods")

    async def _answer_all(self, requests: list) -> list[GenerationResult]:
        settings = self.settings
        bar = tqdm(total=len(requests), desc="trompe", unit="request", file=sys.stderr, dynamic_ncols=True)
        slots = asyncio.Semaphore(settings.concurrency)
        async with settings.server.client() as tools:
            await tools.list_tools(settings.config.effective_tags, settings.config.allow)  # a bad tag fails once
            agent = IllusionAgent(settings.backend, tools, settings.config)

            async def one(request) -> GenerationResult:
                async with slots:
                    result = await self._answer(agent, request)
                bar.update(1)
                return result

            try:
                results = await asyncio.gather(*(one(request) for request in requests))
            finally:
                bar.close()
                self._write_summary()
        return list(results)

    async def _answer(self, agent: IllusionAgent, request) -> GenerationResult:
        """One request: its reply, or an empty one with the failure written down."""
        context, _gen_kwargs, doc_to_visual, doc_id, task, split = request.args
        out = self.settings.out
        folder = out / SAFE_NAME.sub("_", str(task)) / SAFE_NAME.sub("_", str(doc_id))
        shutil.rmtree(folder, ignore_errors=True)  # a request answered again starts its trace afresh
        started = time.monotonic()
        outcome: Verdict | None = None
        line: dict[str, Any] = {"task": task, "doc_id": doc_id, "split": split, "trace": str(folder.relative_to(out))}
        try:
            images = input_images(doc_to_visual(self.task_dict[task][split][doc_id]), folder / "inputs")
            outcome = await agent.answer(images, context, None, folder, REPLY)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 -- this request fails (an empty reply), the others go on
            line.update(reply="", agent=None, error=f"{type(exc).__name__}: {exc}", error_kind=str(failure_kind(exc)))
        else:
            line.update(reply=outcome.answer or "", agent=outcome.agent, error="; ".join(outcome.errors) or None,
                        error_kind=str(outcome.error_kind) if outcome.error_kind else None,
                        rounds=outcome.rounds, tool_calls=outcome.tool_calls, route=outcome.route.category,
                        usage=asdict(outcome.usage))
        line["seconds"] = round(time.monotonic() - started, 3)
        folder.parent.mkdir(parents=True, exist_ok=True)
        with (folder.parent / REQUESTS).open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self.lines.append(line)
        return GenerationResult(text=line["reply"], token_counts=token_counts(outcome))

    def _write_summary(self) -> None:
        """summary.json: how many requests were answered, and every failed one with why (never an answer)."""
        failed = [line for line in self.lines if line["agent"] is None]
        kinds = Counter(line["error_kind"] or "no_answer" for line in failed)
        settings = self.settings
        summary = {"backend": settings.backend.name, "model": settings.backend.model, **settings.described,
                   "agent": settings.config.describe(), "requests": len(self.lines),
                   "answered": len(self.lines) - len(failed), "failed": len(failed), "failures_by_kind": dict(kinds),
                   "failures": [{k: line.get(k) for k in ("task", "doc_id", "error_kind", "error", "trace")}
                                for line in failed]}
        settings.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(settings.out / SUMMARY, summary)
        why = (f" ({', '.join(f'{k}: {n}' for k, n in kinds.most_common())}), returned as empty replies (scored "
               "wrong)") if failed else ""
        print(f"trompe: {len(self.lines)} requests, {summary['answered']} answered, {len(failed)} failed{why}; "
              f"traces and {SUMMARY} in {settings.out}", file=sys.stderr)

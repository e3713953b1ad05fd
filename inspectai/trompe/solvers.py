"""The illusion agent as an Inspect solver: trompe's own agent (routing, tool subset per task, round limit, rescue)
with the eval's model behind it, so its answers and records are those of `illusion-agent run`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from trompe_agents.illusion.agent import AgentConfig, IllusionAgent
from trompe_agents.illusion.pricing import standard_prices
from trompe_agents.illusion.prompts import Prompts, parse_overrides
from trompe_agents.illusion.answering import answer_one
from trompe_agents.records import SampleResult
from trompe_agents.illusion.results import first_error
from trompe_agents.toolserver import ServerChoice

from .backend import InspectBackend
from .names import registered
from .samples import CONFIG, KEY, RECORD, trompe_sample


def name_list(value: str | list[str] | None) -> list[str] | None:
    """A comma-separated `-S tools=core,analysis` or a list, as names."""
    if value is None or isinstance(value, list):
        return value
    return [v.strip() for v in value.split(",") if v.strip()]


def server_choice(server_url: str | None, server_cmd: str | None, token: str | None) -> ServerChoice:
    """Which trompe server the tools run on: a URL, a stdio command, or (neither) one inside this process."""
    if server_url and server_cmd:
        raise ValueError("server_url and server_cmd: give one of them (or neither for a server in this process)")
    return ServerChoice(url=server_url, token=token, command=server_cmd)


def agent_config(task: int, *, max_rounds: int, rescue_rounds: int, router: str, classify: str, no_tools: bool,
                 normalize: bool, tools: list[str] | None, allow: list[str] | None,
                 prompt: list[str] | None) -> AgentConfig:
    return AgentConfig(task=task, tags=tools, allow=allow, max_rounds=max_rounds, rescue_rounds=rescue_rounds,
                       normalize=normalize, no_tools=no_tools, router=router, classify=classify,
                       prompts=Prompts(parse_overrides(prompt, task)))


class SampleFailed(RuntimeError):
    """The agent gave no answer: raised so Inspect counts a sample error (its status, `eval-retry`, the viewer),
    never a score of 0; the message is the failure's kind and first error, as `illusion-agent` reports it."""


def final_output(record: SampleResult, model: str) -> ModelOutput:
    """The sample's output in Inspect: the agent's JSON answer; a record without one raises SampleFailed."""
    if record.failed:
        why = first_error(record.error) or "no answer"
        raise SampleFailed(f"trompe: no answer ({record.failure}): {why}")
    return ModelOutput.from_content(model, json.dumps({"reasons": record.reasons, "answer": record.answer}))


@solver(name=registered("illusion_agent"))
def illusion_agent(max_rounds: int = 10, rescue_rounds: int = 3, router: str = "model",
                   classify: str = "first-turn", no_tools: bool = False, normalize: bool = False,
                   tools: str | list[str] | None = None, allow: str | list[str] | None = None,
                   prompt: str | list[str] | None = None, server_url: str | None = None,
                   server_cmd: str | None = None, token: str | None = None, trace_dir: str | None = None,
                   task: int | None = None) -> Solver:
    """The illusion agent on each sample, its result record kept in the sample's store.

    Args:
        max_rounds: the main agent's tool rounds (the paper: 10).
        rescue_rounds: rounds of the rescue agent, run when the main agent used all of its rounds.
        router: who names the question's category: model, both or regex (illusion-agent --router).
        classify: first-turn or call (illusion-agent --classify).
        no_tools: the baseline: same prompts, no tools offered.
        normalize: snap near-flat colours before the model sees the image.
        tools: tool tags to offer (default: the task's: Task I core, Task II core+analysis).
        allow: tool names to offer (default: the paper's table for the task).
        prompt: prompt overrides, FILE or NAME=FILE (illusion-agent --prompt).
        server_url: a running `trompe-server --http`; server_cmd: a server command over stdio; neither: a server
            inside this process. token: the bearer token for server_url.
        trace_dir: a run folder to keep trompe's traces in (traces/<id>); import the log into the same folder
            with `trompe import-inspect LOG --out DIR` and `illusion-agent report` shows them.
        task: 1 or 2, overriding the one the dataset implies.
    """
    choice = server_choice(server_url, server_cmd, token)
    settings = {"max_rounds": max_rounds, "rescue_rounds": rescue_rounds, "router": router, "classify": classify,
                "no_tools": no_tools, "normalize": normalize, "tools": name_list(tools), "allow": name_list(allow),
                "prompt": name_list(prompt)}
    agent_config(task or 1, **settings)  # bad settings fail when the eval starts, not on every sample

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = trompe_sample(state.metadata)
        meta = state.metadata[KEY]
        config = agent_config(task or meta["task"], **settings)
        backend = InspectBackend(get_model())
        with tempfile.TemporaryDirectory(prefix="trompe-inspect-") as scratch:
            out = Path(trace_dir) if trace_dir else Path(scratch)
            async with choice.client() as client:
                agent = IllusionAgent(backend, client, config)
                record = await answer_one(agent, sample, meta["position"], out, config.task, standard_prices())
        state.store.set(RECORD, json.loads(json.dumps(record.to_json(), default=str)))
        state.store.set(CONFIG, config.describe())
        if backend.conversation:
            state.messages = backend.conversation
        state.output = final_output(record, backend.model)
        return state

    return solve


@solver(name=registered("no_tools"))
def no_tools(router: str = "model", classify: str = "first-turn", prompt: str | list[str] | None = None,
             task: int | None = None) -> Solver:
    """The baseline: the illusion agent's prompts and routing, no tools offered (illusion-agent run --no-tools)."""
    return illusion_agent(router=router, classify=classify, prompt=prompt, no_tools=True, task=task)

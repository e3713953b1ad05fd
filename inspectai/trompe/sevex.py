"""SEVEX's discovered visual prompt as an Inspect solver: the prompt's code runs in SEVEX's sandbox on trompe's
tools, and its questions to the model go to the eval's model, as `sevex apply` does."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.isolation import choose as choose_sandbox
from trompe_agents.sevex.outcome import AGENT
from trompe_agents.sevex.prompt_dir import resolve
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits
from trompe_agents.sevex.tasks import get_task

from .backend import InspectBackend
from .names import registered
from .samples import KEY, RECORD, result_record, trompe_sample
from .solvers import server_choice


@solver(name=registered("sevex_prompt"))
def sevex_prompt(source: str, node: int | None = None, task: str | None = None, sandbox: str = "auto",
                 timeout: float = 60.0, server_url: str | None = None, server_cmd: str | None = None,
                 token: str | None = None) -> Solver:
    """A visual prompt `sevex explore` found, applied to each sample (scored by SEVEX's reading of the reply).

    Args:
        source: a `sevex explore` run folder (its best node) or a saved prompt folder (`best/`).
        node: apply this node of the run instead of the best.
        task: the SEVEX task name (default: the prompt's).
        sandbox: where the prompt's code runs: auto/bwrap (bubblewrap) or none (asked for by name only).
        timeout: wall-clock seconds the code may run per sample.
        server_url, server_cmd, token: the tool server, as for trompe/illusion_agent.
    """
    isolation = choose_sandbox(sandbox)  # refuse before any sample when bubblewrap is missing
    prompt = resolve(Path(source), node)
    sevex_task = get_task(task or prompt.meta.get("task") or "probes", prompt.meta.get("task_description"))
    choice = server_choice(server_url, server_cmd, token)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = trompe_sample(state.metadata)
        backend = InspectBackend(get_model())
        box = Sandbox(SandboxLimits(wall_seconds=timeout), isolation=isolation)
        try:
            async with choice.client() as client:
                runner = await Runner.create(client, backend, sevex_task, box, concurrency=1)
                [evaluated] = (await runner.evaluate(prompt.implementation, [sample]) if prompt.implementation
                               else await runner.evaluate_agentic([sample]))
        finally:
            await box.close()
        done = evaluated.result
        state.store.set(RECORD, result_record(  # a program's ending keeps its own kind (program_timeout, ...)
            state.metadata[KEY], backend.model, done.answer, done.reply or "", done.correct, AGENT,
            done.error, done.error_kind, reply=done.reply).to_json())
        state.output = ModelOutput.from_content(backend.model, done.reply or "", error=done.error)
        return state

    return solve

"""A SEVEX visual prompt (a saved prompt folder, as `sevex explore` writes best/) as an Inspect solver: its code
runs in the OS sandbox on trompe's tools, its question goes to the eval's model with the image it made."""

from __future__ import annotations

import base64
import io
import json

import pytest
from inspect_scripts import USAGE
from PIL import Image

from trompe_agents.testing import dataset_files as files

CODE = ("def main(images, question):\n    part = crop(images[0], [0, 0, 8, 8], 2)\n"
        "    return ask_lvlm([part], PROMPT.replace('{question}', question))\n")
SHOWN: list[tuple[int, int]] = []  # the size of each image the model was asked about


def says_yes(messages, tools, tool_choice, config):
    from inspect_ai.model import ContentImage, ModelOutput, ModelUsage

    for message in messages:
        for content in message.content if isinstance(message.content, list) else []:
            if isinstance(content, ContentImage):
                SHOWN.append(Image.open(io.BytesIO(base64.b64decode(content.image.split(",", 1)[1]))).size)
    output = ModelOutput.from_content("mockllm/model", "Looking at the crop: yes.")
    output.usage = ModelUsage(**USAGE, total_tokens=sum(USAGE.values()))
    return output


@pytest.mark.os_sandbox
async def test_visual_prompt_runs_on_each_sample(tmp_path):
    from inspect_ai import eval_async
    from inspect_ai.model import get_model
    from inspect_ai.solver import SolverSpec

    prompt = tmp_path / "best"
    prompt.mkdir()
    (prompt / "visual_prompt.py").write_text(CODE)
    (prompt / "prompt.md").write_text("{question} Answer yes or no.")
    (prompt / "meta.json").write_text(json.dumps({"task": "probes"}))
    dataset = files.write_generic(tmp_path / "probes", 2).parent  # labels: no, yes
    SHOWN.clear()
    [log] = await eval_async("trompe/probes", task_args={"dataset": str(dataset)},
                             solver=SolverSpec("trompe/sevex_prompt", args_passed={"source": str(prompt)}),
                             model=get_model("mockllm/model", custom_outputs=says_yes),
                             log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    assert SHOWN == [(16, 16), (16, 16)]  # the 8x8 crop at zoom 2, once per sample
    records = {s.id: s.store["trompe_record"] for s in log.samples}
    assert {i: (r["answer"], r["correct"], r["agent"]) for i, r in records.items()} == {
        "s0": ("yes", False, "sevex"), "s1": ("yes", True, "sevex")}
    assert log.results.scores[0].metrics["accuracy"].value == 0.5


@pytest.mark.os_sandbox
async def test_a_program_over_its_time_limit_is_recorded_as_a_program_timeout_not_a_request_one(tmp_path):
    """The sample record the report counts names the program's ending (`program_timeout`), whose hint is the
    sandbox's time limit, never the request `timeout` with its advice to rerun with --retry-errors."""
    from inspect_ai import eval_async
    from inspect_ai.model import get_model
    from inspect_ai.solver import SolverSpec

    from trompe_agents.failures import ErrorKind

    prompt = tmp_path / "best"
    prompt.mkdir()
    (prompt / "visual_prompt.py").write_text("def main(images, question):\n    while True:\n        pass\n")
    (prompt / "prompt.md").write_text("{question}")
    (prompt / "meta.json").write_text(json.dumps({"task": "probes"}))
    dataset = files.write_generic(tmp_path / "probes", 1).parent
    [log] = await eval_async("trompe/probes", task_args={"dataset": str(dataset)},
                             solver=SolverSpec("trompe/sevex_prompt", args_passed={"source": str(prompt),
                                                                                    "timeout": 1.0}),
                             model=get_model("mockllm/model", custom_outputs=says_yes),
                             log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    [record] = [s.store["trompe_record"] for s in log.samples]
    assert (record["answer"], record["error_kind"]) == (None, "program_timeout")
    assert "sevex --timeout" in ErrorKind(record["error_kind"]).hint


def test_a_missing_prompt_folder_is_refused(tmp_path):
    from trompe.sevex import sevex_prompt

    with pytest.raises(FileNotFoundError, match="neither a run folder"):
        sevex_prompt(source=str(tmp_path), sandbox="none")

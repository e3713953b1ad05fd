"""Inspect with a solver other than trompe's (Inspect's own `generate()`): the scorer reads the final text by the
item's own answer type, never by the task's yes/no form, so a count whose gold is 1 or 0, a rows,columns pair, a
letter and an option letter are scored as `illusion-agent run` scores them (correctness.matches_label)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from imagekit import gradient

# id -> (answer_type, gold, choices, the solver's final answer, right?)
ITEMS = {
    "count-1": ("integer", "1", None, "1", True),  # the task's yes/no form reads gold 1 as "yes": "1" would lose
    "count-0": ("integer", "0", None, "0", True),
    "count-1-said-2": ("integer", "1", None, "2", False),
    "pair": ("pair", "5,6", None, "5,6", True),
    "letter": ("letter", "b", None, "b", True),
    "choice": ("choice:3", "B", ["red", "green", "blue"], "B", True),
    "yesno-1": ("yesno", "1", None, "yes", True),  # a yes/no item's gold 1 is yes
}


def write_items(folder: Path) -> Path:
    """probes.jsonl (trompe's own format, datasets/jsonl.py) with an `answer_type` per row."""
    (folder / "images").mkdir(parents=True)
    lines = []
    for i, (sample_id, (kind, gold, choices, _, _)) in enumerate(ITEMS.items()):
        gradient(32 + i, 24).save(folder / "images" / f"{sample_id}.png")
        lines.append(json.dumps({"id": sample_id, "images": [f"images/{sample_id}.png"],
                                 "question": f"Question {sample_id}?", "answer": gold, "choices": choices,
                                 "category": "count", "metadata": {}, "answer_type": kind}))
    (folder / "probes.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def replies(messages, tools, tool_choice, config):
    """Inspect's mockllm/model answering each item with its planned JSON answer."""
    from inspect_ai.model import ModelOutput, ModelUsage

    text = "".join(m.text for m in messages if m.role == "user")
    sample_id = next(s for s in ITEMS if f"Question {s}?" in text)
    output = ModelOutput.from_content("mockllm/model", json.dumps({"reasons": "r", "answer": ITEMS[sample_id][3]}))
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tiktoken download
    return output


async def test_a_plain_generate_solver_is_scored_by_each_item_s_answer_type(tmp_path):
    from inspect_ai import eval_async
    from inspect_ai.model import get_model
    from inspect_ai.solver import generate

    from trompe.tasks import probes

    task = probes(dataset=str(write_items(tmp_path / "data")), task=1, solver=generate())
    [log] = await eval_async(task, model=get_model("mockllm/model", custom_outputs=replies),
                             log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    scores = {str(s.id): s.scores["answer"] for s in log.samples}
    assert {i: (score.answer, score.value) for i, score in scores.items()} == {
        i: (answer, "C" if right else "I") for i, (_, _, _, answer, right) in ITEMS.items()}
    records = {i: score.metadata["record"] for i, score in scores.items()}
    assert all(r["agent"] == "inspect" and r["error_kind"] is None for r in records.values())
    assert {i: r["correct"] for i, r in records.items()} == {i: item[4] for i, item in ITEMS.items()}
    facts = ("id", "index", "position", "question", "choices", "label", "category", "answer_type", "model")
    assert {i: {key: r.get(key) for key in facts} for i, r in records.items()} == {  # what the sample was
        i: {"id": i, "index": i, "position": position, "question": f"Question {i}?", "choices": choices,
            "label": gold, "category": "count", "answer_type": kind, "model": "mockllm/model"}
        for position, (i, (kind, gold, choices, _, _)) in enumerate(ITEMS.items())}
    assert all(Path(r["images"][0]).name == f"{i}.png" for i, r in records.items())
    accuracy = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}["accuracy"]
    assert accuracy == pytest.approx(6 / 7)

"""Every number `score --output` (and `score --json`) writes, checked against a hand count: on a BLINK run folder
with subtasks of one, two and three items, a failed item, a subtask whose only item failed and an unlabelled item,
under each of BLINK's three scorers; and at the edges (one record, every record failed).

The replies are bare letters "(A)", which every BLINK harness reads as that letter (BLINK eval/evaluate.py,
lmms-eval blink/utils.py, VLMEvalKit image_mcq.py; see tests/datasets/test_scorers.py for the cited rules), so
the hand count needs no harness code: an item is right when its letter is the label, and a failed item is wrong
(each harness scores an empty reply as a miss). The headline definitions are the harnesses' own: BLINK's
evaluate.py and lmms-eval's `blink_acc` average the per-subtask accuracies; VLMEvalKit's `Overall` counts items.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handstats import wilson
from runlines import write_run
from trompe_agents.illusion.cli import main

# (id, gold letter, the model's letter or None when the sample failed, or "?" for an item with no label)
ITEMS = [("val_Jigsaw_1", "A", "A"), ("val_Jigsaw_2", "B", "A"), ("val_Jigsaw_3", "A", "A"),
         ("val_Counting_1", "C", "C"), ("val_Counting_2", "A", None),
         ("val_Relative_Depth_1", "B", "B"),
         ("val_IQ_Test_1", "D", None),
         ("val_Art_Style_1", None, "A")]
HEADLINES = {"official": ("mean over subtasks", True), "lmms-eval": ("blink_acc", True),
             "vlmevalkit": ("Overall", False)}


def record(item: str, gold: str | None, letter: str | None) -> dict:
    """A result line as `illusion-agent run` writes it for BLINK (answer, raw reply, failure kind)."""
    line = {"id": item, "label": gold, "category": item[4:].rsplit("_", 1)[0], "question": "Which one?",
            "choices": ["A", "B", "C", "D"], "reply": f"({letter})" if letter else None, "answer": letter,
            "agent": "main" if letter else None}
    if letter is None:
        line.update(error_kind="timeout", error="the vendor did not answer in time")
    return line


def write_blink_run(folder: Path, items: list[tuple[str, str | None, str | None]]) -> Path:
    return write_run(folder, [record(*item) for item in items], format="blink")


def scored(folder: Path, scorer: str, tmp_path: Path, capsys) -> dict:
    """`score --output FILE`, checked equal to `score --json`'s stdout."""
    out = tmp_path / f"{scorer}.json"
    assert main(["score", str(folder), "--scorer", scorer, "--output", str(out)]) == 0
    capsys.readouterr()
    assert main(["score", str(folder), "--scorer", scorer, "--json"]) == 0
    figures = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == figures
    return figures


def hand_figures(items, scorer: str) -> dict:
    """groups, headline and counts as a person counts them from ITEMS."""
    labelled = [(item, gold, letter) for item, gold, letter in items if gold is not None]
    subtasks: dict[str, list[bool]] = {}
    for item, gold, letter in labelled:
        subtasks.setdefault(item[4:].rsplit("_", 1)[0], []).append(letter == gold)
    groups = [{"name": name, "accuracy": sum(hits) / len(hits), "samples": len(hits), "right": sum(hits),
               "ci95": pytest.approx(list(wilson(sum(hits), len(hits))), abs=1e-12)}
              for name, hits in sorted(subtasks.items())]
    items_right = sum(letter == gold for _, gold, letter in labelled)
    name, per_subtask = HEADLINES[scorer]
    metric = {name: pytest.approx(sum(g["accuracy"] for g in groups) / len(groups) if per_subtask
                                  else items_right / len(labelled))}
    if per_subtask:
        metric["accuracy"] = pytest.approx(items_right / len(labelled))
    counts = {"records": len(items), "scored": len(labelled), "failed": sum(letter is None for _, _, letter in
                                                                            labelled),
              "unlabelled": len(items) - len(labelled)}
    return {"groups": groups, "metric": metric, "counts": counts}


@pytest.mark.parametrize("scorer", sorted(HEADLINES))
def test_score_json_numbers_equal_a_hand_count(scorer, tmp_path, capsys):
    figures = scored(write_blink_run(tmp_path / "run", ITEMS), scorer, tmp_path, capsys)
    expected = hand_figures(ITEMS, scorer)
    assert {k: figures[k] for k in expected} == expected
    # the numbers by hand, so a shared mistake in hand_figures and trompe cannot pass unseen
    assert figures["counts"] == {"records": 8, "scored": 7, "failed": 2, "unlabelled": 1}
    assert [(g["name"], g["right"], g["samples"]) for g in figures["groups"]] == [
        ("Counting", 1, 2), ("IQ_Test", 0, 1), ("Jigsaw", 2, 3), ("Relative_Depth", 1, 1)]
    headline = HEADLINES[scorer][0]
    assert figures["metric"][headline] == pytest.approx((1 / 2 + 0 + 2 / 3 + 1) / 4 if HEADLINES[scorer][1]
                                                        else 4 / 7)
    assert "7 scored, 2 of them failed, 1 unlabelled" in figures["summary"]


@pytest.mark.parametrize("items", [[("val_Jigsaw_1", "A", "A")], [("val_Jigsaw_1", "A", None),
                                                                   ("val_Counting_1", "B", None)]],
                         ids=["one record", "every record failed"])
@pytest.mark.parametrize("scorer", sorted(HEADLINES))
def test_score_json_at_its_edges(items, scorer, tmp_path, capsys):
    figures = scored(write_blink_run(tmp_path / "run", items), scorer, tmp_path, capsys)
    expected = hand_figures(items, scorer)
    assert {k: figures[k] for k in expected} == expected
    assert figures["metric"][HEADLINES[scorer][0]] == (1.0 if len(items) == 1 else 0.0)
    if len(items) == 1:
        assert figures["groups"][0]["ci95"] == pytest.approx([0.2065493143772375, 1.0])  # Wilson, 1 of 1

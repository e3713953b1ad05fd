"""The DataCV 2026 Task I and II task YAMLs shipped for lmms-eval's --include_path, on the challenge's own files
(a labelled CSV and JSON written by the test, datacv_files.py): the prompts are the items' own, a reply is read as
`illusion-agent run` reads DataCV, and the number is the challenge's accuracy over every item, a failure wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval extra is not installed (pip install 'trompe[lmms-eval]')")

import datacv_files  # noqa: E402
import lmmskit  # noqa: E402
from trompe_agents.illusion.lmms import tasks  # noqa: E402
from trompe_agents.illusion.lmms.tasks import datacv  # noqa: E402

TASKS = Path(tasks.__path__[0])
KWARGS2 = {"pre_prompt": "", "post_prompt": "\nAnswer with the option's letter from the given choices inside "
                                            "<answer>...</answer>."}


def test_an_item_reads_as_the_challenge_gives_it_and_a_reply_scores_as_the_agent_reads_it():
    doc1 = {"index": 3, "image_path": "test/3.png", "prompt": "Are the lines straight?\nAnswer Instructions: ...",
            "answer": 1}
    assert datacv.task1_text(doc1, {"pre_prompt": "", "post_prompt": ""}) == doc1["prompt"]
    assert datacv.task1_results(doc1, ["<reasons>r</reasons><answer>1</answer>"]) == {"accuracy": 1.0}
    assert datacv.task1_results(doc1, ["<answer>0</answer>"]) == {"accuracy": 0.0}
    assert datacv.task1_results(doc1, [""]) == {"accuracy": 0.0}  # a failed request is wrong
    doc2 = {"image_name": "17.jpg", "Question": "Question:\nHow many fingers?", "option": "Option: \nA. 6\nB. 5\n"
            "C. 4\nD. Not Sure\n", "answer": "B"}
    assert datacv.task2_text(doc2, KWARGS2) == ("Question:\nHow many fingers?\nOption: \nA. 6\nB. 5\nC. 4\nD. Not "
                                                "Sure\nAnswer with the option's letter from the given choices "
                                                "inside <answer>...</answer>.")
    assert datacv.task2_results(doc2, ["<answer>B</answer>"]) == {"accuracy": 1.0}
    assert datacv.task2_results(doc2, ["(A)"]) == {"accuracy": 0.0}


def test_an_unlabelled_split_is_refused_before_any_request():
    with pytest.raises(ValueError, match=r"DataCV Task I: item 1 has no label .*illusion-agent submit"):
        datacv.task1_docs([{"index": 0, "answer": 1}, {"index": 1, "answer": None}])


def test_images_are_read_where_the_variable_says_and_an_unset_one_is_named(monkeypatch, tmp_path):
    datacv_files.write_task1(tmp_path)
    monkeypatch.delenv(datacv.TASK1_ROOT, raising=False)
    with pytest.raises(ValueError, match="TROMPE_DATACV_TASK1 is not set"):
        datacv.task1_visual({"image_path": "test/0.png"})
    monkeypatch.setenv(datacv.TASK1_ROOT, str(tmp_path))
    [image] = datacv.task1_visual({"image_path": "test/0.png"})
    assert image.size[0] > 0


@pytest.mark.slow
def test_both_tasks_run_offline_from_the_challenges_own_files_with_its_accuracy(tmp_path, monkeypatch):
    data = tmp_path / "datacv"
    task1, task2 = datacv_files.write_task1(data / "task1"), datacv_files.write_task2(data / "task2")
    shutil.copy(TASKS / "trompe_datacv_task1.yaml", task1)  # beside the data, as each YAML's header says
    shutil.copy(TASKS / "trompe_datacv_task2.yaml", task2)
    monkeypatch.setenv(datacv.TASK1_ROOT, str(task1))
    monkeypatch.setenv(datacv.TASK2_ROOT, str(task2 / "images"))
    done = lmmskit.run_lmms_eval(tmp_path, "trompe_datacv_task1,trompe_datacv_task2",
                                 "backend=function,model=datacv_files:answer,router=regex,tools=none", data,
                                 tmp_path / "out")
    assert done.returncode == 0 and "Error during evaluation" not in done.stdout + done.stderr, done.stderr[-3000:]
    table = done.stdout.replace(" ", "")
    assert "|trompe_datacv_task1|" in table and "|trompe_datacv_task2|" in table
    results, samples = lmmskit.results(tmp_path / "out")
    # Task I: right, wrong, right, failed (an empty reply, wrong); Task II: right, right, right, failed
    assert results["results"]["trompe_datacv_task1"]["accuracy,none"] == pytest.approx(2 / 4)
    assert results["results"]["trompe_datacv_task2"]["accuracy,none"] == pytest.approx(3 / 4)
    assert [line["accuracy"] for line in samples["trompe_datacv_task1"]] == [1.0, 0.0, 1.0, 0.0]
    assert [line["accuracy"] for line in samples["trompe_datacv_task2"]] == [1.0, 1.0, 1.0, 0.0]
    assert samples["trompe_datacv_task1"][0]["target"] == "1" and samples["trompe_datacv_task2"][0]["target"] == "B"

"""The task YAMLs shipped for lmms-eval's --include_path: the sample probe set runs offline as the docs say, with
a probe set's official numbers (accuracy; accuracy per category and their mean)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval extra is not installed (pip install 'trompe[lmms-eval]')")

import lmmskit  # noqa: E402
from trompe_agents.illusion.lmms import tasks  # noqa: E402
from trompe_agents.illusion.lmms.tasks import probes  # noqa: E402

TASKS = Path(tasks.__path__[0])
KWARGS = {"pre_prompt": "", "yesno_prompt": "\nAnswer with yes or no.",
          "choice_prompt": "\nAnswer with the option's letter from the given choices directly."}


def test_a_probe_reads_as_its_question_and_a_reply_scores_by_trompes_extractor():
    doc = {"question": "Which circle is larger?", "choices": ["left", "right"], "answer": "B", "category": "size",
           "images": []}
    assert probes.doc_to_text(doc, KWARGS) == ("Which circle is larger?\nA. left\nB. right\nAnswer with the "
                                               "option's letter from the given choices directly.")
    assert probes.process_results(doc, ["B"])["accuracy"] == 1.0
    assert probes.process_results(doc, [""])["accuracy"] == 0.0  # a failed request is wrong
    table = probes.mean_over_categories([{"category": "size", "is_correct": True},
                                         {"category": "size", "is_correct": False},
                                         {"category": "colour", "is_correct": True}])
    assert table == {"colour": 1.0, "size": 0.5, "mean over categories": 0.75}


@pytest.mark.slow
def test_the_shipped_sample_task_runs_offline_and_prints_lmms_evals_table(tmp_path):
    done = lmmskit.run_lmms_eval(tmp_path, "trompe_probes_sample",
                                 "backend=function,model=lmms_scripted:always_yes,router=regex,tools=none", TASKS,
                                 tmp_path / "out")
    assert done.returncode == 0 and "Error during evaluation" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert "|trompe_probes_sample|" in done.stdout.replace(" ", "")
    results, samples = lmmskit.results(tmp_path / "out")
    numbers = results["results"]["trompe_probes_sample"]
    gold = [json.loads(line)["answer"] for line in (TASKS / "sample" / "probes.jsonl").read_text().splitlines()]
    assert numbers["accuracy,none"] == pytest.approx(gold.count("yes") / len(gold)) == pytest.approx(0.5)
    # size: both yes; straightness: both no; colour, alignment: one yes, one no each
    by_category = numbers["accuracy_by_category,none"]
    assert (by_category["size"], by_category["straightness"], by_category["colour"]) == (1.0, 0.0, 0.5)
    assert by_category["mean over categories"] == pytest.approx((1 + 0 + 0.5 + 0.5) / 4)
    assert len(samples["trompe_probes_sample"]) == 8

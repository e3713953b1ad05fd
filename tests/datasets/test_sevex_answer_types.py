"""SEVEX reads every item the way `illusion-agent run` and the official scorers do: BlindTest and TeT items by
their answer type (datasets/answer_types.py), BLINK replies by the official pipeline's reading (blink_match)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from replicas import write_blindtest_hf, write_colorblindhard

from trompe_agents.datasets import load_dataset
from trompe_agents.datasets import blink_match
from trompe_agents.datasets.answer_types import of_sample
from trompe_agents.datasets.answers import extract
from trompe_agents.sevex.tasks import Task, get_task
from trompe_agents.testing import dataset_files as files

ANY_BLINDTEST = Task("any", "blindtest", "every BlindTest task", "as each prompt asks")


def requested_reply(sample) -> str:
    """The gold answer written the way the item's own prompt asks for it, inside a sentence."""
    gold = sample.answer
    if "rows={5}" in sample.question:
        rows, columns = gold.split(",")
        return f"I counted carefully: rows={{{rows}}} columns={{{columns}}}"
    if "\\box{" in sample.question:
        return f"The characters read \\box{{{gold}}}."
    if "curly brackets" in sample.question:
        return f"Looking at the image, my answer is {{{gold}}}."
    return f"{gold}."


def test_blindtest_and_tet_items_are_read_by_their_answer_type_and_score_right(tmp_path):
    samples = [*load_dataset(write_blindtest_hf(tmp_path / "valid-00000-of-00001.parquet")),
               *load_dataset(write_colorblindhard(tmp_path / "colorblindhard-00000-of-00001.parquet", 3))]
    assert len(samples) == 21
    for sample in samples:
        kind = of_sample(sample)
        assert kind is not None and ANY_BLINDTEST.reader(sample) == kind.extractor(), sample.category
        prediction, right = ANY_BLINDTEST.score(requested_reply(sample), sample)
        assert right, (sample.category, requested_reply(sample), prediction)


def test_a_string_answer_of_digits_is_the_string_not_a_count(tmp_path):
    sample = next(iter(load_dataset(write_colorblindhard(tmp_path / "colorblindhard-00000-of-00001.parquet", 1))))
    sample.answer = "57"  # a plate whose characters are digits: still the characters read, as written
    assert ANY_BLINDTEST.score("I read \\box{57}", sample) == ("57", True)
    assert ANY_BLINDTEST.score("I read \\box{5}", sample)[1] is False


# Replies as BLINK's saved outputs hold them (zeyofu/BLINK_Benchmark eval/saved_outputs): bracketed tokens, a
# leading <s>, unbracketed letters named as an answer, option texts, refusals.
BLINK_REPLIES = ["(A)", "B", "b", "<s> (B)", "<s> Point B is closer to the camera.", "The answer is A.",
                 "Option: a.", "I think (A) is right, but (B) is also possible.", "second", "I cannot tell.",
                 "", "Box A is closer. Final answer: (B)"]


@pytest.fixture(scope="module")
def blink_samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blink")
    return get_task("Relative_Depth").samples(list(load_dataset(files.write_blink_snapshot(folder / "b", 6),
                                                                images_root=folder / "c")))


@pytest.mark.parametrize("reply", BLINK_REPLIES)
def test_sevex_scores_blink_replies_exactly_as_the_official_scorer(blink_samples, reply):
    task = get_task("Relative_Depth")
    assert blink_samples
    for sample in blink_samples:
        official = blink_match.match(reply, sample.choices).prediction == f"({sample.answer})"
        assert task.score(reply, sample)[1] is official, (reply, sample.answer)


@given(st.lists(st.sampled_from(["(A)", "(B)", "A", "B", "b", "<s>", "Point", "is", "closer", "answer:", "the",
                                 "first", "second", "\n\n", "I", "cannot", "tell", "."]), max_size=12))
def test_blink_extraction_is_the_official_reading_on_any_mix_of_tokens(words):
    reply = " ".join(words)
    found = blink_match.match(reply, ["first", "second"]).prediction
    assert extract("blink", reply, choices=["first", "second"]) == (found.strip("()") if found else None)

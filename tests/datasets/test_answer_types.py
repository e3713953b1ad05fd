"""Every answer type through `illusion-agent run`: the final-answer schema follows the item, so a model that
answers each item's gold in the form its prompt asks for scores 100% with nothing failed (BlindTest on the HF
layout, TeT colorblindhard, V*), and DataCV's two schemas stay exactly as the challenge wants them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.datasets.answer_types import AnswerType, of_sample, parse
from trompe_agents.datasets.base import Sample
from trompe_agents.final_answer import INTEGER, LETTER, PAIR, SHORT, AnswerError, choice_schema, parse_answer, reformat
from trompe_agents.illusion.agent import answer_schema
from trompe_agents.illusion.cli import main as illusion_agent
from runlines import written
from trompe_agents.testing import dataset_files as files

from replicas import write_blindtest_hf, write_colorblindhard

SCRIPTED = ["--backend", "function", "--no-progress", "--model", "scripted_answers:gold_in_requested_format"]


pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path


def run(dataset: Path, out: Path, *extra: str) -> dict:
    assert illusion_agent(["run", "--dataset", str(dataset), "--out", str(out), *extra, *SCRIPTED]) == 0
    return written(out)


def test_blindtest_gold_in_each_tasks_format_scores_100_percent_with_nothing_failed(tmp_path, capsys):
    records = run(write_blindtest_hf(tmp_path / "valid-00000-of-00001.parquet"), tmp_path / "run",
                  "--images-root", str(tmp_path / "img"))
    assert len(records) == 18 and all(r["correct"] for r in records.values())
    kinds = {r["keys"]["task"]: r["answer_type"] for r in records.values()}
    assert kinds["Counting Grid - Blank Grids"] == "pair" and kinds["Circled Letter"] == "letter"
    assert kinds["Touching Circles"] == "yesno" and kinds["Subway Connections"] == "integer"
    assert {r["answer"] for r in records.values()} == {"2", "yes", "o", "5", "6", "4", "5,6", "1"}
    printed = capsys.readouterr().out
    assert "mean over tasks 100.0%" in printed and "18 scored, 0 of them failed" in printed


def test_tet_colorblindhard_characters_and_vstar_options_score_100_percent(tmp_path, capsys):
    records = run(write_colorblindhard(tmp_path / "colorblindhard-00000-of-00001.parquet", 3), tmp_path / "tet",
                  "--images-root", str(tmp_path / "img"))
    assert [r["answer"] for r in records.values()] == ["EJ"] * 3 and all(r["correct"] for r in records.values())
    assert {r["answer_type"] for r in records.values()} == {"string"}
    vstar = files.write_vstar(tmp_path / "vstar", 4)
    records = run(vstar, tmp_path / "vs", "--images-root", str(tmp_path / "vstar" / "V_star bench"))
    assert all(r["correct"] for r in records.values()) and {r["answer_type"] for r in records.values()} == {
        "choice:4", "choice:2"}


def test_the_schema_and_instruction_follow_the_item(tmp_path):
    trace = tmp_path / "run"
    run(write_blindtest_hf(tmp_path / "valid.parquet", 1), trace, "--images-root", str(tmp_path / "img"))
    grid = next(p for p in (trace / "traces").iterdir() if p.name.startswith("CountingRowsAndColumns"))
    text = (grid / "trace.jsonl").read_text()
    assert '"pattern": "^[0-9]+,[0-9]+$"' in text.replace("\\\"", "\"") or "[0-9]+,[0-9]+" in text
    assert "Answer format:" in text and "5,6 for 5 rows and 6 columns" in text


def test_datacv_schemas_are_exactly_the_challenges():
    assert answer_schema(1, None, AnswerType("yesno")) == choice_schema(["yes", "no"]) == answer_schema(1)
    assert answer_schema(2, ["a", "b", "c", "d"], AnswerType("choice", 4)) == choice_schema(list("ABCD"))


@pytest.mark.parametrize("kind, reply, answer", [
    ("integer", '{"reasons": "r", "answer": "{3}"}', "3"),
    ("integer", '{"reasons": "r", "answer": 3}', "3"),
    ("pair", '{"reasons": "r", "answer": "rows={5} columns={6}"}', "5,6"),
    ("pair", '{"reasons": "r", "answer": "(5, 6)"}', "5,6"),
    ("letter", '{"reasons": "r", "answer": "{u}"}', "u"),
    ("string", '{"reasons": "r", "answer": "\\\\box{EJ}"}', "EJ"),
    ("text", '{"reasons": "r", "answer": "a red glove"}', "a red glove"),
])
def test_replies_in_the_benchmarks_own_form_are_read_as_the_type(kind, reply, answer):
    assert parse_answer(reply, AnswerType(kind).schema())["answer"] == answer


@pytest.mark.parametrize("kind, reply", [("integer", "about 3 or 4"), ("pair", "5"), ("letter", "ab"),
                                         ("integer", "three")])
def test_an_answer_not_of_the_type_is_refused(kind, reply):
    with pytest.raises(AnswerError, match="answer"):
        parse_answer(json.dumps({"reasons": "r", "answer": reply}), AnswerType(kind).schema())


def test_types_come_from_options_loader_or_gold_and_bad_names_are_refused():
    assert of_sample(Sample("a", [], "q", "B", choices=["x", "y", "z"])) == AnswerType("choice", 3)
    assert of_sample(Sample("a", [], "q", "5,6")) == AnswerType("pair")
    assert of_sample(Sample("a", [], "q", None, answer_type="integer")) == AnswerType("integer")
    assert of_sample(Sample("a", [], "q", None)) is None
    assert parse("choice:5").describe() == "choice:5"
    with pytest.raises(ValueError, match="answer type must be one of"):
        parse("number")
    with pytest.raises(ValueError, match="1 to 8 options"):
        parse("choice:9")


@given(st.integers(-50, 10**6), st.sampled_from(["{%d}", "%d", " %d ", "**%d**"]))
def test_any_count_in_braces_or_bare_reads_as_that_integer(n, form):
    assert parse_answer(json.dumps({"reasons": "", "answer": form % n}), AnswerType("integer").schema())[
        "answer"] == str(n)


@given(st.integers(0, 999), st.integers(0, 999))
def test_any_grid_size_in_the_prompts_form_reads_as_the_pair(rows, columns):
    reply = json.dumps({"reasons": "", "answer": f"rows={{{rows}}} columns={{{columns}}}"})
    assert parse_answer(reply, AnswerType("pair").schema())["answer"] == f"{rows},{columns}"


@given(st.text(max_size=40), st.sampled_from([INTEGER, PAIR, LETTER, SHORT]))
def test_reformat_is_idempotent_and_only_ever_yields_the_pattern_or_the_input(text, pattern):
    once = reformat(text, pattern)
    assert reformat(once, pattern) == once
    assert once == text.strip() or once == text or re.fullmatch(pattern, once)


def test_dataset_info_lists_the_answer_types(tmp_path, capsys):
    from trompe_agents.cli import main as trompe

    path = write_blindtest_hf(tmp_path / "valid.parquet", 1)
    assert trompe(["dataset", "info", str(path), "--images-root", str(tmp_path / "img")]) == 0
    shown = capsys.readouterr().out
    assert "answer types: integer 5, pair 2, yesno 1, letter 1" in shown and "illusion agent task: 2" in shown


def test_a_gold_1_or_0_is_left_to_the_task_and_probe_families_take_their_blindtest_task_type():
    assert of_sample(Sample("a", [], "Is it straight?", "1")) is None  # DataCV Task I style yes/no
    assert of_sample(Sample("a", [], "How many crossings?", "1", category="LineIntersections")) == AnswerType(
        "integer")
    assert of_sample(Sample("a", [], "Rows and columns?", None, category="CountingRowsAndColumns")) == AnswerType(
        "pair")

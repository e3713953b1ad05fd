"""Model-based routing and the per-task tool set, through `illusion-agent ask` with scripted models."""

import importlib

import pytest

from trompe_agents.illusion.cli import main
from trompe_agents.illusion.router import TASK_TOOLS
from trompe_agents.trace import read_events

SIZE_QUESTION = "Are the two orange circles in the centre the same size?"  # the regex router says size


@pytest.fixture
def scripted(scripted_on_path):
    """The scripted models, as the function backend imports them; requests start empty."""
    module = importlib.import_module("scripted")
    module.CLASSIFY_REQUESTS.clear()
    yield module
    module.CLASSIFY_REQUESTS.clear()


def ask(probes, tmp_path, model: str, *extra: str, question: str = SIZE_QUESTION, task: str = "1") -> list[dict]:
    assert main(["--backend", "function", "--model", f"scripted:{model}", "ask", str(probes[0].images[0]),
                 question, "--task", task, "--trace", str(tmp_path / "t"), *extra]) == 0
    return read_events(tmp_path / "t")


def route_event(events: list[dict]) -> dict:
    return next(e for e in events if e["event"] == "route")


def first_user_text(events: list[dict], agent: str = "main") -> str:
    return next(e for e in events if e["event"] == "user" and e["agent"] == agent)["text"]


def test_default_router_is_the_models_first_turn_with_prompt_and_image(scripted, probes, tmp_path, capsys):
    events = ask(probes, tmp_path, "classifies_straightness")
    [(system, images, text)] = scripted.CLASSIFY_REQUESTS
    assert system.startswith("# Task I") and images == ["original"]  # the agent's own prompt, the image
    assert "- boundary detection" in text and SIZE_QUESTION in text and "keyword router" not in text
    routed = route_event(events)
    assert (routed["source"], routed["category"], routed["regex_category"]) == (
        "model", "line straightness", "size comparison")  # the model decides; the regex guess is kept
    assert "Category (your classification): 'line straightness'" in first_user_text(events)
    assert "category line straightness" in capsys.readouterr().out


def test_classify_call_is_one_short_text_only_request(scripted, probes, tmp_path):
    ask(probes, tmp_path, "classifies_straightness", "--classify", "call")
    [(system, images, text)] = scripted.CLASSIFY_REQUESTS
    assert system is None and images == [] and len(text) < 1200


def test_router_both_shows_the_regex_guess_to_the_model(scripted, probes, tmp_path):
    events = ask(probes, tmp_path, "classifies_straightness", "--router", "both")
    assert "Hint from a keyword router: 'size comparison'" in scripted.CLASSIFY_REQUESTS[0][2]
    assert route_event(events)["source"] == "model"


def test_router_regex_sends_no_classification_request(scripted, probes, tmp_path):
    events = ask(probes, tmp_path, "classifies_straightness", "--router", "regex")
    assert scripted.CLASSIFY_REQUESTS == []
    assert route_event(events)["category"] == "size comparison"
    assert "Pre-router suggestion: category 'size comparison'" in first_user_text(events)


def test_unusable_classification_falls_back_to_the_regex_router(scripted, probes, tmp_path):
    events = ask(probes, tmp_path, "classifies_badly")
    routed = route_event(events)
    assert routed["source"] == "fallback" and routed["category"] == "size comparison"
    assert "unusable classification" in routed["note"]
    assert "Pre-router suggestion: category 'size comparison'" in first_user_text(events)


@pytest.mark.parametrize("task", ["1", "2"])
def test_each_task_is_offered_the_papers_tools(scripted, probes, tmp_path, task):
    events = ask(probes, tmp_path, "classifies_straightness", task=task)
    offered = set(next(e for e in events if e["event"] == "start" and e["agent"] == "main")["tools"])
    assert set(TASK_TOOLS[int(task)]) <= offered
    plugin_tools = offered - {"list_images", "view_image"}
    assert plugin_tools == set(TASK_TOOLS[int(task)])  # nothing the paper's table does not list


def test_tools_option_widens_the_task_set(scripted, probes, tmp_path):
    events = ask(probes, tmp_path, "classifies_straightness", "--tools", "core")
    offered = set(next(e for e in events if e["event"] == "start" and e["agent"] == "main")["tools"])
    assert {"convert_grayscale", "draw_text"} <= offered


def test_bad_router_value_is_named(capsys):
    with pytest.raises(SystemExit):
        main(["ask", "x.png", "Q?", "--router", "oracle"])
    assert "argument --router: invalid choice: 'oracle'" in capsys.readouterr().err

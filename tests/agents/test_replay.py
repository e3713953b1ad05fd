"""Record a backend to a cassette, replay it with the original gone, and fail loudly on a changed request."""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from imagekit import gradient

from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.replay import Recorder, ReplayBackend
from trompe_agents.loop import run_agent
from trompe_agents.plugins import create_backend
from trompe_agents.toolclient import ToolClient

SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"]}


@pytest.fixture
def scripted_model(tmp_path, monkeypatch):
    """A user module that plays a model; deleted after recording to prove replay needs nothing of it."""
    module = tmp_path / "recorded_model.py"
    module.write_text(textwrap.dedent('''
        from trompe_agents.backends.function import tool_call

        def decide(messages, tools):
            if messages[-1].role == "tool":
                return "Looks dark. {\\"answer\\": \\"yes\\"}"
            return tool_call("crop", image="original", box=[0, 0, 16, 16], zoom=2)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    return module


async def ask(backend, png, question="Is the corner dark?"):
    async with ToolClient.in_process() as tools:
        return await run_agent(backend, tools, system="Inspect.", question=question, images={"original": png},
                               final_schema=SCHEMA)


@pytest.fixture
def png(tmp_path):
    path = tmp_path / "q.png"
    gradient(64, 48).save(path)
    return path


async def test_round_trip_then_mismatch(scripted_model, png, tmp_path):
    cassette = tmp_path / "run.cassette.jsonl"
    recorder = create_backend("function", BackendOptions(model="recorded_model:decide", record=str(cassette)))
    assert isinstance(recorder, Recorder) and recorder.name == "function"
    recorded = await ask(recorder, png)
    assert recorded.answer == {"answer": "yes"} and recorded.tool_calls == ["crop"]

    entries = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert len(entries) == 2
    second_request = entries[1]["request"]["messages"]
    assert second_request[-1]["role"] == "tool"
    image = second_request[-1]["parts"][1]
    assert image["image"] == "img_001" and re.fullmatch(r"[0-9a-f]{64}", image["sha256"])
    assert not re.search(r"[A-Za-z0-9+/=]{200,}", cassette.read_text())  # digests, never base64

    scripted_model.unlink()  # the original model is gone
    replayed = await ask(create_backend("replay", BackendOptions(model=str(cassette))), png)
    assert (replayed.answer, replayed.tool_calls, replayed.text) == (recorded.answer, recorded.tool_calls,
                                                                     recorded.text)

    changed = await ask(ReplayBackend(cassette), png, question="Is the corner light?")
    assert changed.stop == "error" and "ReplayMismatch" in changed.error
    diff = changed.error.splitlines()
    assert "closest recorded request differs" in diff[0]
    assert any(line.startswith("-") and "Is the corner dark?" in line for line in diff)
    assert any(line.startswith("+") and "Is the corner light?" in line for line in diff)


async def test_changed_image_is_a_mismatch(scripted_model, png, tmp_path):
    cassette = tmp_path / "c.jsonl"
    await ask(Recorder(create_backend("function", BackendOptions(model="recorded_model:decide")), cassette), png)
    other = tmp_path / "other.png"
    gradient(64, 48).transpose(0).save(other)
    changed = await ask(ReplayBackend(cassette), other)
    diff = changed.error.splitlines()
    assert [line.split('"')[1] for line in diff if line.startswith(("-", "+")) and "sha256" in line] == [
        "sha256", "sha256"]


def test_replay_needs_an_existing_cassette(tmp_path):
    with pytest.raises(BackendError, match="cassette .* not found; record one with --record"):
        create_backend("replay", BackendOptions(model=str(tmp_path / "none.jsonl")))
    with pytest.raises(BackendError, match="--backend replay --model FILE"):
        create_backend("replay", BackendOptions())


@pytest.mark.parametrize("damaged", ['{"key": "abc", "model": "m", "resp', '[1, 2]', '{"key": "abc"}'])
def test_damaged_cassette_line_is_named(tmp_path, damaged):
    cassette = tmp_path / "run.jsonl"
    cassette.write_text("\n" + damaged + "\n")
    with pytest.raises(BackendError, match=r"run.jsonl' line 2 is not a recorded request .*record the cassette again"):
        create_backend("replay", BackendOptions(model=str(cassette)))

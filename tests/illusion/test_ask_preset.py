"""`illusion-agent ask --preset paper`: a setting the vendor refuses mid-answer (a 400 to any temperature) is said
once and kept in the answer's trace, the record `ask` writes; through the loopback fake Gemini API."""

from __future__ import annotations

import pytest
from PIL import Image

from trompe_kernel.exits import OK
from trompe_agents.illusion.cli import main
from trompe_agents.testing import FakeVendor
from trompe_agents.trace import read_events, render_text
from trompe_agents.traceview import write_html

from .test_presets import script


pytestmark = pytest.mark.usefixtures("gemini_key")  # conftest.py: the fake Gemini API takes any key


def test_a_refusal_seen_while_answering_is_said_once_and_kept_in_the_trace(tmp_path, capsys):
    image, trace = tmp_path / "lines.png", tmp_path / "trace"
    Image.new("RGB", (64, 48), "white").save(image)
    with FakeVendor("gemini", script) as fake:  # the fake answers 400 to any temperature for a *notemp* model
        assert main(["--backend", "gemini", "--base-url", fake.base_url, "--max-retries", "1", "--model",
                     "gemini-3-notemp", "ask", "--preset", "paper", str(image), "Are the two lines equal?",
                     "--trace", str(trace)]) == OK
    said = [line.removeprefix("illusion-agent: preset paper: ") for line in capsys.readouterr().err.splitlines()
            if "preset paper" in line]
    assert len(said) == 2 and said[0].startswith("--model gemini-3-notemp given")
    assert said[1].startswith("gemini-3-notemp refused temperature 0 (the paper's); sent none after it")
    preset = read_events(trace)[-1]
    assert preset["event"] == "preset" and preset["name"] == "paper" and preset["notes"] == said
    assert "refused temperature 0" in render_text(trace, width=2000).splitlines()[-1]
    assert "refused temperature 0" in write_html(trace).read_text()  # the trace page a person opens

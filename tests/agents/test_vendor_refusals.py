"""Refusals and safety stops are their own failure kind (`refusal`) on every vendor: the vendor's words are kept in
the error, in results.jsonl, the summary and the report; the same model is not asked again, a --fallback-model is.
The fake vendors answer each refusal in its documented wire shape (fake_vendors.REFUSALS cites the pages)."""

from __future__ import annotations

from html import escape

import pytest
from imagekit import gradient
from test_vendor_roundtrip import backend_for
from trompe_agents.backends.base import BackendError
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.export import summary
from trompe_agents.illusion.report import index_page, sample_page
from runlines import results, written
from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.messages import Message, TextPart
from trompe_agents.testing import FakeVendor, Reply, final
from trompe_agents.toolclient import ToolClient

WORDS = "I can't help with comparing these images."
# (label of test_vendor_roundtrip.VENDORS, fake kind, the reply, what the error must quote)
REFUSING = [
    ("claude", "anthropic", Reply(text="Looking at", refusal=WORDS),
     f"stop_reason refusal (cyber): {WORDS}: partial reply: Looking at"),
    ("openai", "responses", Reply(refusal=WORDS), WORDS),
    ("openai-chat", "chat", Reply(refusal=WORDS), WORDS),
    # google-genai reads no finishMessage on the Gemini API (a Vertex field): the blocked categories are the words
    ("gemini-3", "gemini", Reply(refusal=WORDS), "finishReason SAFETY (HARM_CATEGORY_DANGEROUS_CONTENT)"),
    ("gemini-3", "gemini", Reply(blocked="SAFETY"), "prompt blocked: SAFETY (HARM_CATEGORY_DANGEROUS_CONTENT)"),
]


def question() -> list[Message]:
    return [Message("system", [TextPart("Be brief.")]), Message("user", [TextPart("Same length?")])]


@pytest.mark.parametrize("label, kind, reply, words", REFUSING)
async def test_a_refusal_is_its_own_kind_with_the_vendors_words_and_is_not_asked_again(label, kind, reply, words):
    with FakeVendor(kind, [reply]) as fake:
        async with backend_for(label, fake, max_retries=3) as backend:
            with pytest.raises(BackendError) as caught:
                await backend.complete(question(), [])
    assert caught.value.kind == "refusal" and len(fake.requests) == 1  # asked again, it declines again
    assert words in str(caught.value) and "--fallback-model" in str(caught.value)


@pytest.mark.parametrize("label, kind, reply, words", REFUSING[:4])
async def test_a_refusal_moves_to_the_fallback_model(label, kind, reply, words):
    def script(body, n):
        return reply if n == 0 else final("yes")

    with FakeVendor(kind, script) as fake:
        async with backend_for(label, fake, fallback_models=["second-model"]) as backend:
            turn = await backend.complete(question(), [])
    assert turn.message.text == "yes" and len(fake.requests) == 2
    [switch] = turn.sent["model_switch"]
    assert switch["to"] == "second-model" and switch["reason"] == f"refusal: {words}"


def test_claude_context_window_stop_reads_as_truncation():
    from trompe_agents.backends.claude import ClaudeBackend

    assert "model_context_window_exceeded" in ClaudeBackend.truncated_stops


async def test_a_context_window_stop_fails_as_truncated_not_as_an_answer():
    with FakeVendor("anthropic", [Reply(text="The rows", stop_reason="model_context_window_exceeded")]) as fake:
        async with backend_for("claude", fake) as backend:
            with pytest.raises(BackendError) as caught:
                await backend.complete(question(), [])
    assert caught.value.kind == "truncated" and len(fake.requests) == 2


@pytest.mark.parametrize("label, kind, reply, words", REFUSING)
async def test_a_refused_sample_is_recorded_counted_and_shown_with_the_vendors_words(label, kind, reply, words,
                                                                                     tmp_path):
    gradient(48, 32).save(tmp_path / "q.png")
    out = tmp_path / "run"
    with FakeVendor(kind, [reply]) as fake:
        backend = backend_for(label, fake)
        async with ToolClient.in_process() as tools:
            await run_samples([Sample("s1", [tmp_path / "q.png"], "Same length?", answer="yes")], backend, tools,
                              AgentConfig(task=1, router="regex"), RunOptions(out=out, progress=False))
    record = written(out)["s1"]
    assert record["error_kind"] == "refusal" and words in record["error"]
    [result] = results([record])
    assert summary(read_meta(out), [result])["totals"]["failures"] == {"refusal": 1}
    assert "failures by kind</th><td>refusal 1<" in index_page(read_meta(out), [result])
    assert escape(words) in sample_page(result, out)  # the sample's page quotes the vendor

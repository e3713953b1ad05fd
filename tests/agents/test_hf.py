"""The hf backend with a tiny random Gemma3 built from a config, loaded from its folder like a user's model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from imagekit import gradient, png_bytes
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.hf import HFSettings, parse_tool_calls
from trompe_agents.loop import run_agent
from trompe_agents.messages import ImagePart, Message, TextPart, ToolSchema
from trompe_agents.plugins import create_backend
from trompe_agents.toolclient import ToolClient

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"]}
CROP_CALL = '<tool_call>{"name": "crop", "arguments": {"image": "original", "box": [0, 0, 16, 16]}}</tool_call>'


def build_tiny_gemma3(folder: Path) -> Path:
    """A 127k-parameter random Gemma3 with a byte-level BPE tokenizer, saved the way hub models are."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessorPil,
                              Gemma3Processor, PreTrainedTokenizerFast)

    special = ["<pad>", "<bos>", "<end_of_turn>", "<start_of_turn>", "<start_of_image>", "<end_of_image>",
               "<image_soft_token>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator([CROP_CALL, '{"answer": "yes"} user model system'],
                            trainers.BpeTrainer(vocab_size=400, special_tokens=special,
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<bos>", eos_token="<end_of_turn>",
                                  pad_token="<pad>", boi_token="<start_of_image>", eoi_token="<end_of_image>",
                                  image_token="<image_soft_token>")
    processor = Gemma3Processor(Gemma3ImageProcessorPil(size={"height": 32, "width": 32}, do_pan_and_scan=False),
                                tok, image_seq_length=4)
    config = Gemma3Config(
        text_config=dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16,
                         sliding_window=64),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=32, patch_size=8, vision_use_head=False),
        mm_tokens_per_image=4, boi_token_index=tok.boi_token_id, eoi_token_index=tok.eoi_token_id,
        image_token_index=tok.image_token_id)
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))


class Script(transformers.LogitsProcessor):
    """Forces each generation, through the real forward pass, to emit the next scripted text then stop."""

    def __init__(self, tokenizer, texts: list[str]):
        self.targets = [tokenizer.encode(t, add_special_tokens=False) + [tokenizer.eos_token_id] for t in texts]
        self.turn, self.step, self.last = -1, 0, -1

    def __call__(self, input_ids, scores):
        length = input_ids.shape[1]
        if length != self.last + 1:  # a new generate() call
            self.turn, self.step = self.turn + 1, 0
        self.last = length
        target = self.targets[self.turn]
        forced = torch.full_like(scores, float("-inf"))
        forced[:, target[min(self.step, len(target) - 1)]] = 0
        self.step += 1
        return forced


def hf_backend(folder: Path, script: list[str] | None = None, **settings):
    backend = create_backend("hf", BackendOptions(model=str(folder), settings=HFSettings(**settings)))
    if script is not None:
        backend.generate_kwargs["logits_processor"] = transformers.LogitsProcessorList(
            [Script(backend.tokenizer, script)])
    return backend


async def test_scripted_tool_call_runs_a_real_tool_and_the_answer_parses(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # loading from a folder never touches the network
    backend = hf_backend(tiny_model, [f"Let me look. {CROP_CALL}", '{"answer": "yes"}'])
    assert (backend.name, backend.device, backend.native_tools) == ("hf", "cpu", False)
    seen_prompts = []
    encode = backend.encode
    backend.encode = lambda messages, tools: seen_prompts.append(encode(messages, tools)) or seen_prompts[-1]
    async with ToolClient.in_process() as tools:
        result = await run_agent(backend, tools, system="Inspect the image.", question="Is it dark?",
                                 images={"original": png_bytes(gradient(64, 48))}, final_schema=SCHEMA,
                                 allow=["crop"])  # a 400-token vocabulary spells every schema byte by byte
    assert (result.stop, result.answer, result.tool_calls) == ("answer", {"answer": "yes"}, ["crop"])
    first, second = (backend.tokenizer.decode(p["input_ids"][0]) for p in seen_prompts)
    assert '"name": "crop"' in first and "<tools>" in first  # the tools were shown in our template
    assert first.count("<start_of_image>") == 1 and second.count("<start_of_image>") == 2  # img_001 came back
    assert '<tool_response name="crop">' in second and "img_001 16x16" in second
    assert second.endswith("<start_of_turn>model\n")
    forced = len(backend.tokenizer.encode(f"Let me look. {CROP_CALL}", add_special_tokens=False)) + 1
    assert result.usage.output_tokens == forced + len(backend.tokenizer.encode('{"answer": "yes"}')) + 1
    assert result.usage.input_tokens == sum(p["input_ids"].shape[1] for p in seen_prompts)
    assert result.usage.image_tokens == 4 + 8  # 4 soft tokens per image: one image, then two


async def test_unscripted_generation_is_deterministic_and_has_no_calls(tiny_model):
    backend = hf_backend(tiny_model, max_new_tokens=8)
    messages = [Message("user", [TextPart("Hello"), ImagePart("original", png_bytes(gradient(40, 40)))])]
    tools = [ToolSchema("crop", "Cut", {"type": "object", "properties": {}})]
    first, again = await backend.complete(messages, tools), await backend.complete(messages, tools)
    assert first.message.text == again.message.text and first.usage == again.usage
    assert first.usage.output_tokens <= 8 and first.message.tool_calls == []


def test_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(BackendError, match="hf: cannot load model"):
        create_backend("hf", BackendOptions(model=str(tmp_path)))
    with pytest.raises(BackendError, match="needs --model"):
        create_backend("hf", BackendOptions())


names = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)
arguments = st.dictionaries(names, st.one_of(st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=4)),
                            max_size=4)


@given(st.lists(st.tuples(names, arguments), min_size=1, max_size=3), st.sampled_from(["", "Thinking. ", "ok\n"]))
def test_parse_tool_calls_reads_back_what_was_written(calls, prose):
    text = prose + "\n".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls)
    rest, parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed] == calls
    assert rest == prose.strip() and len({c.id for c in parsed}) == len(calls)


def test_parse_tool_calls_tolerates_what_small_models_write():
    rest, calls = parse_tool_calls('<tool_call>{"name": "crop", "parameters": "{\\"zoom\\": 2}"}</tool_call>')
    assert (calls[0].name, calls[0].arguments) == ("crop", {"zoom": 2})
    _, cut = parse_tool_calls('<tool_call>{"name": "crop", "arguments": {"box": [1, 2}')  # unterminated
    assert (cut[0].name, cut[0].arguments) == ("crop", None)
    assert cut[0].raw_arguments == '{"name": "crop", "arguments": {"box": [1, 2}'
    _, nameless = parse_tool_calls("<tool_call>not json</tool_call>")
    assert (nameless[0].name, nameless[0].arguments) == ("", None)

"""Gemma 4 through the hf backend, on a tiny model built from its real config, with its real chat template and its
real response template: a tool call renders in Gemma 4's syntax and the model's reply in that syntax parses back
into the call, through transformers' `parse_response`.

Sources (no network at test time; each is stored here or restated below):
- The chat template, `gemma4_chat_template.jinja` beside this file, byte for byte Google's `chat_template.jinja` of
  google/gemma-4-31B-it (Apache-2.0, ai.google.dev/gemma/docs/gemma_4_license) as llama.cpp ships it:
  ggml-org/llama.cpp `models/templates/google-gemma-4-31B-it.jinja` at commit 3fc65063d9c3 ("common : better
  align to the updated official gemma4 template", #21704; llama.cpp is MIT).
- The response template (`RESPONSE_TEMPLATE`), the tokenizer's special tokens (`EXTRA_TOKENS`), the stop tokens and
  the 31B variant's config: huggingface/transformers `src/transformers/models/gemma4/convert_gemma4_weights.py`
  (Apache-2.0; `_RESPONSE_TEMPLATE`, written by `--include_response_template` into the published tokenizer
  configs, `_VARIANTS["gemma-4-31b"]`, `_LARGE_MODEL_VISION_CONFIG`, the GemmaTokenizer and GenerationConfig of
  `main()`). Dimensions are shrunk (64-wide, 6 layers, a byte-fallback vocabulary of 280 tokens); every other
  setting is the real one.
- Not built: the Gemma4Processor. Its video processor needs torchvision, which has no CPU build beside this CPU
  torch, so transformers cannot construct one here (nor for a real Gemma 4 checkpoint): the backend then loads the
  tokenizer alone, text and tools work, and a conversation with images fails in one line instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from imagekit import gradient, png_bytes
from test_hf import Script, tiny_model  # noqa: F401  (tiny_model is a fixture)

from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.hf import template_calls, template_habits, to_chat
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall, ToolSchema
from trompe_agents.plugins import create_backend

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEMPLATE = Path(__file__).with_name("gemma4_chat_template.jinja")
EXTRA_TOKENS = {"image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
                "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>", "sot_token": "<|turn>",
                "eot_token": "<turn|>", "soc_token": "<|channel>", "eoc_token": "<channel|>",
                "think_token": "<|think|>", "escape_token": '<|"|>', "str_token": "<|tool_response>",
                "etr_token": "<tool_response|>", "stc_token": "<|tool_call>", "etc_token": "<tool_call|>",
                "std_token": "<|tool>", "etd_token": "<tool|>"}
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "fields": {
        "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
        "tool_calls": {"open_pattern": r"<\|tool_call>call:(?P<name>\w+)", "close": "<tool_call|>", "repeats": True,
                       "content": "json",
                       "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
                       "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
    },
}
CROP = ToolSchema("crop", "Cut out a box of an image.", {
    "type": "object", "properties": {"image": {"type": "string", "description": "image id"},
                                     "box": {"type": "array", "items": {"type": "integer"}}},
    "required": ["image", "box"]})
# what Gemma 4 writes for a call: a thought, a word, then bare keys and strings between <|"|> quote tokens
CALL = ('<|channel>thought\nThe corner decides.<channel|>Let me look.'
        '<|tool_call>call:crop{box:[0,0,16,16],image:<|"|>original<|"|>}<tool_call|>')


def build_tiny_gemma4(folder: Path) -> Path:
    """A random Gemma4ForConditionalGeneration of the 31B variant's shape, and its GemmaTokenizer, saved as a hub
    checkpoint is (config, weights, generation config, tokenizer with chat and response templates)."""
    from transformers import (Gemma4Config, Gemma4ForConditionalGeneration, Gemma4TextConfig, Gemma4VisionConfig,
                              GemmaTokenizer)

    pieces = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", *EXTRA_TOKENS.values(),
              *(f"<0x{b:02X}>" for b in range(256)), "▁"]
    tokenizer = GemmaTokenizer(vocab={p: i for i, p in enumerate(pieces)}, merges=[], add_bos_token=False,
                               padding_side="left", extra_special_tokens=EXTRA_TOKENS,
                               chat_template=TEMPLATE.read_text(encoding="utf-8"),
                               response_template=RESPONSE_TEMPLATE)
    ids = tokenizer.convert_tokens_to_ids
    rope = {"full_attention": {"rope_theta": 1_000_000.0, "rope_type": "proportional", "partial_rotary_factor": 0.25},
            "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}
    text = Gemma4TextConfig(
        vocab_size=len(tokenizer), vocab_size_per_layer_input=len(tokenizer), hidden_size=64, intermediate_size=128,
        hidden_size_per_layer_input=0, num_hidden_layers=6, layer_types=["sliding_attention"] * 5 + ["full_attention"],
        num_attention_heads=4, num_key_value_heads=2, num_global_key_value_heads=1, head_dim=16, global_head_dim=32,
        attention_k_eq_v=True, use_bidirectional_attention="vision", num_kv_shared_layers=0, sliding_window=1024,
        final_logit_softcapping=30.0, rope_parameters=rope, max_position_embeddings=262_144,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    vision = Gemma4VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                num_key_value_heads=2, head_dim=16, global_head_dim=16, default_output_length=280,
                                pooling_kernel_size=3, use_clipped_linears=False, standardize=True)
    config = Gemma4Config(
        text_config=text, vision_config=vision, vision_soft_tokens_per_image=280,
        image_token_id=tokenizer.image_token_id, boi_token_id=ids(tokenizer.boi_token),
        eoi_token_id=ids(tokenizer.eoi_token), audio_token_id=tokenizer.audio_token_id,
        boa_token_id=ids(tokenizer.boa_token), eoa_token_index=ids(tokenizer.eoa_token),
        eos_token_id=[tokenizer.eos_token_id, ids("<turn|>")])
    torch.manual_seed(0)
    model = Gemma4ForConditionalGeneration(config)
    model.generation_config.eos_token_id = ids([tokenizer.eos_token, tokenizer.eot_token, tokenizer.str_token])
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def gemma4(tmp_path_factory) -> Path:
    return build_tiny_gemma4(tmp_path_factory.mktemp("tiny-gemma4"))


def scripted(folder: Path, replies: list[str]):
    backend = create_backend("hf", BackendOptions(model=str(folder)))
    backend.generate_kwargs["logits_processor"] = transformers.LogitsProcessorList([Script(backend.tokenizer,
                                                                                           replies)])
    return backend


def prompts_of(backend) -> list[str]:
    """Every prompt the backend sends, as text with its special tokens."""
    seen: list[str] = []
    encode = backend.encode

    def spy(messages, tools):
        inputs = encode(messages, tools)
        seen.append(backend.tokenizer.decode(inputs["input_ids"][0]))
        return inputs
    backend.encode = spy
    return seen


async def test_a_gemma4_tool_call_renders_and_parses_through_its_own_templates(gemma4, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = scripted(gemma4, [CALL, "It is dark."])
    assert (backend.native_tools, backend.tool_images, backend.said_as_reasoning) == (True, False, True)
    assert backend.tokenizer.response_template == RESPONSE_TEMPLATE  # read back from the saved tokenizer config
    seen = prompts_of(backend)
    messages = [Message("system", [TextPart("Inspect the image.")]), Message("user", [TextPart("Is it dark?")])]
    first = await backend.complete(messages, [CROP])
    [call] = first.message.tool_calls
    assert (call.name, call.arguments) == ("crop", {"box": [0, 0, 16, 16], "image": "original"})
    assert first.message.text == "Let me look." and first.stop_reason == "tool_use"  # the thought is not text
    assert seen[0].startswith("<bos><|turn>system\nInspect the image.<|tool>declaration:crop{description:<|\"|>Cut")
    assert "image:{description:<|\"|>image id<|\"|>,type:<|\"|>STRING<|\"|>}" in seen[0]
    assert seen[0].endswith("<turn|>\n<|turn>user\nIs it dark?<turn|>\n<|turn>model\n<|channel>thought\n<channel|>")

    messages += [first.message, Message("tool", [TextPart("img_001 16x16")], tool_call_id=call.id, tool_name="crop")]
    second = await backend.complete(messages, [CROP])
    # the call as Gemma 4 writes it (its words as its reasoning, before it), its result in Gemma 4's response
    # block, the model going on in the same turn
    assert seen[1].endswith('<|turn>model\n<|channel>thought\nLet me look.\n<channel|>'
                            '<|tool_call>call:crop{box:[0,0,16,16],image:<|"|>original<|"|>}'
                            '<tool_call|><|tool_response>response:crop{value:<|"|>img_001 16x16<|"|>}'
                            "<tool_response|>")
    assert (second.message.text, second.message.tool_calls, second.stop_reason) == ("It is dark.", [], "end_turn")
    assert [c.id for c in first.message.tool_calls] == ["call_1"]


async def test_the_same_reply_without_its_response_template_finds_no_call(gemma4, monkeypatch):
    """The issue's report: the `<tool_call>` parser reads 0 calls in Gemma 4's syntax."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = scripted(gemma4, [CALL])
    backend.tokenizer.response_template = None
    turn = await backend.complete([Message("user", [TextPart("Is it dark?")])], [CROP])
    assert turn.message.tool_calls == [] and "call:crop" in turn.message.text


def test_gemma4_templates_keep_only_the_text_of_a_tool_result_so_its_images_follow_as_a_user_turn(gemma4):
    """The real template writes `<|image|>` for a user turn's image but drops a tool result's: the backend moves
    a tool's images into a user turn after the results, each after its id."""
    from PIL import Image
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gemma4)
    assert template_habits(tokenizer) == (False, True)
    crop = ImagePart("img_001", png_bytes(gradient(16, 16)))
    call = Message("assistant", tool_calls=[ToolCall("call_1", "crop", {"image": "original"}, "{}")])
    messages = [Message("user", [TextPart("Is it dark?")]), call,
                Message("tool", [TextPart("img_001 16x16"), crop], tool_call_id="call_1", tool_name="crop")]
    chat = to_chat(messages, tool_images=False)
    assert chat[-1]["role"] == "user" and chat[-1]["content"][0] == {"type": "text", "text": "img_001:"}
    assert isinstance(chat[-1]["content"][1]["image"], Image.Image)
    kept = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    dropped = tokenizer.apply_chat_template(to_chat(messages), tokenize=False, add_generation_prompt=True)
    assert kept.count("<|image|>") == 1 and dropped.count("<|image|>") == 0
    assert "<tool_response|><|turn>user\nimg_001:<|image|><turn|>\n<|turn>model\n" in kept


async def test_without_its_processor_an_image_fails_in_one_line(gemma4, monkeypatch):
    """No Gemma4Processor can be built here (torchvision): images are refused, never dropped in silence."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = create_backend("hf", BackendOptions(model=str(gemma4)))
    assert "has no image processor here, so its images cannot be read" in backend.no_images
    image = ImagePart("original", png_bytes(gradient(16, 16)))
    with pytest.raises(BackendError, match="images cannot be read"):
        await backend.complete([Message("user", [image, TextPart("Is it dark?")])], [CROP])


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is not None, reason="torchvision builds the processor")
async def test_a_checkpoint_whose_processor_needs_torchvision_still_loads_for_text_and_tools(gemma4, tmp_path,
                                                                                           monkeypatch):
    """A hub checkpoint names its Gemma4Processor, whose video processor transformers cannot build without
    torchvision: the backend says so for images and keeps the tokenizer, instead of failing to load."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = shutil.copytree(gemma4, tmp_path / "with-processor")
    (folder / "processor_config.json").write_text(json.dumps({
        "processor_class": "Gemma4Processor", "image_seq_length": 280,
        "image_processor": {"image_processor_type": "Gemma4ImageProcessor", "max_soft_tokens": 280,
                            "pooling_kernel_size": 3, "do_normalize": False},
        "video_processor": {"video_processor_type": "Gemma4VideoProcessor"},
        "feature_extractor": {"feature_extractor_type": "Gemma4AudioFeatureExtractor"}}))
    backend = scripted(folder, [CALL])
    assert "torchvision" in backend.no_images.lower()
    turn = await backend.complete([Message("user", [TextPart("Is it dark?")])], [CROP])
    assert [(c.name, c.arguments) for c in turn.message.tool_calls] == [("crop", {"box": [0, 0, 16, 16],
                                                                                 "image": "original"})]


@pytest.fixture(scope="module")
def gemma4_tokenizer(gemma4):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gemma4)


keys = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
texts = st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=12)  # no control characters
values = st.recursive(st.one_of(st.integers(-10**6, 10**6), st.booleans(), texts),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                      max_leaves=6)


@settings(max_examples=40, deadline=None)
@given(name=keys, arguments=st.dictionaries(keys, values, max_size=4))
def test_any_call_the_template_writes_reads_back_through_the_response_template(gemma4_tokenizer, name, arguments):
    """Gemma 4's chat template writes a call (bare keys, <|"|> strings, nested lists and objects); its response
    template reads that text back into the same name and arguments."""
    tokenizer = gemma4_tokenizer
    call = {"role": "assistant", "tool_calls": [{"type": "function",
                                                 "function": {"name": name, "arguments": arguments}}]}
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "q"}, call], tokenize=False)
    written = rendered[rendered.index("<|tool_call>"):rendered.index("<tool_call|>") + len("<tool_call|>")]
    ids = tokenizer.encode(written, add_special_tokens=False)
    prose, [parsed] = template_calls(tokenizer, ids, "<|turn>user\nq<turn|>\n<|turn>model\n", [])
    assert (prose, parsed.name, parsed.arguments) == ("", name, arguments)


def test_the_template_probe_renders_through_a_real_processor_without_images(tiny_model):  # noqa: F811
    """The probe only renders text: a real processor (Gemma 3's, given Gemma 4's template) loads no image."""
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_model)
    processor.chat_template = TEMPLATE.read_text(encoding="utf-8")
    assert template_habits(processor) == (False, True)
    processor.chat_template = ("{% for m in messages %}{% for c in m['content'] %}"
                               "{{ '<IMG>' if c['type'] == 'image' else c['text'] }}{% endfor %}{% endfor %}")
    assert template_habits(processor) == (True, False)

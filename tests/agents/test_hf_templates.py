"""trompe's tool template renders each local family's own prompt format: compared, without tools, with the
family's own chat template on a tiny tokenizer that has the family's special tokens."""

from __future__ import annotations

import pytest
from imagekit import gradient, png_bytes
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall, ToolSchema

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from trompe_agents.backends.hf import template_variables, to_chat, tool_template  # noqa: E402

# Qwen/Qwen2.5-VL-7B-Instruct, chat_template.json (huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct); the same text is
# quoted in many public repositories (code search: "{% set image_count = namespace(value=0) %}").
QWEN25_VL = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in "
    "content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] "
    "== 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content "
    "%}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "<|im_start|>assistant\n{% endif %}")

# google/gemma-3-4b-it, tokenizer_config.json "chat_template" (huggingface.co/google/gemma-3-4b-it).
GEMMA3 = (
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}\n    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}\n    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n        {%- endfor -%}\n    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\n' }}\n"
    "{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\n'}}\n{%- endif -%}\n")


def smolvlm_template() -> str:
    """SmolVLM's own template, as transformers ships it (models/smolvlm/processing_smolvlm.py)."""
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    return DEFAULT_CHAT_TEMPLATE


FAMILIES = {  # family -> (special tokens of its vocabulary, bos, its own template, processor attributes)
    "qwen2.5-vl": (["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>"], None,
                   lambda: QWEN25_VL, {"image_token": "<|image_pad|>", "class": "Qwen2_5_VLProcessor"}),
    "gemma3": (["<bos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<image_soft_token>"], "<bos>",
               lambda: GEMMA3, {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>"}),
    "smolvlm": (["<|im_start|>", "<end_of_utterance>", "<image>"], None, smolvlm_template, {"image_token": "<image>"}),
}


class Processor:
    """The processor attributes the template reads (the real Qwen/SmolVLM processors need torchvision)."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


def tiny_tokenizer(specials: list[str], bos: str | None):
    """A byte-level BPE of a few hundred tokens carrying the family's special tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(["user assistant system model tool_call"], trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token=bos)


def conversation() -> list[Message]:
    image = ImagePart("original", png_bytes(gradient(8, 8)))
    return [Message("system", [TextPart("You inspect images.")]),
            Message("user", [image, TextPart("Are the lines equal?")]),
            Message("assistant", [TextPart("They look equal.")]),
            Message("user", [TextPart("Answer yes or no.")])]


def render(family: str, messages: list[Message], template: str | None = None, tools=None) -> str:
    specials, bos, own, attributes = FAMILIES[family]
    tokenizer = tiny_tokenizer(specials, bos)
    attributes = dict(attributes)
    processor = type(attributes.pop("class", "Processor"), (Processor,), {})(**attributes)  # named as the real one
    extra = {} if template else template_variables(tokenizer, processor)
    return tokenizer.apply_chat_template(to_chat(messages), chat_template=template or tool_template(),
                                         tools=tools, tokenize=False, add_generation_prompt=True, **extra)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_without_tools_trompes_template_renders_exactly_the_familys_own(family):
    own = FAMILIES[family][2]()
    assert render(family, conversation()) == render(family, conversation(), template=own)


def test_qwen25_vl_images_sit_between_vision_start_and_end():
    prompt = render("qwen2.5-vl", conversation())
    assert "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Are the lines equal?<|im_end|>" in prompt


def test_smolvlm_uses_user_end_of_utterance_assistant_turns():
    prompt = render("smolvlm", conversation())
    assert prompt.startswith("<|im_start|>System: You inspect images.<end_of_utterance>\nUser:<image>Are")
    assert prompt.endswith("User: Answer yes or no.<end_of_utterance>\nAssistant:")


def test_gemma3_folds_the_system_text_and_the_tools_into_the_first_user_turn():
    crop = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {}})
    messages = conversation()[:2] + [
        Message("assistant", [], [ToolCall("call_1", "crop", {"box": [0, 0, 4, 4]})]),
        Message("tool", [TextPart("img_001 4x4"), ImagePart("img_001", png_bytes(gradient(4, 4)))],
                tool_call_id="call_1", tool_name="crop")]
    specs = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in [crop]]
    prompt = render("gemma3", messages, tools=specs)
    assert prompt.startswith("<bos><start_of_turn>user\nYou inspect images.\n\n# Tools\n")
    assert "system" not in prompt.split("<start_of_turn>")[1].split("\n")[0]
    assert '<tool_call>{"name": "crop", "arguments": {"box": [0, 0, 4, 4]}}</tool_call><end_of_turn>' in prompt
    assert ('<start_of_turn>user\n<tool_response name="crop">\nimg_001 4x4<start_of_image>\n</tool_response>'
            '<end_of_turn>\n<start_of_turn>model\n') in prompt

"""Image markers come from the processor's family, not from the vocabulary: InternVL3 has Qwen2.5's vocabulary
(`<|vision_start|>` included) but its processor frames each image as `<img>...</img>` itself.

The processors are stand-ins named as the real classes with the attributes the template reads (the real Qwen and
InternVL processors need a video processor, which needs a working torchvision, absent beside CPU torch)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
from test_hf_templates import FAMILIES, Processor, tiny_tokenizer  # noqa: E402
from trompe_agents.backends.hf import template_variables  # noqa: E402

QWEN_VOCABULARY = FAMILIES["qwen2.5-vl"][0]


@pytest.mark.parametrize("processor, image_token, placeholder", [
    ("Qwen2_5_VLProcessor", "<|image_pad|>", "<|vision_start|><|image_pad|><|vision_end|>"),
    ("Qwen3VLProcessor", "<|image_pad|>", "<|vision_start|><|image_pad|><|vision_end|>"),
    ("InternVLProcessor", "<IMG_CONTEXT>", "<IMG_CONTEXT>"),  # the processor expands it to <img>...</img>
])
def test_the_image_marker_follows_the_processor_not_the_vocabulary(processor, image_token, placeholder):
    tokenizer = tiny_tokenizer(QWEN_VOCABULARY, None)
    found = template_variables(tokenizer, type(processor, (Processor,), {})(image_token=image_token))
    assert (found["style"], found["image_placeholder"]) == ("chatml", placeholder)

"""One scripted model played two ways, by Inspect's `mockllm/model` and by trompe's function backend
(`--backend function --model inspect_scripts:trompe_script`), so a sample answered in Inspect and by
`illusion-agent run` gets the same replies.

The script: a classification request is answered 'general'; the first turn with tools calls `crop` on the
original; then it answers, picking yes/no or an option from the image's bytes (a text-only question: from the
question), so answers differ between samples and some are wrong.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

CROP = {"image": "original", "box": [0, 0, 8, 8]}
USAGE = {"input_tokens": 10, "output_tokens": 5}  # given, so mockllm does not count tokens (tiktoken downloads)


def choose(allowed: list[str], key: bytes) -> str:
    """A stable pick that differs between samples: the answer the script gives."""
    return allowed[sum(key) % len(allowed)]


def allowed_answers(system: str) -> list[str]:
    """The answer enum of the schema in the system prompt (yes/no, or the item's option letters)."""
    found = re.search(r'"answer": \{"type": "string", "enum": (\[[^\]]*\])', system)
    return json.loads(found.group(1))


def decide(kind: str, system: str, key: bytes) -> dict[str, Any] | str:
    """'classify' -> a category; 'first' with tools -> the crop call ('crop'); else the final answer."""
    if kind == "classify":
        return {"category": "general"}
    if kind == "first":
        return "crop"
    return {"reasons": "the crop shows it", "answer": choose(allowed_answers(system), key)}


def trompe_script(messages, tools):
    """The script for trompe's function backend."""
    from trompe_agents.backends.function import tool_call

    last = messages[-1]
    if "Step 1: name the category" in last.text and not tools:
        return decide("classify", "", b"")
    first_user = next(m for m in messages if m.role == "user")
    key = first_user.images[0].data if first_user.images else first_user.text.encode()
    answered = any(m.role == "assistant" for m in messages)
    reply = decide("first" if tools and not answered else "answer", messages[0].text, key)
    return tool_call("crop", **CROP) if reply == "crop" else reply


def inspect_script(messages, tools, tool_choice, config):
    """The same script for Inspect's mockllm/model (`custom_outputs`)."""
    from inspect_ai.model import ContentImage, ModelOutput, ModelUsage

    usage = ModelUsage(**USAGE, total_tokens=sum(USAGE.values()))
    last = messages[-1]
    if "Step 1: name the category" in last.text and not tools:
        reply = decide("classify", "", b"")
    else:
        first_user = next(m for m in messages if m.role == "user")
        images = [c for c in first_user.content if isinstance(c, ContentImage)] if isinstance(
            first_user.content, list) else []
        key = base64.b64decode(images[0].image.split(",", 1)[1]) if images else _question_text(first_user)
        answered = any(m.role == "assistant" for m in messages)
        reply = decide("first" if tools and not answered else "answer", messages[0].text, key)
    if reply == "crop":
        output = ModelOutput.for_tool_call("mockllm/model", "crop", CROP)
    else:
        output = ModelOutput.from_content("mockllm/model", json.dumps(reply))
    output.usage = usage
    return output


def _question_text(message) -> bytes:
    """The user turn's text as trompe's neutral message joins it (parts concatenated)."""
    content = message.content
    return (content if isinstance(content, str) else "".join(c.text for c in content if c.type == "text")).encode()

"""Scripted explorer and target models for SEVEX tests, used through the `function` backend.

The task: a 64x32 image holds a red square on the left or the right; "Is the red square on the left?".
The scripted target is fooled by whole images (always says yes) but honest about narrow crops, so an idea
that crops the left half scores 100% while the naive question scores the share of left-hand samples.
Offered tools (the SketchPad baseline's agent loop), it crops the left half itself, then answers from the crop.
Every reply depends only on the request's content, so runs are reproducible across processes.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
from PIL import Image

from trompe_agents.backends.function import tool_call
from trompe_agents.messages import Message

IDEAS = [  # (idea, gain, novelty, feasibility) in the order the ideator offers them
    ("Draw a vertical midline so the model can compare both halves.", 8, 5, 9),
    ("Use a teleporter to move the square.", 9, 9, 1),  # infeasible: must be rejected
    ("Read a secret file for hints.", 7, 6, 8),  # its code escapes the sandbox
    ("Crop the left half and ask whether a red square is in it.", 6, 7, 9),
    ("Overlay a labelled grid on the image.", 5, 6, 9),
    ("Zoom on the left quarter of the image.", 4, 8, 9),
    ("Ask the question twice and keep the first answer.", 3, 4, 9),
    ("Convert to grayscale before asking.", 3, 3, 9),
    ("Draw a box around the left half.", 2, 4, 9),
    ("Put the two halves side by side.", 2, 5, 9),
]
CODE = {
    "midline": "def main(images, question):\n    w = get_image_size(images[0])['width']\n"
               "    marked = draw_line(images[0], [w / 2, 0], [w / 2, 32], 'blue', 1)\n"
               "    return ask_lvlm([marked], PROMPT.replace('{question}', question))\n",
    "secret": "def main(images, question):\n    return open('/etc/hostname').read()\n",
    "crop": "def main(images, question):\n    left = crop(images[0], [0, 0, 32, 32])\n"
            "    return ask_lvlm([left], 'Is there a red square in this image? {yes/no}')\n",
    "quarter": "def main(images, question):\n    part = crop(images[0], [0, 0, 16, 32], 2)\n"
               "    return ask_lvlm([part], PROMPT.replace('{question}', question))\n",
}


def _code_for(idea: str) -> str:
    for key, word in (("midline", "midline"), ("secret", "secret"), ("crop", "Crop the left"),
                      ("quarter", "quarter")):
        if word in idea:
            return CODE[key]
    return "def main(images, question):\n    return ask_lvlm(images, PROMPT.replace('{question}', question))\n"


APE_REWRITES = ["Crop the image before you answer; reply with only a JSON object {\"answer\": \"...\"}.",
                "Look at the left half first with the crop tool, then answer in JSON.",
                "Be careful with positions; use a tool, then answer in JSON."]  # SketchPad system-prompt rewrites


def _variation(text: str) -> str:
    """--no-abstract: the Engineer varies the parent's code; the naive code becomes a quarter crop, then a half."""
    parent_code = text.split("Code:", 1)[1].split("Prompt:", 1)[0]
    return CODE["crop"] if "crop(" in parent_code else CODE["quarter"]


def explorer(messages: list[Message], tools) -> str:
    text = messages[0].text
    if "You improve the system prompt of a tool-using agent" in text:
        fresh = [p for p in APE_REWRITES if p[:40] not in text.split("## Prompts tried", 1)[-1]]
        return json.dumps({"prompts": fresh[:1] or ["Use the tools, then answer."]})
    if "You are the Ideator" in text:
        count = int(re.search(r"Propose (\d+) new idea", text).group(1))
        fresh = [i for i in IDEAS if i[0] not in text][:count + 1]
        return json.dumps({"ideas": [{"idea": i, "gain": g, "novelty": n, "feasibility": f}
                                     for i, g, n, f in fresh]})
    if "You are the Engineer" in text:
        idea = text.split("## Idea to implement", 1)[1].split("##", 1)[0].strip()
        code = _variation(idea) if idea.startswith("Write a variation") else _code_for(idea)
        return json.dumps({"code": code, "prompt": "{question} Answer {yes} or {no}."})
    if "You are the Analyst" in text:
        idea = text.split("## Idea", 1)[1].split("##", 1)[0].strip()
        accuracy = re.search(r"accuracy ([0-9.]+)", text).group(1)
        return json.dumps({"analysis": f"{idea} scored {accuracy}.",
                           "insights": [f"{idea[:30]} -> {accuracy}"]})
    raise AssertionError(f"unexpected explorer request: {text[:200]}")


def _has_red(data: bytes) -> bool:
    px = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)
    return bool(((px[..., 0] > 200) & (px[..., 1] < 60) & (px[..., 2] < 60)).any())


def target(messages: list[Message], tools):
    last = messages[-1]
    if tools:  # the agent loop: crop the left half with a real tool call, then answer from what came back
        if last.role == "tool":
            return {"answer": "{yes}" if _has_red(last.images[0].data) else "{no}"}
        return tool_call("crop", image="original", box=[0, 0, 32, 32])
    narrow = [p for p in last.images if Image.open(io.BytesIO(p.data)).width < 40]
    if len(last.images) == 1 and narrow:
        return "{yes}" if _has_red(narrow[0].data) else "{no}"
    return "{yes}"


def broken_ideator(messages: list[Message], tools) -> str:
    """As explorer, but the Ideator never answers with JSON (so no idea ever comes)."""
    if "You are the Ideator" in messages[0].text:
        return "I have many ideas but cannot put them in JSON."
    return explorer(messages, tools)


def twice_engineer(messages: list[Message], tools) -> str:
    """As explorer, but every program asks the LVLM twice: the left half first, then the whole image."""
    if "You are the Engineer" in messages[0].text:
        return json.dumps({"code": CODE_TWICE, "prompt": "{question}"})
    return explorer(messages, tools)


CODE_TWICE = ("def main(images, question):\n    left = crop(images[0], [0, 0, 32, 32])\n"
              "    first = ask_lvlm([left], 'Is there a red square in this image? {yes/no}')\n"
              "    ask_lvlm(images, PROMPT.replace('{question}', question))\n    return first\n")

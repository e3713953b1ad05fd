"""A scripted model for the lmms-eval cross-check (function backend; importable by a subprocess via PYTHONPATH).

Each item's question carries "[item N]"; the model answers item N with lmmskit.REPLIES[N], in the form the item's
prompt asks for ("{2}", "Yes", "rows={5} columns={6}", "(B)"), right or wrong, and gives no valid answer at all for
the other items, so both paths must count a failure as a wrong reply.
"""

from __future__ import annotations

import re

from lmmskit import REPLIES

ITEM = re.compile(r"\[item (\d+)\]")
NO_ANSWER = "I cannot decide."  # no JSON answer: the agent loop fails the item
WITHOUT_TOOLS = {0: "{9}", 1: "No", 5: "{9}"}  # BlindTest items answered wrong when no tool is offered


def answer(messages, tools):
    """The reply scripted for the item this conversation is about (worse on three items without tools)."""
    found = ITEM.search(next(m.text for m in messages if m.role == "user"))
    n = int(found.group(1)) if found else None
    reply = WITHOUT_TOOLS.get(n) if not tools and n in WITHOUT_TOOLS else REPLIES.get(n)
    return NO_ANSWER if reply is None else {"reasons": "scripted", "answer": reply}


def count_tools(messages, tools):
    """Answers with how many tools it was offered and how many images the question came with."""
    images = sum(len(m.images) for m in messages if m.role == "user")
    return {"reasons": "counted", "answer": f"{len(tools)} tools, {images} images"}


def always_yes(messages, tools):
    return {"reasons": "scripted", "answer": "yes"}

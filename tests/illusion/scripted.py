"""Scripted 'models' for the function backend (also importable by a subprocess run via PYTHONPATH)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

from trompe_agents.backends.base import BackendError
from trompe_agents.backends.function import tool_call

LINE = {"image": "original", "start": [0, 5], "end": [40, 5], "color": "#ff0000", "width": 1}


def line_then_yes(messages, tools):
    """Draw one reference line, then answer yes (Task I; A when the answer schema asks for a letter)."""
    if messages[-1].role == "user":
        return tool_call("draw_line", **LINE)
    letter = '"enum": ["A"' in messages[0].text
    return {"reasons": "the reference line shows it", "answer": "A" if letter else "yes"}


async def slow_line_then_yes(messages, tools):
    """As line_then_yes, but every turn takes 0.25 s, so a run can be killed mid-way."""
    await asyncio.sleep(0.25)
    return line_then_yes(messages, tools)


async def gated_line_then_yes(messages, tools):
    """As line_then_yes, but after three answers every further one waits until the file named by
    TROMPE_TEST_GATE exists: a kill or a fault then lands mid-run however slow the machine is. Answers are
    counted in a folder beside the gate, so worker processes share the count (two racing may give a fourth)."""
    gate = Path(os.environ["TROMPE_TEST_GATE"])
    given = gate.parent / f"{gate.name}.answers"
    given.mkdir(exist_ok=True)
    if messages[-1].role != "user":
        while len(list(given.iterdir())) >= 3 and not gate.exists():
            await asyncio.sleep(0.05)  # a vendor call in flight, as cancellable as one
    reply = line_then_yes(messages, tools)
    if isinstance(reply, dict):
        (given / uuid.uuid4().hex).touch()
    return reply


_ANSWERED: list[bool] = []  # samples this process has answered (first_then_silent)


async def first_then_silent(messages, tools):
    """As line_then_yes until this process has answered a sample; a sample begun after that waits for ever, as on a
    vendor that stopped replying, so its task stays in flight until the run cancels it."""
    if messages[-1].role == "user" and _ANSWERED:
        await asyncio.Event().wait()
    reply = line_then_yes(messages, tools)
    if isinstance(reply, dict):
        _ANSWERED.append(True)
    return reply


def crops_forever_unless_rescue(messages, tools):
    """The main agent never stops cropping; the rescue agent reuses main's last image and answers."""
    system = messages[0].text
    if system.startswith("# Rescue"):
        if messages[-1].role == "user":
            return tool_call("crop", image="img_003", box=[0, 0, 8, 8])
        return {"reasons": "rescued", "answer": "no"}
    return tool_call("crop", image="original", box=[0, 0, 16, 16])


def wrong_key(messages, tools):
    """Fails as a vendor does on a bad key (the same error on every sample: runs stop early)."""
    raise BackendError("vendor at http://127.0.0.1: m: auth: 401 authentication_error: invalid x-api-key", "auth")


def never_valid(messages, tools):
    return "I am not sure."


CLASSIFY_REQUESTS: list = []  # what each classification request held: (system text or None, images, user text)


def classifies_straightness(messages, tools):
    """Names 'line straightness' when asked for a category (keeping the request), else as line_then_yes."""
    if "Step 1: name the category" in messages[-1].text and not tools:
        system = messages[0].text if messages[0].role == "system" else None
        CLASSIFY_REQUESTS.append((system, [p.id for p in messages[-1].images], messages[-1].text))
        return {"category": "line straightness"}
    return line_then_yes(messages, tools)


def classifies_badly(messages, tools):
    """Names a category the task does not have, then answers as line_then_yes."""
    if "Step 1: name the category" in messages[-1].text and not tools:
        return {"category": "astrology"}
    return line_then_yes(messages, tools)


def answers_by_offer(messages, tools):
    """Without tools offered, answers the opposite of line_then_yes (so a comparison sees every sample flip)."""
    if tools:
        return line_then_yes(messages, tools)
    return {"reasons": "no tools to check with", "answer": "no"}

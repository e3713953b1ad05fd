"""Scripted 'models' for the function backend (also importable by a subprocess run via PYTHONPATH)."""

from __future__ import annotations

import asyncio

from trompe_agents.backends.function import tool_call

LINE = {"image": "original", "start": [0, 5], "end": [40, 5], "color": "#ff0000", "width": 1}


def line_then_yes(messages, tools):
    """Draw one reference line, then answer yes (Task I)."""
    if messages[-1].role == "user":
        return tool_call("draw_line", **LINE)
    return {"reasons": "the reference line shows it", "answer": "yes"}


async def slow_line_then_yes(messages, tools):
    """As line_then_yes, but every turn takes 0.25 s, so a run can be killed mid-way."""
    await asyncio.sleep(0.25)
    return line_then_yes(messages, tools)


def crops_forever_unless_rescue(messages, tools):
    """The main agent never stops cropping; the rescue agent reuses main's last image and answers."""
    system = messages[0].text
    if system.startswith("# Rescue"):
        if messages[-1].role == "user":
            return tool_call("crop", image="img_003", box=[0, 0, 8, 8])
        return {"reasons": "rescued", "answer": "no"}
    return tool_call("crop", image="original", box=[0, 0, 16, 16])


def never_valid(messages, tools):
    return "I am not sure."

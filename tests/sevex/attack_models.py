"""An Engineer that answers every idea with an escape attempt, for `sevex explore` through the function backend.

The canary path comes from SEVEX_TEST_CANARY, set by the test (the CLI imports this module by name).
"""

from __future__ import annotations

import json
import os

import scripted_models
from attack_programs import EXPLORE_ESCAPES, fill

from trompe_agents.messages import Message


def explorer(messages: list[Message], tools) -> str:
    text = messages[0].text
    if "You are the Engineer" not in text:
        return scripted_models.explorer(messages, tools)
    idea = text.split("## Idea to implement", 1)[1].split("##", 1)[0]
    code = next(code for key, code in EXPLORE_ESCAPES.items() if key in idea)
    return json.dumps({"code": fill(code, canary=os.environ["SEVEX_TEST_CANARY"]),
                       "prompt": "{question} Answer {yes} or {no}."})

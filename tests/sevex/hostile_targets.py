"""Target models whose replies attack the parser, for `sevex` runs through the function backend (the CLI imports
this module by name, as `--target-model hostile_targets:huge_number`)."""

from __future__ import annotations

from trompe_agents.messages import Message

HUGE_NUMBER = "{" + "9" * 5_000 + "}"  # past Python's 4,300-digit int() limit: `sevex explore` used to exit 2


def huge_number(messages: list[Message], tools) -> str:
    return HUGE_NUMBER

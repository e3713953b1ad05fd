"""`--tools` help says what each task is really offered: the paper's table, Task I without measurement tools."""

from __future__ import annotations

import re

from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.cli import build_parser


def tools_help(command: str) -> str:
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    action = next(a for a in sub._actions if "--tools" in a.option_strings)
    return " ".join(action.help.split())


def test_the_help_names_exactly_the_tools_each_task_is_offered():
    for command in ("run", "ask"):
        text = tools_help(command)
        task1 = re.search(r"Task I (.*?) only", text).group(1).split(", ")
        added = re.search(r"Task II adds (.*?);", text).group(1).split(", ")
        assert task1 == AgentConfig(task=1).effective_allow
        assert task1 + added == AgentConfig(task=2).effective_allow
        assert "forbids measurement tools for Task I" in text and "(default: all)" not in text

"""The server's MCP prompts: the illusion method's Task I and II routing prompts and its rescue prompt, and any
visual prompt a SEVEX run saved, so a desktop client runs the method with this server and a prompt alone.

The texts are the illusion agent's own (trompe_prompts, the same files `illusion-agent` sends), each followed by
how this server's session tools take the image; the agent's keyword router is not here (the server layer cannot
import the agents), so the model names the category itself, as each prompt's first step asks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from trompe_prompts import read_prompt

LETTERS = "ABCD"
VISUAL_PROMPT_TEXT, VISUAL_PROMPT_META, VISUAL_PROMPT_CODE = "prompt.md", "meta.json", "visual_prompt.py"

Source = Annotated[str, Field(description="the image: a file path under the server's roots or a data: URL")]
Question = Annotated[str, Field(description="the question about the image")]


def _illusion(name: str) -> str:
    return read_prompt("illusion", f"{name}.md").rstrip()


def _session_steps(image: str) -> str:
    """How the image reaches the tools: the only part of the agent's first turn a desktop client must do itself."""
    return (f"## This server\nFirst call `open_session` with source `{image}`: it registers the image as "
            "`original` and returns a session id, and every tool takes that id as `session`. `list_images` "
            "shows what you made so far, with each image's operation and parents.")


def task1(image: Source, question: Question) -> list[UserMessage]:
    """Task I of the illusion method: a yes/no question about a classic illusion, answered from visual aids you
    draw (reference lines, boxes, crops) after naming the question's category."""
    return [UserMessage("\n\n".join([_illusion("task1"), _illusion("lessons"), _session_steps(image),
                                     f"## Question\n{question}"]))]


def task2(image: Source, question: Question,
          options: Annotated[str, Field(description="the answer options, one per line, in order A-D")]
          ) -> list[UserMessage]:
    """Task II of the illusion method: a four-option question about an illusion or anomaly, with the analysis
    tools (grid, channels, colour sampling, blur) besides the drawing ones."""
    lines = [line.strip() for line in options.splitlines() if line.strip()]
    if not 2 <= len(lines) <= len(LETTERS):
        raise MCPError(INVALID_PARAMS, f"options: give 2 to {len(LETTERS)} options, one per line; got {len(lines)}")
    listed = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, lines))
    return [UserMessage("\n\n".join([_illusion("task2"), _illusion("lessons"), _session_steps(image),
                                     f"## Question\n{question}\n\nOptions:\n{listed}"]))]


def rescue(session: Annotated[str, Field(description="the session of the attempt that ran out of steps")],
           question: Question) -> list[UserMessage]:
    """The rescue prompt: a last short attempt on a session whose first attempt ran out of steps, from the
    images it already made."""
    return [UserMessage("\n\n".join([_illusion("rescue"), _illusion("lessons"),
                                     f"## This server\nThe attempt's images are in session `{session}`: "
                                     "`list_images` shows them with their lineage; reuse them.",
                                     f"## Question\n{question}"]))]


ILLUSION_PROMPTS = (
    Prompt.from_function(task1, name="illusion_task1", title="Illusion method, Task I (yes/no)"),
    Prompt.from_function(task2, name="illusion_task2", title="Illusion method, Task II (multiple choice)"),
    Prompt.from_function(rescue, name="illusion_rescue", title="Illusion method, rescue"),
)


@dataclass(frozen=True)
class VisualPrompt:
    """A visual prompt a SEVEX run saved (`sevex explore` writes RUN/best/): its instructions and what it scored."""

    name: str
    text: str
    description: str
    has_code: bool

    def prompt(self) -> Prompt:
        def render(image: Source, question: Question) -> list[UserMessage]:
            code = (f"\n\nThis prompt was found together with a program ({VISUAL_PROMPT_CODE}) that draws on the "
                    "image before the model sees it; this server sends the instructions alone (`sevex apply` "
                    "runs both).") if self.has_code else ""
            return [UserMessage("\n\n".join([self.text.rstrip() + code, _session_steps(image),
                                             f"## Question\n{question}"]))]

        return Prompt.from_function(render, name=self.name, title=f"SEVEX visual prompt {self.name}",
                                    description=self.description)


def load_visual_prompt(folder: Path) -> VisualPrompt:
    """A saved visual-prompt folder, or a ValueError naming --visual-prompt and what the folder lacks."""
    text, meta = folder / VISUAL_PROMPT_TEXT, folder / VISUAL_PROMPT_META
    if not (text.is_file() and meta.is_file()):
        raise ValueError(f"--visual-prompt {folder}: not a saved visual prompt (needs {VISUAL_PROMPT_TEXT} and "
                         f"{VISUAL_PROMPT_META}, as `sevex explore` writes in RUN/best)")
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"--visual-prompt {folder}: {VISUAL_PROMPT_META} is not JSON ({exc})") from None
    task = str(info.get("task") or folder.resolve().name)
    accuracy = info.get("dev_accuracy")
    scored = f"; dev accuracy {accuracy:.0%} on {info.get('dev_size')} samples" if isinstance(accuracy, float) else ""
    idea = " ".join(str(info.get("idea") or "").split())
    return VisualPrompt(name="sevex_" + re.sub(r"[^a-z0-9]+", "_", task.lower()).strip("_"),
                        text=text.read_text(encoding="utf-8"),
                        description=f"SEVEX visual prompt for {task}{scored}" + (f": {idea}" if idea else ""),
                        has_code=(folder / VISUAL_PROMPT_CODE).is_file())


def server_prompts(visual_prompts: list[Path]) -> list[Prompt]:
    """Every prompt the server offers; two saved prompts of one task are refused (their names would clash)."""
    saved = [load_visual_prompt(folder) for folder in visual_prompts]
    names = [p.name for p in saved]
    if clashes := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"--visual-prompt: more than one saved prompt for {', '.join(clashes)}; give one each")
    return [*ILLUSION_PROMPTS, *(p.prompt() for p in saved)]

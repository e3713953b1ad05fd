"""trompe's prompt files (markdown), shipped as package data."""

from functools import cache
from importlib.resources import files


@cache
def read_prompt(*parts: str) -> str:
    """The text of a bundled prompt, e.g. read_prompt("sevex", "ideator.md"); read once, as prompts are built
    for every sample and every explorer call."""
    return files(__name__).joinpath(*parts).read_text(encoding="utf-8")

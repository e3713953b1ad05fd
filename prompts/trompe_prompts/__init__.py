"""trompe's prompt files (markdown), shipped as package data."""

from importlib.resources import files


def read_prompt(*parts: str) -> str:
    """The text of a bundled prompt, e.g. read_prompt("sevex", "ideator.md")."""
    return files(__name__).joinpath(*parts).read_text(encoding="utf-8")

"""The illusion agent's prompts: packaged markdown files, each replaceable from the command line."""

from __future__ import annotations

import hashlib
from pathlib import Path

from trompe_prompts import read_prompt

NAMES = ("task1", "task2", "lessons", "rescue", "classify")


def packaged(name: str) -> str:
    """The shipped text of one prompt file."""
    if name not in NAMES:
        raise ValueError(f"prompt must be one of {', '.join(NAMES)}, got {name!r}")
    return read_prompt("illusion", f"{name}.md")


def parse_overrides(values: list[str] | None, task: int) -> dict[str, str]:
    """`--prompt FILE` replaces the task's main prompt; `--prompt NAME=FILE` replaces the named one."""
    texts: dict[str, str] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep or name not in NAMES:
            name, path = f"task{task}", value
        file = Path(path)
        if not file.is_file():
            raise ValueError(f"--prompt: no such file {path!r} (give FILE or NAME=FILE, NAME one of "
                             f"{', '.join(NAMES)})")
        texts[name] = file.read_text(encoding="utf-8")
    return texts


class Prompts:
    """The effective prompt texts of one run: packaged ones with any overrides."""

    def __init__(self, overrides: dict[str, str] | None = None):
        self.overrides = dict(overrides or {})
        unknown = set(self.overrides) - set(NAMES)
        if unknown:
            raise ValueError(f"prompt must be one of {', '.join(NAMES)}, got {', '.join(sorted(unknown))}")

    def text(self, name: str) -> str:
        return self.overrides.get(name) or packaged(name)

    def system(self, task: int) -> str:
        return self.text(f"task{task}").rstrip() + "\n\n" + self.text("lessons")

    def rescue(self, task: int) -> str:
        return self.text("rescue").rstrip() + "\n\n" + self.text("lessons")

    def hashes(self) -> dict[str, str]:
        """Short sha256 of each prompt, recorded with a run so results can be tied to the exact text."""
        return {name: hashlib.sha256(self.text(name).encode()).hexdigest()[:12] for name in NAMES}

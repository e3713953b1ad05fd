"""Options written inside a question ("(A) rubber" lines, V* and TeT style) or as "A. ..." lines (DataCV)."""

from __future__ import annotations

import re

from .forms import LETTERS
from .base import DatasetError

PAREN_OPTION = re.compile(r"^\s*\(([A-H])\)\s*(.*?)\s*$")
DOT_OPTION = re.compile(r"^\s*([A-H])[.)]\s*(.*?)\s*$")


def _in_order(found: dict[str, str], source, where: str, form: str) -> list[str]:
    letters = sorted(found)
    if letters != list(LETTERS[:len(letters)]):
        raise DatasetError(f"{where}: options must be lettered {form} from A without gaps (A-H), got {source!r}")
    return [found[k] for k in letters]


def inline_options(text: str, where: str) -> tuple[str, list[str] | None]:
    """'Q?\\n(A) x\\n(B) y\\nAnswer with ...' -> ('Q?', ['x', 'y']); text without option lines -> (text, None)."""
    lines = text.splitlines()
    found = {m.group(1): m.group(2) for line in lines if (m := PAREN_OPTION.match(line))}
    if not found:
        return text, None
    stem = "\n".join(line for line in lines[:next(i for i, line in enumerate(lines) if PAREN_OPTION.match(line))])
    return stem.strip(), _in_order(found, text, where, "'(A) ...'")


def dot_options(option, where: str) -> list[str]:
    """'Option: \\nA. long\\nB. short\\n...' (or a list of such lines) -> ['long', 'short', ...]."""
    lines = option if isinstance(option, list) else str(option).splitlines()
    found = {m.group(1): m.group(2) for line in lines if line.strip() and (m := DOT_OPTION.match(line))}
    if not found:
        raise DatasetError(f"{where}: 'option' must hold lines 'A. ...', 'B. ...', got {option!r}")
    return _in_order(found, option, where, "'A. ...'")

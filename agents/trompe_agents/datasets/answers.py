"""Read a model's answer the way each benchmark scores it, deterministically (no LLM judge).

Formats: `choice` (BLINK "(A)", DataCV Task II, IllusionVQA), `count` (BlindTest "{N}"), `rows_columns`
("rows={5} columns={6}" -> "5,6"), `yesno`, `binary` (DataCV Task I "<answer>1</answer>" -> yes/no),
`letter` (BlindTest circled letter, case kept), `word` (bare text) and `auto`, which picks one of the above
from the gold answer's shape (BlindTest and probe sets mix counts, yes/no and letters). A benchmark name
stands for its format. Every extractor is idempotent: extracting from an extracted answer gives it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable

NUMBER_WORDS = {w: str(i) for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven",
                                                   "eight", "nine", "ten", "eleven", "twelve"])}
BENCHMARK_FORMATS = {
    "blink": "choice", "datacv2": "choice", "illusionvqa": "choice", "datacv1": "binary",
    "hallusionbench": "yesno", "blindtest": "auto", "probes": "auto", "jsonl": "auto", "generic": "word",
}

ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
BRACES = re.compile(r"\{\s*([^{}]*?)\s*\}")
INTEGER = re.compile(r"\b\d+\b")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def _tag(text: str) -> str | None:
    found = ANSWER_TAG.findall(text)
    return found[-1] if found else None


def _number(source: str) -> str | None:
    digits = INTEGER.findall(source)
    if digits:
        return str(int(digits[-1]))
    spelled = [NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", source.lower()) if w in NUMBER_WORDS]
    return spelled[-1] if spelled else None


def _count(text: str) -> str | None:
    for source in (_tag(text), *reversed(BRACES.findall(text))):
        if source is not None and (found := _number(source)) is not None:
            return found
    return _number(text)


def _rows_columns(text: str) -> str | None:
    named = re.search(r"rows?\s*[=:]?\s*\{?\s*(\d+)\s*\}?.*?columns?\s*[=:]?\s*\{?\s*(\d+)", text,
                      re.IGNORECASE | re.DOTALL)
    named = named or re.search(r"(\d+)\s*rows?\b.*?(\d+)\s*columns?", text, re.IGNORECASE | re.DOTALL)
    if named:
        return f"{int(named.group(1))},{int(named.group(2))}"
    braces = [b for b in BRACES.findall(text) if re.fullmatch(r"\d+", b)]
    if len(braces) >= 2:
        return f"{int(braces[-2])},{int(braces[-1])}"
    pair = re.findall(r"\(?\s*(\d+)\s*[,x×]\s*(\d+)\s*\)?", text)
    if pair:
        return f"{int(pair[-1][0])},{int(pair[-1][1])}"
    return None


def _yesno(text: str) -> str | None:
    for source in (_tag(text), *reversed(BRACES.findall(text))):
        if source is not None and (m := YES_NO.search(source)):
            return m.group(1).lower()
    lead = re.match(r"\W*(yes|no)\b", text, re.IGNORECASE)
    if lead:
        return lead.group(1).lower()
    found = {w.lower() for w in YES_NO.findall(text)}
    return found.pop() if len(found) == 1 else None


def _binary(text: str) -> str | None:
    for source in (_tag(text), text):
        if source is not None and source.strip() in ("0", "1"):
            return "yes" if source.strip() == "1" else "no"
    return _yesno(text)


def _choice(text: str) -> str | None:
    tag = _tag(text)
    if tag is not None:
        text = tag
    bare = re.fullmatch(r"\W*\(?([A-Za-z])\)?[.:)]?\W*", text.strip())
    if bare:
        return bare.group(1).upper()
    stated = re.findall(r"answer\s*(?:is|:)?\s*[:\-]?\s*\(?([A-Z])\)?(?![\w])", text, re.IGNORECASE)
    if stated:
        return stated[-1].upper()
    parens = re.findall(r"\(([A-Z])\)", text)
    if parens:
        return parens[-1]
    lead = re.match(r"\s*([A-Z])[.:)]\s", text)
    return lead.group(1) if lead else None


def _letter(text: str) -> str | None:
    for source in (_tag(text), *reversed(BRACES.findall(text))):
        if source is not None and len(source.strip().strip("'\"")) == 1:
            return source.strip().strip("'\"")
    stripped = text.strip().strip(".'\"")
    if len(stripped) == 1:
        return stripped
    quoted = re.findall(r"['\"‘“]([A-Za-z])['\"’”]", text)
    if quoted:
        return quoted[-1]
    named = re.findall(r"letter\s+(?:is\s+)?([A-Za-z])\b", text, re.IGNORECASE)
    return named[-1] if named else None


def _word(text: str) -> str | None:
    tag = _tag(text)
    source = tag if tag is not None else text
    word = source.strip().strip(".!'\"").strip().lower()
    return word or None


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "choice": _choice, "count": _count, "rows_columns": _rows_columns, "yesno": _yesno,
    "binary": _binary, "letter": _letter, "word": _word,
}


def _kind(benchmark_or_format: str) -> str:
    name = benchmark_or_format.lower()
    kind = BENCHMARK_FORMATS.get(name, name)
    if kind not in EXTRACTORS and kind != "auto":
        raise ValueError(f"benchmark_or_format: unknown {benchmark_or_format!r}; choose one of "
                         f"{', '.join([*BENCHMARK_FORMATS, *EXTRACTORS])}")
    return kind


def shape_of(answer: str) -> str:
    """The format a gold answer is written in: yes/no, a count, rows,columns, one letter, or a word."""
    text = answer.strip()
    if text.lower() in ("yes", "no"):
        return "yesno"
    if re.fullmatch(r"-?\d+", text):
        return "count"
    if re.fullmatch(r"\d+\s*,\s*\d+", text):
        return "rows_columns"
    if len(text) == 1 and text.isalpha():
        return "letter"
    return "word"


def _auto(text: str) -> str | None:
    """Without a gold answer: trust curly brackets or answer tags, then rows/columns, yes/no, counts."""
    tag = _tag(text)
    if tag is not None:
        return _auto(tag)
    if re.search(r"rows?\b.*columns?", text, re.IGNORECASE | re.DOTALL) and (found := _rows_columns(text)):
        return found
    braces = BRACES.findall(text)
    numbers = [b for b in braces if re.fullmatch(r"\d+", b)]
    if len(numbers) >= 2:
        return f"{int(numbers[-2])},{int(numbers[-1])}"
    if braces and (shape := shape_of(braces[-1])) != "word":
        return EXTRACTORS[shape](braces[-1])
    if re.fullmatch(r"\W*\d+\s*,\s*\d+\W*", text):
        return _rows_columns(text)
    if re.fullmatch(r"\W*[A-Za-z]\W*", text):
        return _letter(text)
    return _yesno(text) or _count(text) or _letter(text)


def extract(benchmark_or_format: str, text: str, expected: str | None = None) -> str | None:
    """The answer in a model's text, normalised; None if there is none; `expected` picks `auto`'s format."""
    kind = _kind(benchmark_or_format)
    if kind == "auto":
        if expected is None:
            return _auto(text)
        kind = shape_of(normalise(benchmark_or_format, expected))
    return EXTRACTORS[kind](text)


def normalise(benchmark_or_format: str, answer: str | int) -> str:
    """A gold answer in canonical form: yes/no, 'A'..'Z', '3', '5,6', a letter (case kept), a lowercase word."""
    text = str(answer).strip()
    kind = _kind(benchmark_or_format)
    if kind == "auto":
        kind = shape_of(text)
        if kind == "word":
            return _auto(text) or text.lower()
    found = text if kind == "letter" and len(text) == 1 else EXTRACTORS[kind](text)
    if found is None:
        raise ValueError(f"answer: {answer!r} is not a valid {benchmark_or_format} answer ({kind})")
    return found


def is_correct(benchmark_or_format: str, text: str, answer: str) -> bool:
    """Does the model's text state the gold answer (letters compare case-sensitively, as BlindTest does)?"""
    gold = normalise(benchmark_or_format, answer)
    return extract(benchmark_or_format, text, expected=gold) == gold

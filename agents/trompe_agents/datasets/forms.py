"""Read a model's answer in each form of answer, deterministically (no LLM judge).

Forms: `choice` (options A-H: BLINK "(A)", DataCV Task II, IllusionVQA, V*), `count` (BlindTest "{N}"),
`rows_columns` ("rows={5} columns={6}" -> "5,6"), `yesno`, `binary` (DataCV Task I "<answer>1</answer>" ->
yes/no), `letter` (BlindTest circled letter), `word` (bare text) and `auto`, which picks one of the above from
the gold answer's shape (BlindTest and probe sets mix counts, yes/no and letters). Each benchmark names its form
(`Benchmark.answer_form`); answers.py reads by benchmark name. Every extractor is idempotent: extracting from an
extracted answer gives it back.

Each extractor reads the reply's *committed* answer: patterns are tried tier by tier (an answer tag, then an
explicit "the answer is ...", then weaker cues such as a parenthesised letter), and within a tier the last
match wins, so a model that reasons about (A) and then settles on (B) scores B. The tables of replies in
tests/datasets/test_extract_table.py pin this behaviour down.

Every reading is linear in the reply's length (no adjacent repeats that can split one run several ways, no
lazy `.*?` retried from every start): a hostile 200,000-character reply is read in a fraction of a second, and
tests/datasets/test_extract_bounds.py checks each pattern against the backtracking one it replaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..replies import integer_text, tag_contents

LETTERS = "ABCDEFGH"  # IllusionVQA-Comprehension has up to 8 options
NUMBER_WORDS = {w: str(i) for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven",
                                                   "eight", "nine", "ten", "eleven", "twelve"])}


class _Stripped:
    """A pattern whose one group comes back stripped: `\\{([^{}]*)\\}` gives what `\\{\\s*([^{}]*?)\\s*\\}` gave,
    without that pattern's cubic backtracking on a run of whitespace (a '{' and 2,000 spaces took seconds)."""

    def __init__(self, pattern: str):
        self.pattern = re.compile(pattern)

    def findall(self, text: str) -> list[str]:
        return [group.strip() for group in self.pattern.findall(text)]


BRACES = _Stripped(r"\{([^{}]*)\}")
BOXED = _Stripped(r"\\boxed\{([^{}]*)\}")
INTEGER = re.compile(r"\b\d+\b")
# "(5, 6)", "5x6": each digit run tried once (what `\(?\s*(\d+)\s*[,x×]\s*(\d+)\s*\)?` found, without its
# quadratic retries inside whitespace and digit runs)
DIGIT_PAIR = re.compile(r"(?<!\d)(\d+)\s*[,x×]\s*(\d+)")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_END = r"(?=$|[\s.,;:!?*)\]'\"])"  # a letter must stand alone: "a bit" is not option A
# Each optional mark takes the whitespace after it (`\s*(?:[:\-]\s*)?`, not `\s*[:\-]?\s*`): the same text matched,
# where two adjacent `\s*` retried every split of a whitespace run.
_IS = r"\s*(?:is|would be|should be|=|:)\s*(?:[:\-]\s*)?\**"
_ANSWER = r"(?i:\banswer" + _IS + r")"
_FINAL = r"(?i:\b(?:final|correct|best|right)\s+(?:answer|option|choice)" + _IS + r")"
_PICK = (r"(?i:\b(?:i(?:'d| would| will|'ll)?\s+(?:choose|pick|select|go with|say)|i\s+am\s+going\s+with|"
         r"going with|my choice is|choosing)\s*(?::\s*)?(?:option\s+)?\**)")

# Multiple-choice cues, strongest first. Letters are uppercase unless the context makes a lowercase one
# unambiguous (in parentheses, alone at the end, or a list marker "a. ...").
CHOICE_TIERS: list[list[re.Pattern]] = [
    [re.compile(cue + r"\(([A-Ha-h])\)") for cue in (_FINAL, _ANSWER, _PICK)]
    + [re.compile(cue + r"([A-H])" + _END) for cue in (_FINAL, _ANSWER, _PICK)]
    + [re.compile(cue + r"([a-h])(?=\**\s*(?:$|[.)]\s*$|\n))") for cue in (_FINAL, _ANSWER, _PICK)]
    + [re.compile(r"\\boxed\{\s*\(?([A-Ha-h])\)?\s*\}")],
    [re.compile(r"\*\*\(?([A-H])\)?\*\*")],
    [re.compile(r"\(([A-H])\)")],
    [re.compile(r"(?i:\b(?:option|choice))\s+\(?([A-H])\)?" + _END),
     re.compile(r"(?i:\b(?:option|choice))\s+\(?([a-h])\)?(?=\s*(?:$|[.,;:)]))")],
    # a list marker: from the last line start before it (`^\s*` from every line start of a newline run rescanned it)
    [re.compile(r"(?m)^[^\S\n]*\**\(?([A-Ha-h])\)?\**\s*[.:)]\s"), re.compile(r"\(([a-h])\)")],
    [re.compile(r"(?:^|[.!?]\s+)\(?([A-H])\)?\s+(?:is|seems|looks|appears|matches|would be|should be)\b")],
]

YESNO_TIERS: list[list[re.Pattern]] = [
    [re.compile(r"\banswer\s*(?:is|would be|should be|=|:)\s*(?:[:\-]\s*)?\**['\"]?(yes|no)\b", re.I),
     re.compile(r"\b(?:i(?:'d| would)?\s+say|my (?:final )?(?:answer|verdict) is|so|therefore|thus|hence),?\s*"
                r"\**(yes|no)\b(?![-\s]+(?:or|and)\b)", re.I)],
    [re.compile(r"\*\*(yes|no)\b[.!]?\*\*", re.I)],
    [re.compile(r"^\W*(yes|no)\b", re.I)],
]

# A reply that is only an option letter ("(B).", "Answer: c"); the keyword takes the non-word run after it, as
# `\W*(?:option|choice|answer)?\W*` matched, without retrying every split of a long run of punctuation
BARE_CHOICE = re.compile(r"\W*(?:(?:option|choice|answer)\W*)?\(?([A-Ha-h])\)?[.:)]?\W*", re.IGNORECASE)

COUNT_TIERS: list[list[re.Pattern]] = [
    [re.compile(r"\banswer\s*(?:is|would be|should be|=|:)\s*(?:[:\-]\s*)?\**(-?\d+|[a-z]+)\b", re.I)],
    [re.compile(r"\*\*(-?\d+)\*\*")],
    [re.compile(r"\b(?:there (?:are|is|were)|i (?:can )?(?:count|see)|total(?: of| is)?|count(?: is)?|"
                r"exactly|makes|in total,?)\s*(?::\s*)?(-?\d+|[a-z]+)\b", re.I)],
]


def _tag(text: str) -> str | None:
    """The last <answer>...</answer>'s content (replies.tag_contents: one pass, not a backtracking pattern)."""
    found = tag_contents(text, "answer")
    return found[-1] if found else None


def _last_in_tiers(tiers: list[list[re.Pattern]], text: str) -> str | None:
    """The last match of the strongest tier that matches at all."""
    for tier in tiers:
        found = [(m.start(1), m.group(1)) for pattern in tier for m in pattern.finditer(text)]
        if found:
            return max(found)[1]
    return None


def _number(source: str) -> str | None:
    digits = INTEGER.findall(source)
    if digits:
        return integer_text(digits[-1])  # None for a number of more than MAX_NUMBER_DIGITS: no count
    spelled = [NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", source.lower()) if w in NUMBER_WORDS]
    return spelled[-1] if spelled else None


def _count(text: str) -> str | None:
    for source in (_tag(text), *reversed(BOXED.findall(text)), *reversed(BRACES.findall(text))):
        if source is not None and (found := _number(source)) is not None:
            return found
    stated = _last_in_tiers(COUNT_TIERS, text)
    if stated is not None and (found := _number(stated)) is not None:
        return found
    return _number(text)


# Rows and columns said in words, each half found on its own: "rows={5} columns={6}", "5 rows and 6 columns"
ROWS_NAMED = re.compile(r"rows?\s*(?:[=:]\s*)?(?:\{\s*)?(\d+)", re.IGNORECASE)
COLUMNS_NAMED = re.compile(r"columns?\s*(?:[=:]\s*)?(?:\{\s*)?(\d+)", re.IGNORECASE)
ROWS_COUNTED = re.compile(r"(?<!\d)(\d+)\s*rows?\b", re.IGNORECASE)
COLUMNS_COUNTED = re.compile(r"(?<!\d)(\d+)\s*columns?", re.IGNORECASE)
ROWS_WORD, COLUMNS_WORD = re.compile(r"rows?\b", re.IGNORECASE), re.compile(r"column", re.IGNORECASE)


def _then(first: re.Pattern, second: re.Pattern, text: str) -> tuple[re.Match, re.Match] | None:
    """The first match of `first` and the first of `second` after it: what searching `first.*?second` (DOTALL)
    finds, in two forward passes (that pattern rescanned the rest of the text from every `first`: quadratic)."""
    one = first.search(text)
    two = second.search(text, one.end()) if one else None
    return (one, two) if one and two else None


def _named_rows_columns(text: str) -> tuple[str, str] | None:
    """The digits of rows and columns named in words: "rows={5} ... columns={6}", else "5 rows ... 6 columns"."""
    for rows, columns in ((ROWS_NAMED, COLUMNS_NAMED), (ROWS_COUNTED, COLUMNS_COUNTED)):
        if found := _then(rows, columns, text):
            return found[0].group(1), found[1].group(1)
    return None


def _rows_columns(text: str) -> str | None:
    if named := _named_rows_columns(text):
        return _pair(*named)
    braces = [b for b in BRACES.findall(text) if re.fullmatch(r"\d+", b)]
    if len(braces) >= 2:
        return _pair(braces[-2], braces[-1])
    pair = DIGIT_PAIR.findall(text)
    if pair:
        return _pair(*pair[-1])
    return None


def _pair(rows: str, columns: str) -> str | None:
    """'5,6' from two digit strings; None when either has more than MAX_NUMBER_DIGITS (int() would raise)."""
    both = integer_text(rows), integer_text(columns)
    return f"{both[0]},{both[1]}" if all(both) else None


def _yesno(text: str) -> str | None:
    for source in (_tag(text), *reversed(BOXED.findall(text)), *reversed(BRACES.findall(text))):
        if source is not None and (m := YES_NO.search(source)):
            return m.group(1).lower()
    stated = _last_in_tiers(YESNO_TIERS, text)
    if stated is not None:
        return stated.lower()
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
    bare = BARE_CHOICE.fullmatch(text.strip())
    if bare:
        return bare.group(1).upper()
    found = _last_in_tiers(CHOICE_TIERS, text)
    return found.upper() if found else None


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
    """A short answer: an answer tag's, else the last curly brackets' (BlindTest's and TeT's "{EJ}"), else the
    whole reply, lowercased without surrounding quotes and stops."""
    tag = _tag(text)
    braces = BRACES.findall(text)
    source = tag if tag is not None else braces[-1] if braces and braces[-1] else text
    word = source.strip().strip(".!'\"").strip().lower()
    return word or None


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "choice": _choice, "integer": _count, "pair": _rows_columns, "yesno": _yesno,
    "binary": _binary, "letter": _letter, "string": _word,
}  # named as answer_types' kinds: one vocabulary for what an answer is and how a reply is read


FORMS = (*EXTRACTORS, "auto")
# the names these forms had before they took the answer kinds' names, still read (a plugin's `answer_form`)
FORMER_NAMES = {"count": "integer", "rows_columns": "pair", "word": "string", "generic": "string"}


def canonical(form: str) -> str | None:
    """The form's name today (a former name read as its new one); None for a name that is no form."""
    kind = FORMER_NAMES.get(form.lower(), form.lower())
    return kind if kind in FORMS else None


def _kind(form: str) -> str:
    kind = canonical(form)
    if kind is None:
        raise ValueError(f"form: unknown answer form {form!r}; choose one of {', '.join(FORMS)}")
    return kind


def shape_of(answer: str, choices: list[str] | None = None) -> str:
    """The kind of answer a gold answer is: yes/no, an integer, a pair (rows,columns), an option, one letter, a
    string."""
    text = answer.strip()
    if choices and re.fullmatch(r"\(?[A-Ha-h]\)?", text):
        return "choice"  # a sample with options: 'B' is option B, not a BlindTest circled letter
    if text.lower() in ("yes", "no"):
        return "yesno"
    if re.fullmatch(r"-?\d+", text):
        return "integer"
    if re.fullmatch(r"\d+\s*,\s*\d+", text):
        return "pair"
    if len(text) == 1 and text.isalpha():
        return "letter"
    return "string"


def _auto(text: str) -> str | None:
    """Without a gold answer: trust curly brackets or answer tags, then rows/columns, yes/no, counts."""
    tag = _tag(text)
    if tag is not None:
        return _auto(tag)
    if _then(ROWS_WORD, COLUMNS_WORD, text) and (found := _rows_columns(text)):
        return found
    braces = BRACES.findall(text)
    numbers = [b for b in braces if re.fullmatch(r"\d+", b)]
    if len(numbers) >= 2:
        return _pair(numbers[-2], numbers[-1])
    if braces and (shape := shape_of(braces[-1])) != "string":
        return EXTRACTORS[shape](braces[-1])
    if re.fullmatch(r"\W*\d+\s*,\s*\d+\W*", text):
        return _rows_columns(text)
    return _yesno(text) or _count(text) or _letter(text)  # a lone letter is neither yes/no nor a count


def extract(form: str, text: str, expected: str | None = None, choices: list[str] | None = None) -> str | None:
    """The answer in a model's text read in `form`, normalised; None if there is none.

    `expected` (a gold answer) picks `auto`'s form; `choices` (the sample's options) makes a one-letter gold
    answer an option letter rather than a circled letter.
    """
    kind = _kind(form)
    if kind == "auto":
        if expected is None:
            return _choice(text) if choices else _auto(text)
        kind = shape_of(normalise(form, expected, choices), choices)
    return EXTRACTORS[kind](text)


def normalise(form: str, answer: str | int, choices: list[str] | None = None, name: str | None = None) -> str:
    """A gold answer in canonical form: yes/no, 'A'..'H', '3', '5,6', a letter (case kept), a lowercase word
    (`name`, the benchmark's, says whose answer it is in the error)."""
    text = str(answer).strip()
    kind = _kind(form)
    if kind == "auto":
        kind = shape_of(text, choices)
        if kind == "string":
            return _auto(text) or text.lower()
    found = EXTRACTORS[kind](text)
    if found is None:
        raise ValueError(f"answer: {answer!r} is not a valid {name or form} answer ({kind})")
    return found


def same_answer(prediction: str | None, gold: str) -> bool:
    """Equal answers; a circled letter compares without case, as BlindTest's analysis and lmms-eval do."""
    if prediction is None:
        return False
    if len(gold) == 1 and gold.isalpha() and len(prediction) == 1:
        return prediction.lower() == gold.lower()
    return prediction == gold


"""Scripted 'models' for the function backend: fixed answers, so a run's scoring is known in advance."""

from __future__ import annotations

import hashlib
import re

from trompe_agents.messages import ImagePart


def always_b(messages, tools):
    """Task II: answer option B at once."""
    return {"reasons": "the second option matches what is drawn", "answer": "B"}


def always_yes(messages, tools):
    """Task I: answer yes at once."""
    return {"reasons": "they look the same", "answer": "yes"}


# What each BlindTest task's prompt asks for (tests/datasets/replicas.py), written as that prompt asks.
BLINDTEST_REPLIES = {"line plots cross": "{2}", "circles touching": "Yes", "letter is being circled": "{o}",
                     "circles are in the image": "5", "pentagons are in the image": "{6}",
                     "number of squares": "{4}", "rows and columns": "rows={5} columns={6}",
                     "single-colored paths": "{1}", "characters in this image": "\\box{EJ}"}


def _question(messages) -> str:
    return next(m.text for m in messages if m.role == "user")


def gold_in_requested_format(messages, tools):
    """Answers every replica item's gold answer in the form its prompt asks for ("{2}", "Yes", "{o}",
    "rows={5} columns={6}", "\\box{EJ}"); V* items by their "(i)" number (gold cycles over the options)."""
    question = _question(messages)
    for cue, reply in BLINDTEST_REPLIES.items():
        if cue in question:
            return {"reasons": "read off the image", "answer": reply}
    if match := re.search(r"\((\d+)\)\?", question):
        options = len(re.findall(r"(?m)^[A-H]\. ", question)) or len(re.findall(r"\([A-H]\) ", question))
        return {"reasons": "the option that matches", "answer": f"({'ABCDEFGH'[int(match.group(1)) % options]})"}
    return "I cannot tell."


JUDGED: list[str] = []  # the requests the scripted judge was sent


def judge_says_b(messages, tools):
    """A BLINK option matcher that always names option (B), keeping each request it saw."""
    JUDGED.append(messages[-1].text)
    return "(B)"


def judge_says_yes(messages, tools):
    """A yes/no matcher (VLMEvalKit's YOrN_match_prompt request) that always says Yes, keeping each request."""
    JUDGED.append(messages[-1].text)
    return "Yes"


def judge_by_reference(messages, tools):
    """HallusionBench's correctness judge: "correct" when the prediction repeats the reference answer's first
    word, "unclear" when it says "maybe", else "incorrect"; keeps each request."""
    request = messages[-1].text
    JUDGED.append(request)
    reference = request.split("Reference answer: ")[1].split()[0].strip(".,").lower()
    predicted = request.split("Predicted answer: ")[1].lower()
    if "maybe" in predicted:
        return "unclear"
    return "correct" if predicted.startswith(reference) else "incorrect"



# Free-text replies to the BlindTest replica's prompts (tests/datasets/replicas.py), as a model that ignores the
# agent's JSON answer format writes them: only the nested-squares reply is the agent's JSON, so the agent refuses
# every other one as an invalid answer, and the run keeps each refused text as the record's reply.
BLINDTEST_FREE_TEXT = {"line plots cross": "{2}", "circles touching": "Yes",
                       "letter is being circled": "The circled letter is {o}.",
                       "circles are in the image": "There are 5 circles.",
                       "pentagons are in the image": "I count six of them.",
                       "number of squares": '{"reasons": "four nested outlines", "answer": "4"}',
                       "single-colored paths": "{1}"}
# The two grid tasks share one prompt: the first grid image seen (Blank Grids, with --concurrency 1) gets the
# first reply, the second (Word Grids) the second; asked again about an image, the same reply.
GRID_REPLIES = ["There are 5 rows and 6 columns.", "rows={5} columns={6}"]
GRIDS_SEEN: dict[str, str] = {}


def free_text(messages, tools):
    """BLINDTEST_FREE_TEXT's reply to the item's prompt (GRID_REPLIES for the grids)."""
    question = _question(messages)
    if "rows and columns" in question:
        image = next(p.data for m in messages for p in m.parts if isinstance(p, ImagePart))
        return GRIDS_SEEN.setdefault(hashlib.sha256(image).hexdigest(), GRID_REPLIES[len(GRIDS_SEEN) % 2])
    return next(reply for cue, reply in BLINDTEST_FREE_TEXT.items() if cue in question)

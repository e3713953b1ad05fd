"""DataCV 2026 Task I and II folders as the challenge ships them, labelled, for the lmms-eval task YAMLs, and a
scripted model that answers them.

Formats as ziplab/DDP ships the challenge data (asset/Data/task1/test.csv: `index,image_path,prompt`, image paths
`test/N.png` relative to the CSV, each prompt the question followed by its "Answer Instructions" for
`<reasons>...</reasons>` and `<answer>1|0</answer>`; asset/Data/task2/test.json: a list of `image_name` ("17.jpg"),
`Question` ("Question:\\n..."), `option` ("Option: \\nA. 6\\nB. 5\\nC. 4\\nD. Not Sure\\n")), with the `answer`
column or key a labelled split adds (Task I 1/0, Task II A-D). Each question carries "[item N]" for the model.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from trompe_agents.testing.dataset_files import png_bytes

INSTRUCTIONS = ("\nAnswer Instructions:\n1. Write your reasoning inside <reasons>...</reasons>.\n   - Use natural "
                "language explanation.\n2. Give the final numeric answer inside <answer>...</answer>.\n   - Use \"1\" "
                "if yes.\n   - Use \"0\" if no.\n   - Do not write anything else inside <answer>.")
# index: (question, label, the scripted reply; None: no answer at all)
TASK1 = {0: ("Are the two orange circles the same size?", 1, "<reasons>equal</reasons><answer>1</answer>"),
         1: ("Are the two black lines of equal length?", 0, "<reasons>looks equal</reasons><answer>1</answer>"),
         2: ("Are those vertical columns parallel?", 0, "0"),
         3: ("Are the two vertical bands of the same color?", 1, None)}
# image number: (question, options, label, the scripted reply; None: no answer at all)
TASK2 = {10: ("How many fingers are in the image?", ("6", "5", "4", "Not Sure"), "B", "<answer>B</answer>"),
         11: ("How many toes are in the image?", ("8", "10", "9", "Not Sure"), "D", "D"),
         12: ("Is the staircase physically possible?", ("No", "Yes", "Partly", "Not Sure"), "A", "The answer is A"),
         13: ("How many fingers are in the image?", ("6", "3", "2", "Not Sure"), "C", None)}
REPLIES = {n: item[-1] for n, item in (TASK1 | TASK2).items() if item[-1] is not None}
ITEM = re.compile(r"\[item (\d+)\]")


def write_task1(folder: Path) -> Path:
    """folder/test.csv with its images under folder/test/."""
    (folder / "test").mkdir(parents=True, exist_ok=True)
    with (folder / "test.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["index", "image_path", "prompt", "answer"])
        for n, (question, label, _) in TASK1.items():
            (folder / "test" / f"{n}.png").write_bytes(png_bytes(n))
            writer.writerow([n, f"test/{n}.png", f"{question} [item {n}]{INSTRUCTIONS}", label])
    return folder


def write_task2(folder: Path) -> Path:
    """folder/test.json with its images under folder/images/."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    items = []
    for n, (question, options, label, _) in TASK2.items():
        (folder / "images" / f"{n}.png").write_bytes(png_bytes(n))
        lines = "".join(f"{letter}. {option}\n" for letter, option in zip("ABCD", options))
        items.append({"image_name": f"{n}.png", "Question": f"Question:\n{question} [item {n}]",
                      "option": f"Option: \n{lines}", "answer": label})
    (folder / "test.json").write_text(json.dumps(items, indent=2), encoding="utf-8")
    return folder


def answer(messages, tools):
    """The reply scripted for the item the question names (function backend)."""
    found = ITEM.search(next(m.text for m in messages if m.role == "user"))
    reply = REPLIES.get(int(found.group(1))) if found else None
    return "I cannot decide." if reply is None else {"reasons": "scripted", "answer": reply}

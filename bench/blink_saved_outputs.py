"""BLINK's official numbers vs trompe's judge-free official scorer on the BLINK repository's saved val outputs.

Usage: python bench/blink_saved_outputs.py BLINK_Benchmark/eval/saved_outputs [N]
(a checkout of zeyofu/BLINK_Benchmark; N: print N disagreements per model). For each model the official mean
over the 14 subtasks is recomputed from the saved `prediction` fields (eval/evaluate.py: prediction == answer),
and trompe's from the raw `full_prediction` through `datasets.blink_match.match`. The saved outputs hold no
option texts: subtasks whose options are the same for every item get them below (as the BLINK prompts list
them); Counting's numbers differ per item, so it is read without.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from trompe_agents.datasets.blink_match import match

SUBTASKS = ["Visual_Similarity", "Counting", "Relative_Depth", "Jigsaw", "Art_Style", "Functional_Correspondence",
            "Semantic_Correspondence", "Spatial_Relation", "Object_Localization", "Visual_Correspondence",
            "Multi-view_Reasoning", "Relative_Reflectance", "Forensic_Detection", "IQ_Test"]
CHOICES = {"Spatial_Relation": ["yes", "no"], "Visual_Similarity": ["the second image", "the third image"],
           "Art_Style": ["the second image", "the third image"], "Jigsaw": ["the second image", "the third image"],
           "Relative_Reflectance": ["A is darker", "B is darker", "About the same"],
           "Relative_Depth": ["A is closer", "B is closer"], "Object_Localization": ["Box A", "Box B"],
           "Multi-view_Reasoning": ["left", "right"],
           "Forensic_Detection": ["the first image", "the second image", "the third image", "the fourth image"]}


def subtask_file(model: Path, task: str) -> Path | None:
    for name in (task.replace("_", " "), task):
        if (model / f"{name}.json").is_file():
            return model / f"{name}.json"
    return None


def compare(model: Path, shown: int) -> str | None:
    official: dict[str, list[bool]] = defaultdict(list)
    ours: dict[str, list[bool]] = defaultdict(list)
    rules: Counter = Counter()
    misses = []
    for task in SUBTASKS:
        path = subtask_file(model, task)
        if path is None:
            return None
        for item in json.loads(path.read_text())["val"]:
            found = match(item["full_prediction"] or "", CHOICES.get(task), None if task in CHOICES else 5)
            rules[found.rule] += 1
            official[task].append(item["prediction"] == item["answer"])
            ours[task].append(found.prediction == item["answer"])
            if found.prediction != item["prediction"]:
                misses.append((item["full_prediction"][:150], item["prediction"], found))
    mean = lambda table: 100 * sum(sum(v) / len(v) for v in table.values()) / len(SUBTASKS)  # noqa: E731
    lines = [f"{model.name:24s} official {mean(official):6.2f}  trompe {mean(ours):6.2f}  "
             f"diff {mean(ours) - mean(official):+6.2f}  rules {dict(rules.most_common(4))}"]
    lines += [f"    {m}" for m in misses[:shown]]
    return "\n".join(lines)


def main() -> None:
    root = Path(sys.argv[1])
    shown = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    for model in sorted(p for p in root.iterdir() if p.is_dir() and "*" not in p.name):
        if (line := compare(model, shown)) is not None:
            print(line)


if __name__ == "__main__":
    main()

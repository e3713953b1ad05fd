"""A discovered visual prompt as a self-contained folder a user can keep and re-apply."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runfolder import RunFolder
from .tree import Implementation, Node, Tree

CODE_FILE, PROMPT_FILE, META_FILE = "visual_prompt.py", "prompt.md", "meta.json"


@dataclass
class PromptDir:
    implementation: Implementation | None  # no code: an agent-loop prompt (SketchPad, APE); None: SketchPad's
    meta: dict[str, Any]

    def save(self, folder: RunFolder | Path) -> Path:
        """Each file replaced whole, meta.json last: a kill leaves every file either old or new, never torn; in a
        run folder (a RunFolder), nothing is written through a link."""
        folder = RunFolder.of(folder)
        if self.implementation:
            if self.implementation.code:
                folder.write_atomic(CODE_FILE, self.implementation.code)
            folder.write_atomic(PROMPT_FILE, self.implementation.prompt)
        folder.write_json(META_FILE, self.meta, indent=1)
        return folder.path

    @classmethod
    def load(cls, folder: Path) -> PromptDir:
        meta_path = folder / META_FILE
        if not meta_path.exists():
            raise FileNotFoundError(f"{folder} is not a visual-prompt folder (no {META_FILE})")
        meta = json.loads(meta_path.read_text())
        code, prompt = folder / CODE_FILE, folder / PROMPT_FILE
        impl = (Implementation(code.read_text() if code.exists() else "", prompt.read_text()) if prompt.exists()
                else None)
        return cls(impl, meta)


def from_node(tree: Tree, node: Node, run: dict[str, Any]) -> PromptDir:
    """Package one node of a run with what is needed to trust and reuse it."""
    return PromptDir(node.implementation, {
        "task": run.get("task"), "task_description": run.get("task_description"), "node": node.id,
        "idea": node.idea, "dev_accuracy": node.reward,
        "dev_size": len({r["id"] for r in node.experiment.results}) if node.experiment else 0,
        "dev_ids": run.get("dev_ids", []), "dev_content": run.get("dev_content", {}),
        "strategy": run.get("strategy"),
        "target": run.get("target"), "lineage": [n.idea for n in reversed(tree.ancestors(node.id))],
        "insights": node.experiment.insights if node.experiment else [],
    })


def resolve(path: Path, node_id: int | None = None) -> PromptDir:
    """A prompt folder as given, or the best (or chosen) node of a run folder."""
    if (path / META_FILE).exists() and node_id is None:
        return PromptDir.load(path)
    tree_file = path / "tree.json"
    if not tree_file.exists():
        raise FileNotFoundError(f"{path} is neither a run folder (tree.json) nor a prompt folder ({META_FILE})")
    tree = Tree.from_json(json.loads(tree_file.read_text()))
    run = json.loads((path / "run.json").read_text()) if (path / "run.json").exists() else {}
    if node_id is None:
        return from_node(tree, tree.best(), run)
    if node_id not in tree.nodes or not tree.nodes[node_id].executed:
        executed = ", ".join(str(n.id) for n in tree.executed())
        raise ValueError(f"--node: {node_id} is not an executed node of this run; executed: {executed}")
    return from_node(tree, tree.nodes[node_id], run)

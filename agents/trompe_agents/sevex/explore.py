"""The exploration loop: measure the root, then iterate a search strategy (strategies.py), checkpointing as it goes."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..datasets.base import Sample
from ..messages import ImagePart, Usage
from ..runfolder import RunFolder
from ..statefiles import read_json
from .evaluate import INPUT_NAMES, Runner, representatives, write_results
from .outcome import Evaluated, dev_accuracy, summary
from .roles import Costs, RoleError, Roles
from .strategies import NAIVE, choose_strategy
from .strategy import ExploreConfig, Strategy
from .tree import Experiment, Implementation, Node, SelfEval, Tree, write_json_atomic

__all__ = ["NAIVE", "ExploreConfig", "Explorer", "RunExists", "choose_dev"]


class RunExists(RuntimeError):
    """The output folder already holds a run and --resume was not given."""


class Explorer:
    """One exploration run in a folder, driven by the strategy `config.strategy` names (a `strategy.Search`):
    tree.json and state.json are rewritten after every iteration."""

    def __init__(self, out: Path, runner: Runner, roles: Roles, dev: list[Sample], config: ExploreConfig,
                 progress: bool = True, strategy: Strategy | None = None):
        self.out, self.runner, self.roles, self.dev, self.config = out, runner, roles, dev, config
        self.strategy = strategy or choose_strategy(config.strategy)
        self.progress = progress
        self.tree = Tree()
        self.history: list[dict[str, Any]] = []
        self.selections: list[dict[str, Any]] = []  # every NUCT selection: each level's candidates and terms
        self.problems: list[str] = []  # what the Ideator/Engineer failed to deliver in this iteration
        self.ideas_added = 0  # ideas the Ideator delivered in this iteration (one is enough to go on)
        self.stopped: str | None = None
        self.iteration = 0

    # checkpoints ------------------------------------------------------------
    def _checkpoint(self) -> None:
        """state.json (one atomic write) is what --resume reads; tree.json is the same tree, for people and tools."""
        tree = self.tree.to_json()
        write_json_atomic(self.out / "state.json", {"iteration": self.iteration, "history": self.history,
                                                     "selections": self.selections, "stopped": self.stopped,
                                                     "costs": self.roles.costs.to_json(), "tree": tree})
        write_json_atomic(self.out / "tree.json", tree)

    def _restore(self) -> None:
        state = read_json(self.out / "state.json")
        tree = state.get("tree") or read_json(self.out / "tree.json")
        self.tree = Tree.from_json(tree)
        self.iteration, self.history = state["iteration"], state["history"]
        self.selections = state.get("selections", [])
        self.roles.costs = Costs.from_json(state["costs"])

    # the loop ----------------------------------------------------------------
    async def run(self, resume: bool = False) -> Node:
        """Explore until `iterations` are done; returns the best node."""
        self.out.mkdir(parents=True, exist_ok=True)
        if (self.out / "state.json").exists():
            if not resume:
                raise RunExists(f"{self.out} already holds a run; pass --resume to continue it or choose "
                                "another --out")
            self._restore()
        else:
            await self._start()
        total = self.strategy.iterations(self.config)
        bar = tqdm(total=total, initial=self.iteration, desc="sevex", unit="it", disable=not self.progress)
        while self.iteration < total:
            self.iteration += 1
            self.roles.iteration = self.iteration
            self.problems, self.ideas_added = [], 0
            self._note(await self.strategy.step(self))
            self._stop_if_unusable()
            self._checkpoint()
            bar.update(1)
            bar.set_postfix(best=f"{self.tree.best().reward:.3f}", tokens=self.roles.costs.exploration_total())
            if self.stopped:
                tqdm.write(f"sevex: stopped: {self.stopped}", file=sys.stderr)
                break
        bar.close()
        return self.tree.best()

    async def _start(self) -> None:
        """Iteration 0: measure the strategy's root and let it grow what the first iteration chooses from."""
        idea, implementation = self.strategy.root(self.runner)
        root = self.tree.add(None, idea, SelfEval(5, 5, 10))
        root.visits = 1
        root.implementation = implementation
        self.record(root, await self.measure(root.implementation))
        await self.strategy.start(self, root)
        self._note(root)
        self._checkpoint()

    def _note(self, node: Node | None) -> None:
        """One history line per iteration, written after all its work so its token count is complete; an
        iteration whose Ideator or Engineer delivered nothing usable gets a warning line."""
        problems = [p for p in self.problems if not (p.startswith("ideator") and self.ideas_added)]
        unusable = "; ".join(problems) or None
        if unusable:
            tqdm.write(f"sevex: warning: iteration {self.iteration}: {unusable}", file=sys.stderr)
        self.history.append({"iteration": self.iteration, "node": node.id if node else None,
                             "reward": node.reward if node else None, "best": self.tree.best().reward,
                             "exploration_tokens": self.roles.costs.exploration_total(), "time": time.time(),
                             "unusable": unusable})

    def _stop_if_unusable(self) -> None:
        """Stop after `max_unusable` unusable iterations in a row: the explorer model is not delivering."""
        streak = 0
        for entry in reversed(self.history):
            if not entry.get("unusable"):
                break
            streak += 1
        if self.config.max_unusable and streak >= self.config.max_unusable:
            self.stopped = (f"{streak} iterations in a row produced nothing usable (--max-unusable "
                            f"{self.config.max_unusable}); last: {self.history[-1]['unusable']}")

    async def measure(self, impl: Implementation) -> list[list[Evaluated]]:
        """`repeats` runs of a visual prompt on the dev set."""
        return [await self.runner.evaluate(impl, self.dev) for _ in range(self.config.repeats)]

    async def implement(self, node: Node) -> Implementation:
        """The Engineer's visual prompt for the node's idea (with --no-abstract: a variation of its parent's)."""
        task = self.runner.task
        idea = node.idea
        if not self.config.abstract:
            parent = self.tree.nodes[node.parent].implementation or NAIVE
            idea = ("Write a variation of this visual prompt that should score higher.\n"
                    f"Code:\n{parent.code}\nPrompt: {parent.prompt}")
        names = INPUT_NAMES[:max(len(s.images) for s in self.dev)]
        return await self.roles.implement(task=task.description, idea=idea, insights=self._insights(node),
                                          tools=self.runner.tool_doc, image_names=names,
                                          answer_format=task.answer_format)

    def record(self, node: Node, runs: list[list[Evaluated]]) -> None:
        """The node's reward is the mean accuracy of its runs; results.jsonl (results_run2.jsonl, ...) per run."""
        folder = RunFolder(self.out) / "nodes" / str(node.id)  # opened without following links (runfolder.py)
        accuracies = [dev_accuracy(e.result for e in run) for run in runs]
        results = [summary(e.result) | ({"run": r + 1} if len(runs) > 1 else {}) for r, run in enumerate(runs)
                   for e in run]
        node.experiment = Experiment(sum(accuracies) / len(accuracies), results, representatives(runs, folder),
                                     runs=accuracies)
        node.iteration = self.iteration
        for r, run in enumerate(runs):
            write_results(folder, "results.jsonl" if r == 0 else f"results_run{r + 1}.jsonl",
                          [e.result for e in run])
        usage = sum((e.result.usage for run in runs for e in run), Usage())
        self.roles.costs.add("target", "execution", self.iteration, usage)

    async def analyse(self, node: Node) -> None:
        """Semantic back-propagation: insights go to the node and (unless disabled) every ancestor."""
        exp = node.experiment
        images = [ImagePart(Path(p).stem, Path(p).read_bytes()) for p in exp.images]
        try:
            exp.analysis, exp.insights = await self.roles.analyse(
                task=self.runner.task.description, idea=node.idea, impl=node.implementation,
                accuracy=exp.reward, results=node.outcomes(), images=images)
        except RoleError as exc:
            exp.analysis = f"analysis failed: {exc}"
            return
        if self.config.backprop:
            tagged = [f"[node {node.id}, acc {exp.reward:.2f}] {i}" for i in exp.insights]
            for ancestor in self.tree.ancestors(node.id):
                ancestor.received_insights.extend(tagged)

    def _insights(self, node: Node) -> str:
        """What the ideator/engineer should know at this node: its own and its ancestors' lessons."""
        chain = [node, *self.tree.ancestors(node.id)]
        if not self.config.backprop:
            chain = chain[:2]
        lessons: list[str] = []
        for n in chain:
            if n.experiment:
                lessons += [f"[node {n.id}, acc {n.reward:.2f}] {i}" for i in n.experiment.insights]
            if self.config.backprop:
                lessons += n.received_insights
        unique = list(dict.fromkeys(lessons))
        return "\n".join(f"- {line}" for line in unique[-self.config.max_insights:]) or "(none yet)"

    def _lineage(self, node: Node) -> str:
        chain = [*reversed(self.tree.ancestors(node.id)), node]
        return "\n".join(f"{'  ' * depth}- {n.idea}" + (f" (dev accuracy {n.reward:.2f})" if n.executed else "")
                         for depth, n in enumerate(chain))

    async def expand(self, node: Node, children: int) -> None:
        """Give `node` new child ideas (refinements of it)."""
        await self._new_ideas(node, children, "refinements that specialise or fix the current idea (children)")

    async def replace(self, node: Node) -> None:
        """The parent lost an unexecuted child to execution: add a sibling so it keeps k of them."""
        if node.parent is not None:
            await self._new_ideas(self.tree.nodes[node.parent], 1,
                                  "an alternative direction at the same level of abstraction (sibling)")

    async def _new_ideas(self, parent: Node, count: int, kind: str) -> None:
        if not self.config.abstract:
            for _ in range(count):
                self.tree.add(parent.id, f"code variation of node {parent.id}", SelfEval(5, 5, 10))
            return
        siblings = [c.idea for c in self.tree.children(parent.id)]
        try:
            ideas = await self.roles.ideas(task=self.runner.task.description, lineage=self._lineage(parent),
                                           insights=self._insights(parent), siblings=siblings,
                                           tools=self.runner.tool_doc, count=count, kind=kind)
        except RoleError as exc:
            self.problems.append(str(exc))
            return
        if count and not ideas:
            self.problems.append(f"ideator: no feasible new idea for node {parent.id}")
        self.ideas_added += len(ideas)
        for idea, evaluation in ideas:
            self.tree.add(parent.id, idea, evaluation)


def choose_dev(samples: list[Sample], size: int, seed: int) -> list[Sample]:
    """The development set: `size` samples drawn with a fixed seed (all of them when fewer)."""
    if len(samples) <= size:
        return list(samples)
    chosen = set(random.Random(seed).sample(range(len(samples)), size))
    return [s for i, s in enumerate(samples) if i in chosen]

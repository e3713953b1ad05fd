"""The built-in search strategies (the SEVEX paper's method and its baselines), registered as a plugin's are.

- `sevex`: novelty-guided UCT over a tree of ideas (nuct.py), or one chain of them with --no-tree;
- `naive`: the question asked directly with the unmodified image(s);
- `sketchpad`: the target uses the tools itself through the agent loop (SketchPad's few-shot prompt);
- `ape`: SketchPad's system prompt rewritten from the best prompt's failures (Automatic Prompt Engineer).
"""

from __future__ import annotations

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from .evaluate import Runner
from .nuct import select_recorded
from .outcome import broke
from .roles import RoleError
from .strategy import ExploreConfig, Search, Strategy
from .tree import Experiment, Implementation, Node, SelfEval

NAIVE = Implementation(
    code="def main(images, question):\n    return ask_lvlm(images, PROMPT.replace('{question}', question))\n",
    prompt="{question}")
ROOT_IDEA = "Ask the question directly with the unmodified image(s) (the naive baseline)."
SKETCHPAD_IDEA = "SketchPad baseline: the target uses the tools itself through the agent loop (few-shot prompt)."


class Naive:
    """The plain question, measured once: the baseline every idea is compared with."""

    explorer_at_start = False  # start() asks the explorer nothing (uses_explorer)

    def root(self, runner: Runner) -> tuple[str, Implementation]:
        return ROOT_IDEA, NAIVE

    def iterations(self, config: ExploreConfig) -> int:
        return 0

    async def start(self, search: Search, root: Node) -> None:
        return None

    async def step(self, search: Search) -> Node | None:
        return None  # never asked: no iterations


class SketchPad(Naive):
    """SketchPad's agent-loop prompt, measured once."""

    def root(self, runner: Runner) -> tuple[str, Implementation]:
        return SKETCHPAD_IDEA, Implementation("", runner.sketchpad_system())


class APE(SketchPad):
    """SketchPad+APE: rewrite the agent's system prompt (SketchPad's at first) from the best prompt's failures,
    then resample variations of the best so far; each candidate runs through the agent loop on the dev set."""

    def iterations(self, config: ExploreConfig) -> int:
        return config.iterations

    async def step(self, search: Search) -> Node | None:
        tree = search.tree
        best = tree.best()
        questions = {s.id: s.question for s in search.dev}
        wrong = {o.id: o for o in best.outcomes() if not o.right}  # once per sample, not per run
        failures = [f"{questions.get(i, i)!r}: answered {o.answer!r}, correct {o.label!r}"
                    for i, o in wrong.items()][:10]
        tried = [f"{' '.join(n.implementation.prompt.split())[:200]!r}... (accuracy {n.reward:.2f})"
                 for n in tree.executed() if n.implementation]
        try:
            prompts = await search.roles.better_prompts(task=search.runner.task.description,
                                                        prompt=best.implementation.prompt, accuracy=best.reward,
                                                        failures=failures, tried=tried, count=1,
                                                        resample=len(tree.executed()) > 1)
        except RoleError as exc:
            search.problems.append(str(exc))
            return None
        node = tree.add(best.id, f"prompt rewrite: {' '.join(prompts[0].split())[:80]}", SelfEval(5, 5, 10))
        node.visits = 1
        node.implementation = Implementation("", prompts[0])
        search.record(node, await search.measure(node.implementation))
        return node


class SEVEX(Naive):
    """The paper's search: select an idea by NUCT, implement and execute it, back-propagate its insights, expand."""

    explorer_at_start = True  # the root's first ideas come from the explorer, even with --iterations 0

    def iterations(self, config: ExploreConfig) -> int:
        return config.iterations

    async def start(self, search: Search, root: Node) -> None:
        await search.expand(root, children=search.config.k)

    def select(self, search: Search) -> list[Node]:
        """The path from the root to the node to work on: by NUCT (recorded), or along the chain with --no-tree."""
        if not search.config.tree:
            return chain(search)
        path, levels = select_recorded(search.tree, search.config.nuct)
        search.selections.append({"iteration": search.iteration, "path": [n.id for n in path], "levels": levels})
        return path

    async def step(self, search: Search) -> Node | None:
        path = self.select(search)
        node = path[-1]
        for visited in path:
            visited.visits += 1
        if node.executed:  # an executed leaf (its ideas never came, or it failed): grow ideas below it
            await search.expand(node, children=search.config.k)
            return None
        try:
            node.implementation = await search.implement(node)
        except RoleError as exc:
            search.problems.append(str(exc))
            node.experiment = Experiment(0.0, [], failure=str(exc))
            node.iteration = search.iteration
            await search.replace(node)
            return node
        runs = await search.measure(node.implementation)
        search.record(node, runs)
        if all(broke(e.result) for run in runs for e in run):
            kinds = sorted({str(e.result.failure) for run in runs for e in run})
            search.problems.append(f"engineer: the program failed on every dev sample ({', '.join(kinds)})")
        await search.analyse(node)
        await search.replace(node)
        await search.expand(node, children=search.config.k)
        return node


def chain(search: Search) -> list[Node]:
    """--no-tree: always continue from the most recently executed node."""
    tree = search.tree
    last = max(tree.executed(), key=lambda n: (n.iteration, n.id))
    path = [*reversed(tree.ancestors(last.id)), last]
    pending = [c for c in tree.children(last.id) if not c.executed]
    return path + pending[:1] if pending else path


@hookimpl
def register_strategies(register):
    """The paper's method and its three baselines; each factory() returns a Strategy."""
    register("sevex", SEVEX)
    register("naive", Naive)
    register("sketchpad", SketchPad)
    register("ape", APE)


def _strategies() -> dict:
    return dict(default_plugins().registry("register_strategies", "strategy"))


def strategy_names() -> list[str]:
    """`--strategy` choices: the built-ins and every strategy the installed plugins register."""
    return list(_strategies())


def uses_explorer(strategy: Strategy, config: ExploreConfig) -> bool:
    """Whether a run asks the explorer model anything: not a baseline measured once (naive or sketchpad with 0
    iterations), which then needs no explorer key. A plugin's strategy that does not say is taken to ask."""
    return strategy.iterations(config) > 0 or getattr(strategy, "explorer_at_start", True)


def choose_strategy(name: str) -> Strategy:
    """The strategy registered under `name`; an unknown name is refused listing the known ones."""
    strategies = _strategies()
    if name not in strategies:
        raise ValueError(f"--strategy: expected one of {', '.join(strategies)}, got {name!r}")
    return strategies[name]()

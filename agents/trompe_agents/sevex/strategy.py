"""The search-strategy contract: what a strategy decides (where the tree starts, what each iteration tries) and
what of the exploration run it may use to do it (`Search`, which `explore.Explorer` is).

The built-in strategies are in strategies.py; a plugin adds one through the `register_strategies` hook, and
`sevex explore --strategy NAME` picks it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ..datasets.base import Sample
from .evaluate import Runner
from .nuct import NUCTParams
from .outcome import Evaluated
from .roles import Roles
from .tree import Implementation, Node, Tree


@dataclass
class ExploreConfig:
    """Search settings; the defaults are the paper's."""

    iterations: int = 50
    k: int = 3  # unexecuted children kept per executed node
    nuct: NUCTParams = field(default_factory=NUCTParams)
    strategy: str = "sevex"  # by name, from strategies.strategy_names()
    tree: bool = True  # False: --no-tree, refine one chain of ideas
    backprop: bool = True  # False: --no-backprop, insights stay on the node that produced them
    abstract: bool = True  # False: --no-abstract, the engineer varies code without an idea layer
    max_insights: int = 12
    repeats: int = 1  # dev-set runs per node; the reward is their mean accuracy (the paper's Figure 5 averages)
    max_unusable: int = 3  # stop after this many iterations in a row with nothing usable (0: never)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExploreConfig:
        return cls(**(data | {"nuct": NUCTParams(**data["nuct"])}))


class Search(Protocol):
    """The exploration run a strategy drives: its tree and settings, and the steps every strategy shares."""

    tree: Tree
    config: ExploreConfig
    runner: Runner
    roles: Roles
    dev: list[Sample]
    iteration: int
    problems: list[str]  # what a role failed to deliver in this iteration (one warning line)
    selections: list[dict[str, Any]]  # every recorded selection: each level's candidates and terms

    async def measure(self, impl: Implementation) -> list[list[Evaluated]]:
        """`repeats` runs of a visual prompt on the dev set."""
        ...

    def record(self, node: Node, runs: list[list[Evaluated]]) -> None:
        """Score the node by its runs and write their results."""
        ...

    async def implement(self, node: Node) -> Implementation:
        """The Engineer's visual prompt for the node's idea."""
        ...

    async def analyse(self, node: Node) -> None:
        """The Analyst's insights on an executed node, back-propagated to its ancestors."""
        ...

    async def expand(self, node: Node, children: int) -> None:
        """New child ideas under the node."""
        ...

    async def replace(self, node: Node) -> None:
        """A sibling idea for a node that was just executed, so its parent keeps k unexecuted children."""
        ...


class Strategy(Protocol):
    """One way to search for a visual prompt; the Explorer measures, records and checkpoints what it picks."""

    def root(self, runner: Runner) -> tuple[str, Implementation]:
        """The root node's idea and visual prompt, measured before the first iteration."""
        ...

    def iterations(self, config: ExploreConfig) -> int:
        """How many iterations follow the root (0 for a baseline that only measures it)."""
        ...

    async def start(self, search: Search, root: Node) -> None:
        """After the root is measured: grow what the first iteration chooses from."""
        ...

    async def step(self, search: Search) -> Node | None:
        """One iteration; returns the node it executed (None when it only grew ideas)."""
        ...

"""The exploration tree: ideas, their implementations, experiments and back-propagated insights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..statefiles import write_json_atomic  # noqa: F401 -- checkpoints are written through the shared helper
from ..records import SampleResult
from .outcome import from_line


@dataclass
class SelfEval:
    """The ideator's own 1-10 ratings of an idea before it is tried."""

    gain: float
    novelty: float
    feasibility: float


@dataclass
class Implementation:
    """A visual prompt: Python code against the visual-tool API plus the text prompt it sends."""

    code: str
    prompt: str


@dataclass
class Experiment:
    """What running a visual prompt on the development set showed."""

    reward: float  # dev accuracy in [0, 1]
    results: list[dict[str, Any]]  # per sample: id, prediction, answer, correct, error, tokens
    images: list[str] = field(default_factory=list)  # representative images passed to the LVLM (paths)
    analysis: str = ""
    insights: list[str] = field(default_factory=list)
    failure: str | None = None  # why the whole node failed (engineer, sandbox), if it did
    runs: list[float] = field(default_factory=list)  # the accuracy of each dev-set run (--repeats); reward = mean


@dataclass
class Node:
    id: int
    parent: int | None
    idea: str
    self_eval: SelfEval
    implementation: Implementation | None = None
    experiment: Experiment | None = None
    received_insights: list[str] = field(default_factory=list)  # from descendants (semantic back-propagation)
    visits: int = 0
    children: list[int] = field(default_factory=list)
    iteration: int = 0  # when it was executed (0 for the root)

    @property
    def executed(self) -> bool:
        return self.experiment is not None

    @property
    def reward(self) -> float:
        return self.experiment.reward if self.experiment else 0.0

    def outcomes(self) -> list[SampleResult]:
        """Its experiment's per-sample results, read as a program's (code ran) or as the agent loop's lines."""
        program = bool(self.implementation and self.implementation.code)
        return [from_line(r, program=program) for r in self.experiment.results] if self.experiment else []


@dataclass
class Tree:
    """Nodes by id; node 0 is the root, the plain-question strategy every idea is measured against."""

    nodes: dict[int, Node] = field(default_factory=dict)

    def add(self, parent: int | None, idea: str, self_eval: SelfEval) -> Node:
        node = Node(len(self.nodes), parent, idea, self_eval)
        self.nodes[node.id] = node
        if parent is not None:
            self.nodes[parent].children.append(node.id)
        return node

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def children(self, node_id: int) -> list[Node]:
        return [self.nodes[c] for c in self.nodes[node_id].children]

    def ancestors(self, node_id: int) -> list[Node]:
        """From the parent up to the root."""
        chain, parent = [], self.nodes[node_id].parent
        while parent is not None:
            chain.append(self.nodes[parent])
            parent = self.nodes[parent].parent
        return chain

    def r_max(self, node_id: int) -> float:
        """Best reward of the node or any executed descendant (R^max of NUCT); 0 when none ran (rewards are >= 0,
        so a subtree with nothing executed never raises the maximum)."""
        node = self.nodes[node_id]
        own = [node.reward] if node.executed else []
        return max(own + [self.r_max(c) for c in node.children], default=0.0)

    def executed(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.executed]

    def best(self) -> Node:
        """The executed node with the highest dev reward (earliest on ties)."""
        return max(self.executed(), key=lambda n: (n.reward, -n.iteration, -n.id))

    def to_json(self) -> dict[str, Any]:
        return {"nodes": [asdict(n) for n in self.nodes.values()]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tree:
        tree = cls()
        for raw in data["nodes"]:
            raw = dict(raw)
            raw["self_eval"] = SelfEval(**raw["self_eval"])
            if raw.get("implementation"):
                raw["implementation"] = Implementation(**raw["implementation"])
            if raw.get("experiment"):
                raw["experiment"] = Experiment(**raw["experiment"])
            node = Node(**raw)
            tree.nodes[node.id] = node
        return tree

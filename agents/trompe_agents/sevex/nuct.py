"""Novelty-guided UCT (the SEVEX paper's equations 1 and 2): which idea to try next, with every term recorded."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .tree import Node, Tree

PAPER_GAIN_SCALE = 1.0  # eq. 2 as printed: s_gain is the normalised [0, 1] rating, added as is


@dataclass(frozen=True)
class NUCTParams:
    lambda_expl: float = 0.5
    lambda_novel: float = 0.15
    lambda_sat: float = 0.5
    gain_scale: float = PAPER_GAIN_SCALE  # 0.2: a 10/10 expected gain counts as +0.2 accuracy, as rewards move


def normalise_rating(raw: float) -> float:
    """A 1-10 self-evaluation rating mapped onto [0, 1]."""
    return min(max((raw - 1.0) / 9.0, 0.0), 1.0)


@dataclass
class Priority:
    """P_i of one candidate and the terms it adds up, so a reader can redo a selection by hand."""

    node: int
    executed: bool
    priority: float  # math.inf for the children of a parent none of whose children ran yet
    terms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON has no infinity: an unbounded priority is written as the string "inf"."""
        return {"node": self.node, "executed": self.executed, "priority": _finite(self.priority),
                "terms": {k: _finite(v) for k, v in self.terms.items()}}


def _finite(value: float) -> float | str:
    return "inf" if value == math.inf else round(value, 6)


def breakdown(tree: Tree, node: Node, params: NUCTParams) -> Priority:
    """Eq. (1) for executed nodes, eq. (2) for unexecuted ones, term by term."""
    parent = tree.nodes[node.parent]
    n_parent = max(parent.visits, 1)
    if node.executed and node.visits > 0:
        r_max, explore = tree.r_max(node.id), params.lambda_expl * math.sqrt(math.log(n_parent) / node.visits)
        return Priority(node.id, True, (r_max - parent.reward) + explore, {
            "r_max": r_max, "parent_reward": parent.reward, "n_parent": n_parent, "visits": node.visits,
            "exploration": explore})
    executed_siblings = sum(1 for c in tree.children(parent.id) if c.executed)
    gain = params.gain_scale * normalise_rating(node.self_eval.gain)
    novelty = params.lambda_novel * normalise_rating(node.self_eval.novelty)
    saturation = (math.inf if executed_siblings == 0
                  else params.lambda_sat * math.sqrt(math.log(n_parent) / executed_siblings))
    return Priority(node.id, False, gain + novelty + saturation, {
        "gain_rating": node.self_eval.gain, "gain": gain, "novelty_rating": node.self_eval.novelty,
        "novelty": novelty, "n_parent": n_parent, "executed_siblings": executed_siblings,
        "saturation": saturation})


def priority(tree: Tree, node: Node, params: NUCTParams) -> float:
    """P_i: eq. (1) for executed nodes, eq. (2) for unexecuted ones."""
    return breakdown(tree, node, params).priority


def select(tree: Tree, params: NUCTParams) -> list[Node]:
    """Descend from the root by highest priority until an unexecuted node; returns the path taken."""
    return select_recorded(tree, params)[0]


def select_recorded(tree: Tree, params: NUCTParams) -> tuple[list[Node], list[dict[str, Any]]]:
    """As select, plus one record per level: the parent, every child's priority and terms, the one chosen."""
    path, levels = [tree.root], []
    while path[-1].executed:
        children = tree.children(path[-1].id)
        if not children:
            break
        ranked = sorted((breakdown(tree, c, params) for c in children), key=_rank)
        chosen = tree.nodes[ranked[0].node]
        levels.append({"parent": path[-1].id, "chosen": chosen.id, "candidates": [p.to_json() for p in ranked]})
        path.append(chosen)
    return path, levels


def _rank(p: Priority) -> tuple[float, float, int]:
    """Highest priority first; among equal ones (two unbounded) the larger finite part, then the older node."""
    finite = p.priority if p.executed else p.terms["gain"] + p.terms["novelty"]
    return (-p.priority, -finite, p.node)

"""Novelty-guided UCT (the SEVEX paper's equations 1 and 2): which idea to try next."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .tree import Node, Tree


@dataclass(frozen=True)
class NUCTParams:
    lambda_expl: float = 0.5
    lambda_novel: float = 0.15
    lambda_sat: float = 0.5
    gain_scale: float = 0.2  # a 10/10 expected-gain rating counts as +0.2 accuracy, the scale of rewards


def normalise_rating(raw: float) -> float:
    """A 1-10 self-evaluation rating mapped onto [0, 1]."""
    return min(max((raw - 1.0) / 9.0, 0.0), 1.0)


def priority(tree: Tree, node: Node, params: NUCTParams) -> float:
    """P_i: eq. (1) for executed nodes, eq. (2) for unexecuted ones."""
    parent = tree.nodes[node.parent]
    n_parent = max(parent.visits, 1)
    if node.executed and node.visits > 0:
        return (tree.r_max(node.id) - parent.reward) + params.lambda_expl * math.sqrt(
            math.log(n_parent) / node.visits)
    executed_siblings = sum(1 for c in tree.children(parent.id) if c.executed)
    if executed_siblings == 0:
        return _prior(node, params) + math.inf  # an untried parent's children come first, ranked by the rest
    return _prior(node, params) + params.lambda_sat * math.sqrt(math.log(n_parent) / executed_siblings)


def _prior(node: Node, params: NUCTParams) -> float:
    """Expected gain plus novelty bonus from the ideator's self-evaluation (eq. 2 before saturation)."""
    return (params.gain_scale * normalise_rating(node.self_eval.gain)
            + params.lambda_novel * normalise_rating(node.self_eval.novelty))


def select(tree: Tree, params: NUCTParams) -> list[Node]:
    """Descend from the root by highest priority until an unexecuted node; returns the path taken."""
    path = [tree.root]
    while path[-1].executed:
        children = tree.children(path[-1].id)
        if not children:
            break
        path.append(max(children, key=lambda c: _rank(tree, c, params)))
    return path


def _rank(tree: Tree, node: Node, params: NUCTParams) -> tuple[float, float, int]:
    """Priority, then the finite part for ties at infinity, then the older node first."""
    return (priority(tree, node, params), _prior(node, params), -node.id)

"""Matching patterns against the op graph.

A match is rooted at one op node and absorbs the op nodes its op patterns matched. It is
kept only when it can become a function on its own: every absorbed op but the root is used
only inside the match, and every ``call_tir`` it touches has all its ops inside the match
(a fused PrimFunc cannot be split). Alternatives are tried in order with backtracking.
"""
from __future__ import annotations

from functools import singledispatch
from typing import Iterator

import attrs

from tir.node import Map

from .graph import Leaf, NodeOut, OpGraph
from .pattern import Alt, LeafPattern, Named, OpPattern, Wildcard


@attrs.frozen
class Match:
    """One place where a pattern matched."""

    pattern: str
    """The pattern's name (becomes the ``Composite`` attribute)."""
    root: int
    nodes: frozenset
    """Indices of the op nodes absorbed."""
    captures: Map = Map()
    """Named captures: name -> source (Leaf, NodeOut or Opaque)."""


@attrs.frozen
class _State:
    nodes: frozenset
    captures: tuple


@attrs.frozen
class _Ctx:
    graph: OpGraph
    claimed: frozenset


@singledispatch
def _match(pat, src, st: _State, ctx: _Ctx) -> Iterator[_State]:
    raise TypeError(f"not a pattern: {type(pat).__name__}")


@_match.register
def _(pat: Wildcard, src, st, ctx):
    yield st


@_match.register
def _(pat: LeafPattern, src, st, ctx):
    if isinstance(src, Leaf) and src.kind in pat.kinds:
        yield st


@_match.register
def _(pat: Alt, src, st, ctx):
    yield from _match(pat.left, src, st, ctx)
    yield from _match(pat.right, src, st, ctx)


@_match.register
def _(pat: Named, src, st, ctx):
    for got in _match(pat.pattern, src, st, ctx):
        caps = dict(got.captures)
        if pat.name in caps and caps[pat.name] != src:
            continue
        caps[pat.name] = src
        yield _State(got.nodes, tuple(caps.items()))


@_match.register
def _(pat: OpPattern, src, st, ctx):
    if not isinstance(src, NodeOut) or src.node in ctx.claimed:
        return
    node = ctx.graph.nodes[src.node]
    if not pat.accepts(node.info):
        return
    here = _State(st.nodes | {src.node}, st.captures)
    if pat.args is None:
        yield here
        return
    if len(pat.args) != len(node.args):
        return
    yield from _match_args(pat.args, node.args, here, ctx)


def _match_args(pats, srcs, st, ctx):
    if not pats:
        yield st
        return
    for got in _match(pats[0], srcs[0], st, ctx):
        yield from _match_args(pats[1:], srcs[1:], got, ctx)


def _self_contained(graph: OpGraph, root: int, nodes: frozenset) -> bool:
    """Inner ops are used only inside; touched calls lie wholly inside."""
    for n in nodes:
        if n == root:
            continue
        if n in graph.external_uses or not set(graph.users[n]) <= nodes:
            return False
    bindings = {graph.nodes[n].binding for n in nodes}
    return all(set(graph.binding_nodes[b]) <= nodes for b in bindings)


def match(graph: OpGraph, pattern, root: int, name: str = "", claimed=frozenset()) -> "Match | None":
    """The first match of ``pattern`` rooted at op node ``root``, or None."""
    ctx = _Ctx(graph, frozenset(claimed))
    for st in _match(pattern, NodeOut(root), _State(frozenset(), ()), ctx):
        if root in st.nodes and _self_contained(graph, root, st.nodes):
            return Match(name, root, st.nodes, Map(st.captures))
    return None


def find_matches(graph: OpGraph, patterns) -> list:
    """Non-overlapping matches of ``[(name, pattern), ...]``, earlier patterns first.

    Each pattern is tried at every op node from the last to the first, so a chain is
    absorbed from its end (the longest match wins over its prefixes).
    """
    claimed: set = set()
    found = []
    for name, pat in patterns:
        for root in reversed(range(len(graph.nodes))):
            if root in claimed:
                continue
            m = match(graph, pat, root, name, claimed)
            if m is not None:
                found.append(m)
                claimed |= m.nodes
    return found

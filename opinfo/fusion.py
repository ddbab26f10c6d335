"""Whether a sequence of ops could be *one* function made by TVM's FuseOps.

A PrimFunc that decomposes into several ops is a fused kernel only if Relax's FuseOps
(src/relax/transform/fuse_ops.cc, which runs relay's GraphPartitioner) could have put
exactly those ops in one group. Otherwise the PrimFunc is one op that opinfo does not know
(attention holds two matmuls and a softmax; std is a variance and a sqrt only if TVM
would fuse them, which it would) and recovery must abstain.

This module replays the partitioner on the small graph of the recovered ops: function
parameters are opaque external nodes, every op is a node of its TVM pattern kind, and an
edge carries its consumer's kind. A post-dominator tree (least common ancestors of each
node's consumers, with the combined edge kind) decides where each node may go:

* phase 0: an ``out_ewise_fusable`` op (conv, matmul, pooling, softmax, norms) joins its
  post-dominator when every edge on the way is ``elemwise`` and every op on the way is at
  most ``broadcast``; an ``elemwise``/``broadcast`` op joins its post-dominator when the
  combined edge kind is at most ``injective`` or is ``comm_reduce``, through ops at most
  ``injective``, into a group of any kind but opaque;
* phase 1: the same for ``elemwise``/``broadcast`` ops, and an ``injective`` op joins its
  post-dominator when every op on the way, the group it joins included, is at most
  ``injective``;
* a ``comm_reduce`` op never joins a consumer; a group holds at most one
  ``out_ewise_fusable`` op, and merging it with a ``comm_reduce`` group is an error in TVM
  (so such a group never exists).

Phase 2 only fuses into tuples, which a PrimFunc's op graph does not have.
"""
from __future__ import annotations

import attrs

from .kind import BROADCAST, COMM_REDUCE, ELEMWISE, INJECTIVE, OPAQUE, OUT_EWISE_FUSABLE


@attrs.frozen
class FuseNode:
    """A node of the op graph: a parameter (``external``) or an op of pattern ``kind``."""

    kind: int
    inputs: tuple = attrs.field(default=(), converter=tuple)
    """Indices of the nodes it reads (all earlier in the list)."""
    external: bool = False


class _Unfusable(Exception):
    """TVM would stop with an error: two complex groups (e.g. a conv and a reduction) merged."""


class _Group:
    """A union-find group: the pattern of its root and whether it holds an anchor op."""

    def __init__(self, kind: int):
        self.pattern = kind
        self.anchor = kind == OUT_EWISE_FUSABLE
        self.parent = None

    def root(self) -> "_Group":
        g = self
        while g.parent is not None:
            g = g.parent
        return g


def one_group(nodes: list) -> bool:
    """Whether FuseOps puts every op (non-external node) of ``nodes`` in one group."""
    return _Partitioner(nodes).run()


class _Partitioner:
    """Relay's GraphPartitioner, phases 0 and 1, on a list of nodes in dataflow order."""

    def __init__(self, nodes: list):
        self.nodes = nodes
        self.outs = [[] for _ in nodes]
        for j, node in enumerate(nodes):
            for i in node.inputs:
                self.outs[i].append(j)
        self.parent, self.depth, self.edge = _post_dominators(nodes, self.outs)
        self.groups = [_Group(OPAQUE if n.external else n.kind) for n in nodes]

    def run(self) -> bool:
        try:
            for phase in (0, 1):
                for nid in range(len(self.nodes)):
                    self._fuse(nid, phase)
        except _Unfusable:
            return False
        roots = {id(self.groups[i].root()) for i, n in enumerate(self.nodes) if not n.external}
        return len(roots) == 1

    def _fuse(self, nid: int, phase: int) -> None:
        group, dom = self.groups[nid], self.parent[nid]
        if group.pattern == OPAQUE or dom is None or group.root() is self.groups[dom].root():
            return
        edge = self.edge[nid]
        if group.pattern == OUT_EWISE_FUSABLE:
            if phase == 0 and edge == ELEMWISE and self._path_ok(nid, dom, lambda k, sink: k <= BROADCAST):
                self._commit(nid, dom)
        elif group.pattern <= BROADCAST:
            if (edge <= INJECTIVE or edge == COMM_REDUCE) and self._path_ok(nid, dom, _into_anything):
                self._commit(nid, dom)
        elif group.pattern == INJECTIVE:
            if phase == 1 and self._path_ok(nid, dom, lambda k, sink: k <= INJECTIVE):
                self._commit(nid, dom)

    def _path_ok(self, src: int, sink: int, cond) -> bool:
        """``cond(root pattern, is_sink)`` for every node on every path from ``src`` to ``sink``."""
        seen: set = set()
        stack = list(self.outs[src])
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if not cond(self.groups[n].root().pattern, n == sink):
                return False
            if n != sink:
                stack.extend(self.outs[n])
        return True

    def _commit(self, src: int, sink: int) -> None:
        """Merge every node on the paths from ``src`` (included) to ``sink`` into its group."""
        target, seen, stack = self.groups[sink], set(), [src]
        while stack:
            n = stack.pop()
            if n == sink or n in seen:
                continue
            seen.add(n)
            _merge(self.groups[n], target)
            stack.extend(self.outs[n])


def _into_anything(kind: int, is_sink: bool) -> bool:
    """An elemwise/broadcast op's path: injective on the way, any non-opaque group at the end."""
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= OUT_EWISE_FUSABLE


def _merge(child: _Group, parent: _Group) -> None:
    child, parent = child.root(), parent.root()
    if child is parent:
        return
    child.parent = parent
    if not child.anchor:
        return
    if parent.anchor or (child.pattern > BROADCAST and parent.pattern > BROADCAST):
        raise _Unfusable()
    parent.anchor = True
    parent.pattern = max(child.pattern, parent.pattern)


def _post_dominators(nodes: list, outs: list) -> tuple:
    """(immediate post-dominator, depth, combined edge kind to it) of every node."""
    n = len(nodes)
    parent, depth, edge = [None] * n, [1] * n, [OPAQUE] * n
    for i in reversed(range(n)):
        if nodes[i].external:
            continue
        p, kind = _lca_of(outs[i], nodes, parent, depth, edge)
        parent[i], edge[i] = p, kind
        depth[i] = depth[p] + 1 if p is not None else 1
    return parent, depth, edge


def _lca_of(consumers: list, nodes, parent, depth, edge) -> tuple:
    """The least common post-dominator of ``consumers`` and the kinds met on the way."""
    kind, found = ELEMWISE, None
    for k, c in enumerate(consumers):
        if k == 0:
            found = c
        else:
            found, kind = _lca(found, c, kind, parent, depth, edge)
        kind = max(kind, nodes[c].kind)
    return found, kind


def _lca(a, b, kind, parent, depth, edge) -> tuple:
    while a != b:
        if a is None or b is None:
            return None, kind
        if depth[a] < depth[b]:
            kind, b = max(kind, edge[b]), parent[b]
        elif depth[b] < depth[a]:
            kind, a = max(kind, edge[a]), parent[a]
        else:
            kind = max(kind, edge[a], edge[b])
            a, b = parent[a], parent[b]
    return a, kind

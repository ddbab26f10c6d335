"""Undo ``rfactor`` of a reduction with several accumulators (argmax/argmin, the sum and
sum of squares of a norm): the tuple counterpart of :mod:`.rfactor`.

TVM writes such a reduction with one buffer per accumulator and a body of ``T.let``
bindings: ``v0 = C0(acc, e); v1 = C1(acc, e); acc0 = v0; acc1 = v1`` for a combiner ``C``
over the accumulator tuple ``acc`` and the element tuple ``e``. ``rfactor`` turns it into
a partial block computing ``rf_j[k, s]`` (the same body over the partial accumulators, or,
when nothing is left to reduce, the plain elements ``rf_j[k, s] = e_j``) and a final block
that combines ``rf[k, s]`` into the outputs over ``k``.

The merge reads the elements ``e`` off the partial block by matching it against the final
block: the two bodies must be the same combiner, node for node, where the final block has
``rf_j[k, s]`` the partial one has ``e_j``, and where the final block has ``out_j[s]`` the
partial one has ``rf_j[k, s]`` (one pairing of outputs to partial buffers throughout, the
inits equal under it). The final block with ``e`` in place of ``rf[k, s]`` and the partial
block's reduction variables added is then the unscheduled reduction over ``(k, r)``. TVM
only rfactors combiners it has proven commutative and associative, which makes the
regrouping exact.
"""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad, Var
from tir.functor import node_fields, post_order_visit, substitute, transform
from tir.node import Node
from tir.stmt import Block, BufferStore, IterKind, LetStmt, SeqStmt

from .rfactor import fresh_reductions, index_mapping


def _stores(stmt) -> "list | None":
    """The stores of a body made only of stores (a sequence or one)."""
    seq = stmt.seq if isinstance(stmt, SeqStmt) else (stmt,)
    return list(seq) if all(isinstance(s, BufferStore) for s in seq) else None


def _accesses(stmt, ids: set) -> list:
    """Index tuples of every load and store of the buffers ``ids`` in ``stmt``."""
    found = []
    post_order_visit(stmt, lambda n: found.append(tuple(n.indices))
                     if isinstance(n, (BufferLoad, BufferStore)) and id(n.buffer) in ids else None)
    return found


def _one_pattern(accesses: list, block: Block) -> "tuple | None":
    """The single index tuple of ``accesses``, made of distinct iteration variables of ``block``."""
    if not accesses:
        return None
    first = accesses[0]
    if any(len(a) != len(first) or any(x is not y for x, y in zip(a, first)) for a in accesses):
        return None
    ivs = {id(iv.var) for iv in block.iter_vars}
    if not all(isinstance(i, Var) and id(i) in ivs for i in first) or len({id(i) for i in first}) != len(first):
        return None
    return first


class _Unifier:
    """Matches the final block (``f``) against the partial block (``p``); see the module doc."""

    def __init__(self, rf_ids: set, out_idx: tuple, rf_idx: tuple):
        self.rf_ids, self.out_idx, self.rf_idx = rf_ids, out_idx, rf_idx
        self.elements: dict = {}  # id(rf buffer) -> element expression of the partial block
        self.pair: dict = {}  # id(out buffer) -> rf buffer
        self.paired: set = set()  # ids of rf buffers already paired
        self.lets: dict = {}  # id(f let var) -> p let var

    def _pair(self, out, rf) -> bool:
        if id(rf) not in self.rf_ids:
            return False
        got = self.pair.get(id(out))
        if got is not None:
            return got is rf
        if id(rf) in self.paired:
            return False
        self.pair[id(out)] = rf
        self.paired.add(id(rf))
        return True

    def unify(self, f, p, holes: bool = True) -> bool:
        if isinstance(f, BufferLoad) and id(f.buffer) in self.rf_ids:
            if not holes:
                return False
            seen = self.elements.get(id(f.buffer))
            if seen is None:
                self.elements[id(f.buffer)] = p
                return True
            return _same(seen, p)
        if f is p:
            return True
        if isinstance(f, BufferLoad) and isinstance(p, BufferLoad) and id(p.buffer) in self.rf_ids:
            return (tuple(f.indices) == self.out_idx and tuple(p.indices) == self.rf_idx
                    and self._pair(f.buffer, p.buffer))
        if isinstance(f, BufferStore):
            return (isinstance(p, BufferStore) and tuple(f.indices) == self.out_idx
                    and tuple(p.indices) == self.rf_idx and self._pair(f.buffer, p.buffer)
                    and self.unify(f.value, p.value, holes))
        if isinstance(f, LetStmt):
            if not isinstance(p, LetStmt) or f.var.dtype != p.var.dtype:
                return False
            self.lets[id(f.var)] = p.var
            return self.unify(f.value, p.value, holes) and self.unify(f.body, p.body, holes)
        if isinstance(f, Var):
            return self.lets.get(id(f)) is p
        if type(f) is not type(p):
            return False
        if isinstance(f, Node):
            return all(self._field(getattr(f, k), getattr(p, k), holes) for k in node_fields(type(f)))
        return f == p

    def _field(self, a, b, holes: bool) -> bool:
        if isinstance(a, tuple):
            return isinstance(b, tuple) and len(a) == len(b) and all(self._field(x, y, holes) for x, y in zip(a, b))
        if isinstance(a, Node):
            return self.unify(a, b, holes)
        return a == b


def _same(a, b) -> bool:
    """Equal expressions of one block (variables and buffers by identity)."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, Var) or not isinstance(a, Node):
        return a == b if not isinstance(a, (Node, tuple)) else (
            isinstance(a, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b)))
    return all(_same(getattr(a, k), getattr(b, k)) for k in node_fields(type(a)))


def merge_tuple(final: Block, partial: Block, rf_bufs: list) -> "tuple | None":
    """(merged final block, fresh reduction variables) or None (see the module doc)."""
    rf_ids = {id(b) for b in rf_bufs}
    outs = _stores(final.init) if final.init is not None else None
    if outs is None or len(outs) != len(rf_bufs) or len({id(s.buffer) for s in outs}) != len(outs):
        return None
    out_ids = {id(s.buffer) for s in outs}
    out_idx = _one_pattern(_accesses(final.body, out_ids) + _accesses(final.init, out_ids), final)
    f_rf_idx = _one_pattern(_accesses(final.body, rf_ids), final)
    p_parts = [partial.body] + ([partial.init] if partial.init is not None else [])
    rf_idx = _one_pattern([a for part in p_parts for a in _accesses(part, rf_ids)], partial)
    if out_idx is None or f_rf_idx is None or rf_idx is None or len(f_rf_idx) != len(rf_idx):
        return None
    spatial = [iv for iv in partial.iter_vars if iv.kind == IterKind.SPATIAL]
    if {id(v) for v in rf_idx} != {id(iv.var) for iv in spatial}:
        return None
    mapping = index_mapping(partial, final, rf_idx, f_rf_idx)
    if mapping is None:
        return None
    u = _Unifier(rf_ids, out_idx, rf_idx)
    if partial.init is None:
        stores = _stores(partial.body)
        if stores is None or len(spatial) != len(partial.iter_vars) or len(stores) != len(rf_bufs):
            return None
        for s in stores:
            if tuple(s.indices) != rf_idx or id(s.buffer) in u.elements or _accesses(s.value, rf_ids):
                return None
            u.elements[id(s.buffer)] = s.value
    else:
        if not (u.unify(final.init, partial.init, holes=False) and u.unify(final.body, partial.body)):
            return None
    if set(u.elements) != rf_ids:
        return None
    let_vars = set()
    for part in p_parts:
        post_order_visit(part, lambda n: let_vars.add(id(n.var)) if isinstance(n, LetStmt) else None)
    for e in u.elements.values():
        used = set()
        post_order_visit(e, lambda n: used.add(id(n)) if isinstance(n, Var) else None)
        if used & let_vars or _accesses(e, rf_ids):
            return None
    fresh = fresh_reductions(partial, mapping)
    terms = {k: substitute(e, mapping) for k, e in u.elements.items()}
    body = transform(final.body, lambda n: None,
                     lambda n: terms.get(id(n.buffer)) if isinstance(n, BufferLoad) else None)
    reads = tuple(r for r in final.reads if id(r.buffer) not in rf_ids) + tuple(
        substitute(r, mapping) for r in partial.reads if id(r.buffer) not in rf_ids)
    return attrs.evolve(final, iter_vars=final.iter_vars + tuple(fresh), reads=reads, body=body), fresh

"""Undo TVM's ``loop_partition``: consecutive copies of a loop nest become one loop again.

``loop_partition(i, [7, None])`` on ``for i in range(9)`` prints the nest twice, each copy in
a block of its own (no iteration variables; TVM names them ``..._partition``, inside one
``..._common``), the copies differing only in the partitioned loop's range (``range(7)``,
``range(7, 9)``), in the names of their blocks, in the declared regions, and in the domains
of the block variables ``T.axis.remap`` binds to that loop ((0, 7) and (7, 2))::

    with T.sblock("compute_i0_common"):
        with T.sblock("compute_i00_partition"):
            for i00, i1 in T.grid(7, 4): ... compute[v_i0, v_i1] = f(x[v_i0, v_i1])
        with T.sblock("compute_i01_partition"):
            for i01 in range(7, 9): for i1 in range(4): ... the same block

:func:`merge_partitions` checks exactly that -- every other field equal, variables matched
one to one, ranges and differing domains consecutive constants -- and puts one loop over the
union back, its blocks' differing domains their union; the wrapper blocks (no iteration
variables, buffers, annotations or predicate: scopes only) go. Names are never read. Copies
of a block with an init whose reduction domains differ are not merged: each copy runs the
init again at the start of its own domain (TVM 0.27 leaves it in every copy), which resets
the sum the earlier copies made.
"""
from __future__ import annotations

import attrs

from tir.buffer import BufferRegion, Range
from tir.expr import IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import node_fields, post_order_stmts, remembered, transform, transform_stmts
from tir.node import Map, Node
from tir.stmt import Block, BlockRealize, For, IterKind, IterVar, SeqStmt

from .affine import ONE, affine, const_of
from .coverage import binding_spans, block_realizes, predicate_spans
from .predicates import conjunction, is_true
from .realized_domain import shrink_reductions

_SKIPPED = {Block: ("name", "reads", "writes")}
"""Fields the copies may differ in: block names and the regions TVM recomputes per copy."""


class _Match:
    """Equality of two statements up to a one-to-one renaming of variables; differing
    block-variable domains are collected (a domain pair per block variable of the first)."""

    def __init__(self):
        self.vars: dict = {}
        self.back: dict = {}
        self.doms: dict = {}
        self.names: list = []

    def eq(self, a, b) -> bool:
        if isinstance(a, Var) and isinstance(b, Var):
            return self._var(a, b)
        if isinstance(a, Var) or isinstance(b, Var):
            return self._integers(a, b) and self._same_form(a, b)
        if type(a) is not type(b):
            return False
        if isinstance(a, IterVar):
            if not self._var(a.var, b.var) or a.kind != b.kind:
                return False
            if not self.eq(a.dom, b.dom):
                self.doms[id(a.var)] = (a, b.dom)
            return True
        if isinstance(a, BufferRegion):
            return a.buffer is b.buffer
        if a is not b and self._integers(a, b):
            saved = dict(self.vars), dict(self.back), len(self.names)
            if self._fields(a, b):
                return True
            self.vars, self.back = saved[0], saved[1]
            del self.names[saved[2]:]
            return self._same_form(a, b)
        if isinstance(a, Node) and not isinstance(a, Map):
            if a is b:
                return True
            return self._fields(a, b)
        if isinstance(a, Map):
            return a == b
        if isinstance(a, tuple):
            return len(a) == len(b) and all(self.eq(x, y) for x, y in zip(a, b))
        return a == b

    @staticmethod
    def _integers(a, b) -> bool:
        return isinstance(a, PrimExpr) and isinstance(b, PrimExpr) and a.dtype.is_integer and b.dtype.is_integer

    def _fields(self, a, b) -> bool:
        if isinstance(a, Block):
            self.names.append((a, b.name))
        skip = _SKIPPED.get(type(a), ())
        return all(self.eq(getattr(a, f), getattr(b, f)) for f in node_fields(type(a)) if f not in skip)

    def _same_form(self, a, b) -> bool:
        """Two integer expressions equal as affine forms once ``b``'s variables are renamed
        to ``a``'s (every variable of ``b`` already matched, or shared and not renamed):
        TVM rewrites a partitioned copy's binding around its range's start
        (``(ax2_01 - 2) * 2 + ax2_1 + 4`` for ``ax2_00 * 2 + ax2_1``)."""
        fa, fb = affine(a), affine(b)
        if fa is None or fb is None:
            return False
        renamed = {}
        for atom, coef in fb.items():
            if atom is ONE:
                renamed[ONE] = coef
                continue
            if not isinstance(atom, Var):
                return False
            if id(atom) in self.back:
                atom = self.back[id(atom)]
            elif id(atom) in self.vars:
                return False
            renamed[atom] = renamed.get(atom, 0) + coef
        return {k: v for k, v in renamed.items() if v} == fa

    def _var(self, a, b) -> bool:
        if not isinstance(a, Var) or not isinstance(b, Var) or type(a) is not type(b) or a.dtype != b.dtype:
            return False
        if a is b:
            return id(a) not in self.vars and id(b) not in self.back
        if id(a) in self.vars or id(b) in self.back:
            return self.vars.get(id(a)) is b and self.back.get(id(b)) is a
        self.vars[id(a)], self.back[id(b)] = b, a
        return True


def _wrapper(n, guarded: bool = False) -> bool:
    """A block that only scopes: no iteration variables, buffers, init, annotations, predicate
    (with ``guarded``, a predicate is allowed)."""
    if not isinstance(n, BlockRealize):
        return False
    b = n.block
    return (not b.iter_vars and not b.alloc_buffers and not b.match_buffers and b.init is None
            and not b.annotations and (guarded or is_true(n.predicate)))


def _guarded(stmt, pred):
    """``stmt`` (loops, sequences and blocks only) with ``pred`` conjoined to the predicate of
    every outermost block: what a scope block's ``T.where`` does to the blocks it holds. None
    for any other statement."""
    if isinstance(stmt, For):
        body = _guarded(stmt.body, pred)
        return None if body is None else attrs.evolve(stmt, body=body)
    if isinstance(stmt, SeqStmt):
        parts = [_guarded(s, pred) for s in stmt.seq]
        return None if any(p is None for p in parts) else attrs.evolve(stmt, seq=tuple(parts))
    if isinstance(stmt, BlockRealize):
        return attrs.evolve(stmt, predicate=conjunction([pred, stmt.predicate]))
    return None


def _unwrapped(stmt):
    while _wrapper(stmt):
        stmt = stmt.block.body
    return stmt


def _consecutive(pairs) -> bool:
    """(min, extent) constants, each starting where the previous ends."""
    for (lo0, ext0), (lo1, _) in zip(pairs, pairs[1:]):
        if lo0 is None or ext0 is None or lo1 is None or lo0 + ext0 != lo1:
            return False
    return all(lo is not None and ext is not None and ext > 0 for lo, ext in pairs)


def _blocks(stmt) -> list:
    found = []
    post_order_stmts(stmt, lambda n: found.append(n) if isinstance(n, Block) else None)
    return found


def _tag(name: str, loop_var) -> "str | None":
    """A copy's block name without the ``_<loop variable>`` TVM appended to it."""
    suffix = "_" + loop_var.name
    return name[:-len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else None


def _merged(loops: list) -> "For | None":
    """One loop for consecutive copies ``loops`` of a nest, or None."""
    first = loops[0]
    ranges = [(const_of(f.min), const_of(f.extent)) for f in loops]
    if not _consecutive(ranges):
        return None
    doms: dict = {}
    renamed: dict = {}
    matches = []
    for other in loops[1:]:
        m = _Match()
        m.vars[id(first.loop_var)], m.back[id(other.loop_var)] = other.loop_var, first.loop_var
        if not (first.kind == other.kind and first.thread_binding == other.thread_binding
                and first.annotations == other.annotations and m.eq(first.body, other.body)):
            return None
        matches.append(m)
        for key, (iv, dom) in m.doms.items():
            doms.setdefault(key, [iv]).append(dom)
        for block, name in m.names:
            renamed.setdefault(id(block), set()).add(_tag(name, other.loop_var))
            renamed[id(block)].add(_tag(block.name, first.loop_var))
    # a copy of a block with an init runs that init again at its own domain's start: a
    # reduction variable split between copies resets what the earlier copies summed (TVM
    # 0.27 keeps the init in every copy), which one loop over the union would not do
    reset = {id(iv.var) for b in _blocks(first.body) if b.init is not None
             for iv in b.iter_vars if iv.kind == IterKind.REDUCE}
    if reset & set(doms):
        return None
    new_dom, names = {}, {}
    run = _run_domains(first, loops[1:], matches, doms)
    if run is None:
        return None
    for key, found in doms.items():
        iv = found[0]
        if key in run:
            new_dom[key] = run[key]
            continue
        pairs = [(const_of(d.min), const_of(d.extent)) for d in [iv.dom] + found[1:]]
        if len(pairs) != len(loops) or not _consecutive(pairs):
            return None
        total = sum(e for _, e in pairs)
        new_dom[key] = Range(iv.dom.min, IntImm(iv.dom.extent.dtype, total))
    total = sum(e for _, e in ranges)
    names = {k: v.pop() for k, v in renamed.items() if len(v) == 1 and None not in v}
    old_names = {b.name: names[id(b)] for b in _blocks(first.body) if id(b) in names}

    def post(n):
        if isinstance(n, IterVar) and id(n.var) in new_dom:
            return attrs.evolve(n, dom=new_dom[id(n.var)])
        if isinstance(n, Block) and n.name in old_names:
            return attrs.evolve(n, name=old_names[n.name])
        return None

    body = transform(first.body, post)
    loop = attrs.evolve(first, extent=IntImm(first.extent.dtype, total), body=body)
    return _capped(loop, {key for key, found in doms.items() if found[0].kind == IterKind.SPATIAL})


def _run_domains(first: For, others: list, matches: list, doms: dict) -> "dict | None":
    """{id of a spatial block variable: the range its binding runs} for the variables whose
    domains differ between the copies although the copies do not partition them: TVM 0.27's
    ``loop_partition`` of a blockized block gives the inner block's variable the partition's
    range as its domain (``T.axis.spatial((7, 8), ax1_1)`` over ``range(2)``) while the
    binding runs the same tile in every copy. A copy whose binding leaves its declared domain
    shows it; the block variable is then what the binding runs (TVM's code substitutes the
    binding; a spatial domain is only a declaration), which must be one range in every copy.
    None when such a variable's copies run different ranges (nothing is merged)."""
    spatial = {key for key, found in doms.items() if found[0].kind == IterKind.SPATIAL}
    if not spatial:
        return {}
    copies = [(first.body, None)] + [(o.body, m) for o, m in zip(others, matches)]
    runs: dict = {}
    outside: set = set()
    for body, m in copies:
        for realize, loops in block_realizes(body):
            for iv in realize.block.iter_vars:
                key = id(iv.var) if m is None else id(m.back.get(id(iv.var), iv.var))
                if key not in spatial:
                    continue
                spans = binding_spans(realize, loops)
                lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
                span = (spans or {}).get(iv.var)
                runs.setdefault(key, []).append(span)
                if span is not None and lo is not None and ext is not None \
                        and not lo <= span[0] <= span[1] < lo + ext:
                    outside.add(key)
    out = {}
    for key in outside:
        spans = runs[key]
        if len(spans) != len(copies) or None in spans or len(set(spans)) != 1:
            return None
        a, b = spans[0]
        iv = doms[key][0]
        out[key] = Range(IntImm(iv.dom.min.dtype, a), IntImm(iv.dom.extent.dtype, b + 1 - a))
    return out


def _capped(loop: For, keys: set) -> For:
    """``loop`` with the merged domains of spatial block variables (``keys``: ids of their
    variables) capped at the highest value their binding takes where the block's predicate
    holds (:func:`.coverage.predicate_spans`). A split that does not divide its axis, fused
    and partitioned, keeps its ``T.where`` in every copy while TVM gives each copy's
    variable the range of the copy's loop: ``range(4, 8)`` for an axis of 7, so the union is
    8 long; the predicate leaves 7 of them. Only values no iteration runs are cut (the
    checks that follow judge whether the loops run all of the rest)."""
    if not keys:
        return loop
    caps: dict = {}
    for realize, loops in block_realizes(loop):
        spans = predicate_spans(realize, loops)
        for iv in realize.block.iter_vars:
            if id(iv.var) not in keys or not spans or iv.var not in spans:
                continue
            lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
            a, b = spans[iv.var]
            if lo is not None and ext is not None and lo <= a <= b < lo + ext - 1:
                caps[id(iv.var)] = Range(iv.dom.min, IntImm(iv.dom.extent.dtype, b + 1 - lo))
    if not caps:
        return loop

    def post(n):
        if isinstance(n, IterVar) and id(n.var) in caps:
            return attrs.evolve(n, dom=caps[id(n.var)])
        return None

    return transform(loop, post)


@remembered(16)  # analyze asks for one function several times
def merge_partitions(func: PrimFunc) -> PrimFunc:
    """``func`` with the copies ``loop_partition`` made merged back (module docstring);
    unchanged when there are none. Reductions whose loops then run a box smaller than
    their declared domain get that box (:mod:`.realized_domain`: the first rewrite every
    reader of a function applies, as this one)."""
    return shrink_reductions(_merge_partitions(func))


def _merge_partitions(func: PrimFunc) -> PrimFunc:
    merged = [False]
    loops: set = set()  # ids of the merged loops

    def post(n):
        if isinstance(n, SeqStmt):
            items = [_unwrapped(s) for s in n.seq]
            out, k = [], 0
            while k < len(items):
                end = k + 1
                while end < len(items) and isinstance(items[k], For) and isinstance(items[end], For):
                    end += 1  # the longest run of loops that merges, from k
                for stop in range(end, k + 1, -1):
                    loop = _merged(items[k:stop])
                    if loop is not None:
                        out.append(loop)
                        loops.add(id(loop))
                        k = stop
                        merged[0] = True
                        break
                else:
                    out.append(n.seq[k])
                    k += 1
            if len(out) == len(n.seq):
                return None
            return out[0] if len(out) == 1 else SeqStmt(tuple(out))
        return None

    out = transform_stmts(func, post)
    if not merged[0]:
        return func

    def holds_merged(stmt) -> bool:
        stmt = _unwrapped(stmt)
        if isinstance(stmt, SeqStmt):
            return any(holds_merged(s) for s in stmt.seq)
        return id(stmt) in loops

    def unwrap(n):
        # only the scope blocks that held the partitions: an extern block without iteration
        # variables (scatter_nd_generic) keeps its loads inside a block. The scope may carry a
        # split's T.where over loops outside it (TVM 0.27 puts it on the ``_common`` block):
        # the blocks it holds get it
        if _wrapper(n, guarded=True) and n.block is not out.root_block and holds_merged(n.block.body):
            if _wrapper(n):
                return _unwrapped(n)
            return _guarded(_unwrapped(n.block.body), n.predicate)
        return None

    return transform_stmts(out, unwrap)

"""Undo TVM's ``blockize``: an outer block around one nested block becomes one block again.

``sch.blockize(loop)`` wraps the loops below ``loop`` and the block under them in an outer
block ``<tag>_o`` whose iteration variables are bound to the loops above (one per variable
of the original block: ``v_x_o``, of extent 1 when the whole axis is inside), and gives the
inner block ``<tag>`` variables of its own bound to the loops below (``v_x_i``); its indices
mix both (``v_x_o * 4 + v_x_i`` for a split axis). A reduction's init moves to the outer
block, as a block ``<tag>_init`` without variables of its own.

What the pair computes does not change when the inner block takes both sets of variables
(with their bindings, under the outer loops and then the inner ones) and the outer block
goes: the same body runs for the same values, under both predicates. Then

* a pair ``o`` (extent ``E``), ``i`` (extent ``B``, from 0) of one kind that the block only
  ever uses as ``o * B + i`` becomes one variable of extent ``E * B`` (the bound of a
  predicate conjunct ``o * B + i < c`` when that is smaller: a non-divisible split), bound
  to the same sum; so does a pair a store indexes with ``o * B + i`` while other indices
  use ``o`` or ``i`` alone (they read ``f // B`` and ``f % B`` of the fused ``f``: TVM
  simplifies a blockized reshape's load to ``x[o // 5, o % 5, i]``);
* an outer variable of extent 1 that the block does not use is dropped (not the block's
  last reduction variable: a reduction over nothing would stop being one).

Only when it is sound and of blockize's shape: the outer block's body is loops over the
one nested block, neither allocates or matches buffers, the inner domains and variables do
not depend on the outer variables, every variable is spatial or a reduction, and an init
(the outer block's, a block without variables, or the inner block's) sets what is then
reduced: the outer one only over inner reduction variables, the inner one only under
outer spatial variables. Anything else is left as it is.
"""
from __future__ import annotations

import math

import attrs

from tir.buffer import Range
from tir.expr import GE, GT, LE, LT, Add, BufferLoad, FloorDiv, FloorMod, IntImm, Mul, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, pre_order_stmts, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, IterKind, IterVar, SeqStmt

from .affine import affine, const_of
from .predicates import conjunction, is_true
from .probe import POINT_ERRORS, distinct, evaluate_points, flat_points, loops_points
from .recognize.guard import conjuncts
from .rewrite import nest_of, stores_in

KINDS = (IterKind.SPATIAL, IterKind.REDUCE)


def _has_block(stmt) -> bool:
    """Whether a block is inside ``stmt`` (only statements are entered: blocks are there)."""
    found = []
    if stmt is not None:
        pre_order_stmts(stmt, lambda n: found.append(n) if isinstance(n, Block) else not found)
    return bool(found)


def _var_ids(node) -> set:
    found = set()
    post_order_visit(node, lambda n: found.add(id(n)) if isinstance(n, Var) else None)
    return found


def _outer_init(block: Block):
    """The statements of the outer block's init (its ``<tag>_init`` block's body), None
    without an init; False when the init is of another shape."""
    init = block.init
    if init is None or not _has_block(init):
        return init
    if not isinstance(init, BlockRealize) or init.block.iter_vars or init.block.init is not None:
        return False
    body = init.block.body
    return False if _has_block(body) or init.block.alloc_buffers or init.block.match_buffers else body


def _looped_init(init, inner_realize: BlockRealize):
    """The outer init of a blockized partial block of ``rfactor`` (``<tag>_rf_o``): loops
    over a block ``<tag>_rf_init`` whose spatial variables run over their whole domains, one
    loop each, and store a constant where the inner block (its spatial variables those
    same domains, the rest reductions, no predicate, no init) stores, position for
    position. Merged, it is the inner block's init over the same elements: the store with
    the init's variables made the inner ones (several stores, in the same order, for a
    tuple reduction's accumulators). None for any other shape."""
    nest = nest_of(init) if init is not None else None
    if nest is None:
        return None
    loops, realize = nest
    blk, inner = realize.block, inner_realize.block
    if blk.init is not None or blk.alloc_buffers or blk.match_buffers:
        return None
    if inner.init is not None or not is_true(inner_realize.predicate):
        return None
    mines = _init_stores(blk.body)
    theirs_all = stores_in(inner.body)
    if mines is None or len(mines) != len(theirs_all) or _has_block(inner.body):
        return None
    own = {id(iv.var) for iv in blk.iter_vars}
    if any(_var_ids(m.value) & own or any(isinstance(n, BufferLoad) for n in _nodes(m.value)) for m in mines):
        return None
    if any(iv.kind != IterKind.SPATIAL or const_of(iv.dom.min) != 0 for iv in blk.iter_vars):
        return None
    if not (_one_loop_each(loops, realize) or _runs_domain_only(loops, realize)):
        return None
    mine, theirs = mines[0], theirs_all[0]
    if any(m.buffer is not t.buffer or len(m.indices) != len(t.indices) for m, t in zip(mines, theirs_all)):
        return None
    init_ivs = {id(iv.var): iv for iv in blk.iter_vars}
    inner_ivs = {id(iv.var): iv for iv in inner.iter_vars}
    mapping = {}
    for a, b in zip(mine.indices, theirs.indices):
        # an index holding one init variable pairs it with the one inner variable of the
        # inner index at that position (``o * 3 + i_init`` with ``o * 3 + i``)
        ours = [n for n in _nodes(a) if isinstance(n, Var) and id(n) in init_ivs]
        if not ours:
            continue
        other = {id(n): n for n in _nodes(b) if isinstance(n, Var) and id(n) in inner_ivs}
        if len({id(v) for v in ours}) != 1 or len(other) != 1:
            return None
        a_var, b_var = ours[0], next(iter(other.values()))
        iv, jv = init_ivs[id(a_var)], inner_ivs[id(b_var)]
        if jv.kind != IterKind.SPATIAL or a_var in mapping or const_of(jv.dom.min) != 0 \
                or affine(jv.dom.extent) != affine(iv.dom.extent):
            return None
        mapping[a_var] = b_var
    spatial = [iv for iv in inner.iter_vars if iv.kind == IterKind.SPATIAL]
    if len(mapping) != len(blk.iter_vars) or {id(v) for v in mapping.values()} != {id(iv.var) for iv in spatial}:
        return None
    if any(iv.kind not in KINDS for iv in inner.iter_vars):
        return None
    stores = [substitute(m, mapping) for m in mines]
    if any(tuple(m.indices) != tuple(t.indices) for m, t in zip(stores, theirs_all)):
        return None
    return stores[0] if len(stores) == 1 else SeqStmt(stores)


def _one_loop_each(loops, realize: BlockRealize) -> bool:
    """Each variable of the init block bound to a loop of its own over exactly its domain,
    and no predicate."""
    loop_ext = {id(lp.loop_var): lp for lp in loops}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        lp = loop_ext.get(id(value)) if isinstance(value, Var) else None
        if lp is None or const_of(lp.min) != 0 or affine(lp.extent) is None \
                or affine(lp.extent) != affine(iv.dom.extent):
            return False
    return (is_true(realize.predicate) and len(loops) == len(realize.block.iter_vars)
            and len({id(v) for v in realize.iter_values}) == len(loops))


INIT_POINTS = 1 << 16
"""Most iterations :func:`_runs_domain_only` enumerates."""


def _runs_domain_only(loops, realize: BlockRealize) -> bool:
    """The init block's loops (constant ranges, at most :data:`INIT_POINTS` iterations) run,
    under its predicate, every point of its (constant) domain and none outside it -- some
    maybe more than once: an init that stores a constant sets the same elements however
    often it runs. That is the init ``blockize`` leaves above a spatial loop fused with a
    reduction loop (``v = fused // 5`` over 20 iterations: each element set five times)."""
    doms = [(0, const_of(iv.dom.extent)) for iv in realize.block.iter_vars]
    if any(e is None for _, e in doms):
        return False
    want = math.prod(e for _, e in doms)
    got = loops_points(loops, {}, INIT_POINTS)
    if got is None:
        return False
    leaves, size, _ = got
    try:
        keep = evaluate_points(realize.predicate, leaves, size).astype(bool)
        values = [evaluate_points(v, leaves, size)[keep] for v in realize.iter_values]
    except POINT_ERRORS:
        return False
    flat = flat_points(values, doms, int(keep.sum()))
    return flat is not None and distinct(flat, want) == want


def _init_stores(body) -> "list | None":
    """The stores of an init block's body: one store, or a sequence of them (a tuple
    reduction's accumulators: a norm's two sums); None for anything else."""
    parts = body.seq if isinstance(body, SeqStmt) else (body,)
    return list(parts) if parts and all(isinstance(p, BufferStore) for p in parts) else None


def _nodes(expr) -> list:
    found = []
    post_order_visit(expr, found.append)
    return found


def _plain(block: Block) -> bool:
    return not (block.alloc_buffers or block.match_buffers) and all(iv.kind in KINDS for iv in block.iter_vars)


def _inits_fit(outer: Block, inner: Block) -> bool:
    """One init at most, and one that sets each element before its first update."""
    if outer.init is not None and inner.init is not None:
        return False
    if outer.init is not None:
        return all(iv.kind == IterKind.REDUCE for iv in inner.iter_vars)
    if inner.init is not None:
        return all(iv.kind == IterKind.SPATIAL for iv in outer.iter_vars)
    return True


def _flatten(realize: BlockRealize) -> "For | BlockRealize | None":
    """The outer block of ``realize`` merged with its nested block, or None."""
    outer = realize.block
    nest = nest_of(outer.body)
    if nest is None or not outer.iter_vars or not _plain(outer):
        return None
    loops, inner_realize = nest
    inner = inner_realize.block
    init = _outer_init(outer)
    looped = None
    if init is False:
        looped = _looped_init(outer.init, inner_realize)
        if looped is None:
            return None
        init, outer = looped, attrs.evolve(outer, init=None)
    if not _plain(inner) or _has_block(inner.body) or _has_block(inner.init):
        return None
    own = {id(iv.var) for iv in outer.iter_vars}
    if any(_var_ids(iv.dom) & own for iv in inner.iter_vars):
        return None
    if looped is None and not _inits_fit(outer, inner):
        return None
    bind = {iv.var: v for iv, v in zip(outer.iter_vars, realize.iter_values)}
    values = tuple(realize.iter_values) + tuple(substitute(v, bind) for v in inner_realize.iter_values)
    predicate = conjunction([realize.predicate, substitute(inner_realize.predicate, bind)])
    merged = attrs.evolve(inner, iter_vars=outer.iter_vars + inner.iter_vars,
                          init=init if init is not None else inner.init)
    plain = fuse_splits(merged, values, predicate, outer, inner)
    simpler = _in_range_mods(merged, outer)
    fused = fuse_splits(simpler, values, predicate, outer, inner) if simpler is not merged else plain
    # the modulo is dropped only where that lets a split be fused (a tile's ``o % 2`` over
    # [0, 2) stays: its recognizer reads the modulo of every axis)
    merged, values = fused if len(fused[0].iter_vars) < len(plain[0].iter_vars) else plain
    merged, values = _drop_units(merged, values, outer)
    body = BlockRealize(values, predicate, merged)
    for lp in reversed(loops):
        body = attrs.evolve(lp, min=substitute(lp.min, bind), extent=substitute(lp.extent, bind), body=body)
    return body


def _in_range_mods(block: Block, outer: Block) -> Block:
    """``block`` with ``o % c`` made ``o`` and ``o // c`` made 0 for an outer variable ``o``
    whose domain is [0, E), E <= c: TVM keeps such a modulo in the inner block's indices
    (``v_x_o % 4 * 3 + v_x_i`` with ``v_x_o`` in [0, 4)), where it hides the split."""
    small = {}
    for iv in outer.iter_vars:
        ext = const_of(iv.dom.extent)
        if const_of(iv.dom.min) == 0 and ext is not None:
            small[id(iv.var)] = ext

    def post(n):
        if isinstance(n, (FloorMod, FloorDiv)) and isinstance(n.a, Var) and id(n.a) in small:
            c = const_of(n.b)
            if c is not None and c > 0 and small[id(n.a)] <= c:
                return n.a if isinstance(n, FloorMod) else IntImm(n.dtype, 0)
        return None

    body_part = attrs.evolve(block, iter_vars=())
    rewritten = transform(body_part, post)
    return block if rewritten is body_part else attrs.evolve(rewritten, iter_vars=block.iter_vars)


def _split_of(n, outer_ids: dict, inner_ids: dict) -> "tuple | None":
    """(o, i) when ``n`` is ``o * B + i`` (either order) for an outer variable ``o`` and an
    inner one ``i`` of the same kind, ``i`` ranging over [0, B)."""
    if not isinstance(n, Add):
        return None
    for prod, i in ((n.a, n.b), (n.b, n.a)):
        if not isinstance(prod, Mul) or not isinstance(i, Var) or id(i) not in inner_ids:
            continue
        for o, scale in ((prod.a, prod.b), (prod.b, prod.a)):
            if not isinstance(o, Var) or id(o) not in outer_ids:
                continue
            ov, iv = outer_ids[id(o)], inner_ids[id(i)]
            b = const_of(scale)
            if ov.kind == iv.kind and b and const_of(iv.dom.min) == 0 and const_of(iv.dom.extent) == b \
                    and const_of(ov.dom.min) == 0:
                return ov, iv
    return None


def _candidates(block: Block, outer: Block, inner: Block) -> list:
    """The (outer, inner) IterVar pairs some ``o * B + i`` in the block names, in order."""
    outer_ids = {id(iv.var): iv for iv in outer.iter_vars}
    inner_ids = {id(iv.var): iv for iv in inner.iter_vars}
    pairs = []
    post_order_visit(block, lambda n: pairs.append(p) if (p := _split_of(n, outer_ids, inner_ids))
                     and p not in pairs else None)
    return pairs


FIRST = {LT: True, GE: True, LE: False, GT: False}
"""Whether ``o <op> c`` bounds ``o * B + i`` by the first (``c * B``) or the last
(``c * B + B - 1``) inner value of row ``c``: ``o < c`` is ``o * B + i < c * B``, ``o <= c``
is ``o * B + i <= c * B + B - 1``."""


def _compare(n, o: Var, b: int, fused: Var):
    """A comparison of ``o`` with a constant made one of the fused variable (TVM writes
    ``o < 2`` for ``o * 4 + i < 8``), or None."""
    if type(n) not in FIRST:
        return None
    left = n.a is o
    c = const_of(n.b if left else n.a)
    if c is None or (n.b if left else n.a) is o or not (left or n.b is o):
        return None
    first = FIRST[type(n)] == left
    bound = IntImm(o.dtype, c * b if first else c * b + b - 1)
    return type(n)(fused, bound) if left else type(n)(bound, fused)


def _fused_extent(o: IterVar, b: int, value, predicate):
    """``E * B``, or the smaller bound a predicate conjunct puts on the fused value."""
    ext = const_of(o.dom.extent)
    extent = IntImm(o.dom.extent.dtype, ext * b) if ext is not None else Mul(o.dom.extent, IntImm(o.dom.extent.dtype, b))
    form = affine(value)
    for term in conjuncts(predicate):
        c = const_of(term.b) if isinstance(term, LT) else None
        if c is not None and c > 0 and form is not None and affine(term.a) == form and (ext is None or c < ext * b):
            extent = IntImm(o.dom.extent.dtype, c)
    return extent


def _stored_as(block: Block, o: IterVar, i: IterVar) -> bool:
    """Whether a store of ``block`` has ``o * B + i`` for an index."""
    return any(_split_of(x, {id(o.var): o}, {id(i.var): i}) is not None
               for st in stores_in(block.body) for x in st.indices)


def _digit(n) -> "tuple | None":
    """(a, d, m) when ``n`` is ``a // d % m * d`` (constants ``d``, ``m`` above 0)."""
    if not isinstance(n, Mul):
        return None
    for mod, scale in ((n.a, n.b), (n.b, n.a)):
        d = const_of(scale)
        if isinstance(mod, FloorMod) and isinstance(mod.a, FloorDiv) and d and d > 0 \
                and const_of(mod.a.b) == d and (const_of(mod.b) or 0) > 0:
            return mod.a.a, d, const_of(mod.b)
    return None


def _merged_digits(n):
    """``a // d % m * d + a % d`` (either order) as ``a % (d * m)``: the same value for every
    integer ``a``. Fusing a split pair back leaves it where the inner block read the outer
    variable modulo its extent (``o % 4 * 2 + i`` with ``o = f // 2``, ``i = f % 2``): tile's
    ``x[v % 8]`` blockized by 2."""
    if not isinstance(n, Add):
        return None
    for hi, lo in ((n.a, n.b), (n.b, n.a)):
        dig = _digit(hi)
        if dig is None or not isinstance(lo, FloorMod) or const_of(lo.b) != dig[1]:
            continue
        a, d, m = dig
        if lo.a == a:
            return FloorMod(a, IntImm(lo.b.dtype, d * m))
    return None


def fuse_splits(block: Block, values: tuple, predicate, outer: Block, inner: Block) -> tuple:
    """``block`` with every ``o * B + i`` pair it uses only that way, or that a store uses
    for an index, made one variable ``f`` (other uses of ``o`` and ``i`` read ``f // B`` and
    ``f % B``)."""
    for o, i in _candidates(block, outer, inner):
        b = const_of(i.dom.extent)
        fused = Var(o.var.name.removesuffix("_o"), o.var.dtype)
        pair = {id(o.var): o, id(i.var): i}

        def post(n, o=o, i=i, b=b, fused=fused):
            if _split_of(n, {id(o.var): o}, {id(i.var): i}) is not None:
                return fused
            return _compare(n, o.var, b, fused)

        body_part = attrs.evolve(block, iter_vars=())
        rewritten = transform(body_part, post)
        if _var_ids(rewritten) & set(pair):
            if not _stored_as(block, o, i):
                continue  # used otherwise too: keep both
            # the buffer written is indexed by the fused value: the other uses read its digits
            # (a blockized reshape's load ``x[o // 5, o % 5, i]`` beside its store ``y[o * 3 + i]``)
            width = IntImm(fused.dtype, b)
            rewritten = transform(substitute(rewritten, {o.var: FloorDiv(fused, width), i.var: FloorMod(fused, width)}),
                                  _merged_digits)
        ivars = list(block.iter_vars)
        k, j = ivars.index(o), ivars.index(i)
        value = Add(Mul(values[k], IntImm(values[k].dtype, b)), values[j])
        ivars[k] = IterVar(fused, Range(IntImm(o.dom.min.dtype, 0), _fused_extent(o, b, value, predicate)), o.kind)
        vals = list(values)
        vals[k] = value
        del ivars[j], vals[j]
        block, values = attrs.evolve(rewritten, iter_vars=tuple(ivars)), tuple(vals)
    return block, values


def _drop_units(block: Block, values: tuple, outer: Block) -> tuple:
    """Unused outer variables of extent 1 dropped, their inner namesake (``v_x_i`` for
    ``v_x_o``) taking their place."""
    used = _var_ids(attrs.evolve(block, iter_vars=()))
    ivars, vals = list(block.iter_vars), list(values)
    for o in outer.iter_vars:
        if o not in ivars or id(o.var) in used or const_of(o.dom.extent) != 1:
            continue
        k = ivars.index(o)
        reduces = [iv for iv in ivars if iv.kind == IterKind.REDUCE]
        if o.kind == IterKind.REDUCE and reduces == [o]:
            continue
        name = o.var.name.removesuffix("_o") + "_i"
        mate = next((j for j, iv in enumerate(ivars) if iv.var.name == name and iv.kind == o.kind
                     and iv not in outer.iter_vars), None)
        if mate is not None and mate > k:
            ivars[k], vals[k] = ivars.pop(mate), vals.pop(mate)
        else:
            del ivars[k], vals[k]
    if len(ivars) == len(block.iter_vars):
        return block, values
    return attrs.evolve(block, iter_vars=tuple(ivars)), tuple(vals)


def _any_nested(func: PrimFunc) -> bool:
    """Whether some block other than the root holds a block (one pass over the function)."""
    root, found = func.root_block, []

    def visit(n):
        if found or not isinstance(n, Block) or n is root:
            return not found
        if _has_block(n.body) or _has_block(n.init):
            found.append(n)
        return False

    pre_order_stmts(func.body, visit)
    return bool(found)


def unblockize(func: PrimFunc) -> PrimFunc:
    """``func`` with every blockized block merged with its outer block (see the module doc);
    the same object when there is none."""
    if not _any_nested(func):
        return func

    def post(n):
        if isinstance(n, BlockRealize) and _has_block(n.block.body):
            return _flatten(n)
        return None

    return transform(func, post)

"""Two reduction variables that only ever appear as ``a * F + b`` become one; one read only
through its digits becomes one per digit.

A reduction split into an outer and an inner part and then ``rfactor``-ed (TVM's dlight GPU
rules do this to every row reduction: the inner part goes to the threads, the outer one is
what each thread sums) leaves, once :mod:`.rfactor` has merged the two blocks back, a block
with two reduction variables ``a`` in ``[0, A)`` and ``b`` in ``[0, F)`` reading
``x[s, a * F + b]``. The reduction recognizers want one variable per reduced axis.

When ``a`` and ``b`` occur only inside integer sums affine in them with ``a``'s coefficient
``F`` times ``b``'s (:func:`through_sum`; such a sum may sit under a ``//`` or a ``%``),
``(a, b) -> c = a * F + b`` is a bijection of ``[0, A) x [0, F)`` onto ``[0, A * F)`` and every
such sum is the same function of ``c``: ``a`` is replaced by 0 and ``b`` by ``c``, the block
binds ``c`` to ``value_a * F + value_b``. The loops, the order the block instances run in and
every value they compute are unchanged; only the block's coordinates are renamed.

A reduction over several axes that dlight fused into one variable ``c`` reads the input at
``c // 6`` and ``c % 6`` (:func:`split_fused_reductions`): when ``c`` occurs only as digits
``c // d % m`` that tile its extent exactly (``d`` running 1, ``m0``, ``m0 * m1``, ... up to
the extent), each digit becomes a reduction variable of its own, outermost first, bound to
the same digit of ``c``'s binding -- again a renaming of coordinates. Only a flattening of
adjacent axes is split (:func:`_flattened`): a packed layout's channel keeps TVM's form.
"""
from __future__ import annotations

import attrs

from tir.expr import Add, BufferLoad, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var
from tir.function import PrimFunc
from tir.functor import children, post_order_visit, substitute, transform, transform_stmts
from tir.buffer import Range
from tir.stmt import Block, BlockRealize, BufferStore, IterKind, IterVar

from .affine import ONE, affine, const_of
from .probe import vars_in


def _uses(e, a: Var, b: Var) -> bool:
    """Whether ``e`` reads ``a`` or ``b`` (one walk of it)."""
    return any(v is a or v is b for v in vars_in(e))


def _users(expr, a: Var, b: Var) -> set:
    """The ids of the nodes of ``expr`` (``expr`` included) that read ``a`` or ``b``, from one
    walk (asking :func:`_uses` of every node on the way down walks each subtree again)."""
    users: set = set()
    seen: dict = {}

    def walk(n) -> bool:
        key = id(n)
        if key in seen:
            return seen[key]
        seen[key] = False  # a buffer met again inside its own shape
        hit = n is a or n is b
        for c in children(n):
            hit = walk(c) or hit
        seen[key] = hit
        if hit:
            users.add(key)
        return hit

    walk(expr)
    return users


def through_sum(expr, r: Var, k: Var, f: int) -> bool:
    """Whether ``r`` and ``k`` occur in ``expr`` only inside integer sums affine in them with
    ``r``'s coefficient ``f`` times ``k``'s (``(r * 16 + k) // 6`` for ``f`` 16): each such
    sum is then a function of ``r * f + k``, and replacing ``r`` by 0 and ``k`` by that
    fused variable keeps its value."""
    users = _users(expr, r, k)

    def ok(e) -> bool:
        if id(e) not in users:
            return True
        if isinstance(e, PrimExpr) and e.dtype.is_int and e.dtype.lanes == 1:
            form = affine(e)
            if form is not None and not any(not isinstance(a, Var) and _uses(a, r, k) for a in form if isinstance(a, PrimExpr)):
                return form.get(r, 0) == f * form.get(k, 0)
        if e is r or e is k:
            return False
        return all(ok(c) for c in children(e))

    return ok(expr)


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _drop_zeros(n):
    """``0 * x``, ``x * 0`` -> 0 and ``x + 0``, ``0 + x``, ``x - 0`` -> x: what replacing ``a``
    by 0 leaves in an index (``a * F + b`` becomes ``c``, not ``0 * F + c``)."""
    if isinstance(n, Mul) and (_is_zero(n.a) or _is_zero(n.b)):
        return IntImm(n.dtype, 0)
    if isinstance(n, Add) and _is_zero(n.a):
        return n.b
    if isinstance(n, (Add, Sub)) and _is_zero(n.b):
        return n.a
    return None


def rename_vars(node, mapping: dict):
    return transform(substitute(node, mapping), _drop_zeros)


def _parts(block: Block) -> list:
    return [p for p in (block.body, block.init) if p is not None]


def _fuse_once(realize: BlockRealize) -> "BlockRealize | None":
    block = realize.block
    reduce = [(k, iv) for k, iv in enumerate(block.iter_vars)
              if iv.kind == IterKind.REDUCE and const_of(iv.dom.min) == 0 and const_of(iv.dom.extent) is not None]
    if len(reduce) < 2:
        return None
    for ka, outer in reduce:
        for kb, inner in reduce:
            if ka == kb:
                continue
            f = const_of(inner.dom.extent)
            if f < 1 or not all(through_sum(part, outer.var, inner.var, f) for part in _parts(block)) \
                    or not any(_uses(part, outer.var, inner.var) for part in _parts(block)):
                continue
            a, b = outer.var, inner.var
            fused = Var(a.name, a.dtype)
            extent = const_of(outer.dom.extent) * f
            dtype = outer.dom.extent.dtype
            iv = IterVar(fused, Range(IntImm(dtype, 0), IntImm(dtype, extent)), IterKind.REDUCE)
            mapping = {a: IntImm(a.dtype, 0), b: fused}
            va, vb = realize.iter_values[ka], realize.iter_values[kb]
            binding = Add(Mul(va, IntImm(va.dtype, f)), vb) if f != 1 else Add(va, vb)
            iter_vars, values = [], []
            for k, (v, value) in enumerate(zip(block.iter_vars, realize.iter_values)):
                if k == ka:
                    iter_vars.append(iv)
                    values.append(binding)
                elif k != kb:
                    iter_vars.append(v)
                    values.append(value)
            new = attrs.evolve(block, iter_vars=tuple(iter_vars),
                               body=rename_vars(block.body, mapping),
                               init=rename_vars(block.init, mapping) if block.init is not None else None,
                               reads=tuple(rename_vars(r, mapping) for r in block.reads),
                               writes=tuple(rename_vars(w, mapping) for w in block.writes))
            return attrs.evolve(realize, iter_values=tuple(values), block=new)
    return None


def fuse_split_reductions(func: PrimFunc) -> PrimFunc:
    """``func`` with every block's split reduction variables fused (see the module doc)."""
    def post(n):
        if not isinstance(n, BlockRealize):
            return None
        out = None
        while True:
            step = _fuse_once(out if out is not None else n)
            if step is None:
                return out
            out = step

    return transform_stmts(func, post)


def digit_of(e) -> "tuple | None":
    """``(v, d, m)`` when ``e`` is ``v``, ``v // d``, ``v % m`` or ``v // d % m`` for a
    variable ``v`` and positive constants (``d`` 1 without a division, ``m`` None without a
    remainder); None otherwise."""
    m = None
    if isinstance(e, FloorMod):
        m = const_of(e.b)
        if m is None or m < 1:
            return None
        e = e.a
    if isinstance(e, Var):
        return e, 1, m
    if isinstance(e, FloorDiv) and isinstance(e.a, Var):
        d = const_of(e.b)
        return (e.a, d, m) if d is not None and d >= 1 else None
    return None


def _digit(e, c: Var) -> "tuple | None":
    """``(d, m)`` when ``e`` is ``c // d % m``, ``c % m`` (``d`` 1) or ``c // d`` (``m`` None)
    with positive constants; None otherwise."""
    got = digit_of(e)
    if got is not None and got[0] is c:
        return None if e is c else got[1:]  # ``c`` itself is no digit
    if isinstance(e, FloorDiv) and isinstance(e.a, FloorMod) and e.a.a is c:
        # c % M // d is the digit c // d % (M // d) when d divides M (dlight writes it so)
        big, d = const_of(e.a.b), const_of(e.b)
        if big is not None and d is not None and d >= 1 and big >= d and big % d == 0:
            return (d, big // d)
    return None


def _digits_of(parts, c: Var) -> "list | None":
    """The digits ``(d, m)`` through which ``parts`` read ``c``, or None when ``c`` also
    occurs any other way."""
    found: list = []
    bad = []

    def visit(e):
        if bad:
            return
        dig = _digit(e, c)
        if dig is not None:
            if dig not in found:
                found.append(dig)
            return
        if e is c:
            bad.append(e)
            return
        for ch in children(e):
            visit(ch)

    for part in parts:
        visit(part)
    return None if bad else found


def _tiling(digits: list, extent: int) -> "list | None":
    """``[(d, m, extent of the digit)]`` from the least significant up when the digits tile
    ``[0, extent)`` exactly (``c % m0``, ``c // m0 % m1``, ..., ``c // (m0 * ... )``); None
    otherwise. A last digit written with a remainder is the same digit when the remainder
    is its whole range."""
    out, d = [], 1
    rest = sorted(digits, key=lambda dm: dm[0])
    for k, (dd, m) in enumerate(rest):
        if dd != d:
            return None
        last = k == len(rest) - 1
        if m is None:
            if not last or extent % d:
                return None
            out.append((dd, m, extent // d))
            return out
        if last:
            if d * m != extent:
                return None
        out.append((dd, m, m))
        d *= m
    return out if d == extent and len(out) > 1 else None


def _flattened(parts, c: Var, tiles: list, apart=False) -> bool:
    """Whether every load or store indexing one axis per digit of ``c`` (an index that is the
    digit itself) gives the digits consecutive axes, most significant first: ``c`` is then
    a flattening of adjacent axes (dlight fused ``kh, kw`` into one variable). A packed
    layout's channel (``data[n, ic // 4, h, w, ic % 4]``, TVM's own conv2d_NCHWc) puts its
    digits on axes far apart and keeps TVM's form, which its recognizer reads. With
    ``apart`` (no buffer of the function can be read as packed), the digits' axes need only
    be in order: dlight fuses a reduction over axes 0 and 2 (``x[c // 8, i, c % 8]``);
    ``apart`` may be a function giving that answer, asked only where digits sit on several
    axes."""
    rank = {(d, m): k for k, (d, m, _) in enumerate(reversed(tiles))}
    rank.update({(d, None): k for k, (d, m, _) in enumerate(reversed(tiles)) if m is not None})
    ok = [True]

    def visit(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            dims = [(dim, rank.get(_digit(i, c))) for dim, i in enumerate(n.indices) if _digit(i, c) is not None]
            if len(dims) > 1:
                ks = [k for _, k in dims]
                ds = [dim for dim, _ in dims]
                if ks != list(range(ks[0], ks[0] + len(ks))):
                    ok[0] = False
                elif ds != (sorted(set(ds)) if (apart() if callable(apart) else apart) else list(range(ds[0], ds[0] + len(ds)))):
                    ok[0] = False

    for part in parts:
        post_order_visit(part, visit)
    return ok[0]


def _symbolic_tiling(digits: list, extent) -> "list | None":
    """:func:`_tiling` for a symbolic extent (dlight's fused reduction over a batch ``n`` and
    constant axes, ``[0, n * 12)`` read as ``c // 12``, ``c % 12 // 3``, ``c % 3``): the top
    digit must be ``c // D`` with every coefficient of the extent's affine form (no constant
    term) divisible by ``D``; its extent is the form divided by ``D`` (an expression). None
    otherwise."""
    form = affine(extent)
    if form is None or ONE in form or not form:
        return None
    rest = sorted(digits, key=lambda dm: dm[0])
    if not rest or rest[-1][1] is not None:
        return None
    top = rest[-1][0]
    if any(c % top for c in form.values()):
        return None
    from .predicate_enum import _form_expr

    tiles = _tiling(rest[:-1] + [(top, None)], top)  # the digits below the top one tile [0, top)
    if tiles is None or tiles[-1][0] != top:
        return None
    return tiles[:-1] + [(top, None, _form_expr({atom: c // top for atom, c in form.items()}, extent.dtype))]


def _split_once(realize: BlockRealize, apart=False, spatial=False) -> "BlockRealize | None":
    block = realize.block
    if (block.init is None) != spatial or not block.iter_vars:
        return None
    parts = _parts(block) + list(block.reads) + list(block.writes)
    for pos, iv in enumerate(block.iter_vars):
        extent = const_of(iv.dom.extent)
        if iv.kind not in (IterKind.REDUCE, IterKind.SPATIAL) or const_of(iv.dom.min) != 0:
            continue
        digits = _digits_of(parts, iv.var)
        if not digits:
            continue
        tiles = _tiling(digits, extent) if extent is not None else _symbolic_tiling(digits, iv.dom.extent)
        # a spatial variable too: a reduction restored over dlight's rows that fuse a batch
        # stores ``C[c // 5, c % 5, j]`` (:mod:`.pad_views`); as for a reduction variable,
        # digits on axes apart only where no buffer reads as packed (a packed channel keeps
        # TVM's form)
        if tiles is None or not _flattened(_parts(block), iv.var, tiles, apart):
            continue
        c, value, dtype = iv.var, realize.iter_values[pos], iv.dom.extent.dtype
        fresh, mapping, bindings = [], {}, []
        for d, m, ext in reversed(tiles):  # outermost first
            var = Var(f"{c.name}_{len(fresh)}", c.dtype)
            fresh.append(IterVar(var, Range(IntImm(dtype, 0), ext if not isinstance(ext, int) else IntImm(dtype, ext)),
                                 iv.kind))
            bound = value if d == 1 else FloorDiv(value, IntImm(value.dtype, d))
            if m is not None and (extent is None or d * m != extent):
                bound = FloorMod(bound, IntImm(value.dtype, m))
            bindings.append(bound)
            mapping[(d, m)] = var
            if m is not None and extent is not None and d * m == extent:
                mapping[(d, None)] = var

        def pre(n):
            dig = _digit(n, c)
            return mapping.get(dig) if dig is not None else None

        def renamed(node):
            return transform(node, lambda n: None, pre)

        iter_vars = block.iter_vars[:pos] + tuple(fresh) + block.iter_vars[pos + 1:]
        values = realize.iter_values[:pos] + tuple(bindings) + realize.iter_values[pos + 1:]
        new = attrs.evolve(block, iter_vars=iter_vars, body=renamed(block.body),
                           init=renamed(block.init) if block.init is not None else None,
                           reads=tuple(renamed(r) for r in block.reads),
                           writes=tuple(renamed(w) for w in block.writes))
        return attrs.evolve(realize, iter_values=values, block=new)
    return None


def split_fused_reductions(func: PrimFunc, spatial: bool = False) -> PrimFunc:
    """``func`` with every reduction variable read only through digits that tile its
    extent split into one variable per digit (see the module doc). With ``spatial``, the
    variables of blocks without an init instead (:func:`split_fused_copies`)."""
    from .unpack import unpack_all

    known: list = []

    def apart() -> bool:
        # asked only of a block whose digits sit on several axes: unpacking every buffer of
        # the function is the costly part of this pass, and most functions have no digits
        if not known:
            known.append(unpack_all(func) is None)
        return known[0]

    def post(n):
        if not isinstance(n, BlockRealize):
            return None
        out = None
        while True:
            step = _split_once(out if out is not None else n, apart, spatial)
            if step is None:
                return out
            out = step

    return transform_stmts(func, post)


def split_fused_copies(func: PrimFunc) -> PrimFunc:
    """``func`` with the variables of blocks that have no init split as
    :func:`split_fused_reductions` splits a reduction's: a copy TVM wrote from the fused
    thread coordinates of a cache (``out[c // 27, c % 27 // 3, c % 3, j] = cache[c // 27, j,
    c % 27 // 3, c % 3]``) stores at one variable per axis once split, and reads as the
    permuting copy it is. The same renaming of block coordinates: the loops, the order the
    instances run in and every value stored are unchanged."""
    return split_fused_reductions(func, spatial=True)

"""Two reduction variables that only ever appear as ``a * F + b`` become one.

A reduction split into an outer and an inner part and then ``rfactor``-ed (TVM's dlight GPU
rules do this to every row reduction: the inner part goes to the threads, the outer one is
what each thread sums) leaves, once :mod:`.rfactor` has merged the two blocks back, a block
with two reduction variables ``a`` in ``[0, A)`` and ``b`` in ``[0, F)`` reading
``x[s, a * F + b]``. The reduction recognizers want one variable per reduced axis.

When every integer expression of the block that uses ``a`` or ``b`` is affine in them with
``a``'s coefficient ``F`` times ``b``'s (and neither sits inside a ``//``, a ``%`` or a
product of variables), ``(a, b) -> c = a * F + b`` is a bijection of ``[0, A) x [0, F)`` onto
``[0, A * F)`` and every such expression is the same function of ``c``: ``a`` is replaced by 0
and ``b`` by ``c``, the block binds ``c`` to ``value_a * F + value_b``. The loops, the order
the block instances run in and every value they compute are unchanged; only the block's
coordinates are renamed.
"""
from __future__ import annotations

import attrs

from tir.expr import (Add, Cast, Div, FloorDiv, FloorMod, IntImm, Max, Min, Mod, Mul, PrimExpr, Sub, Var)
from tir.function import PrimFunc
from tir.functor import substitute, transform
from tir.buffer import Range
from tir.stmt import Block, BlockRealize, IterKind, IterVar

from .affine import affine, const_of
from .probe import collect_vars

_INT_ARITH = (Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max, Var, IntImm, Cast)


def _int_exprs(node) -> list:
    """The maximal integer arithmetic expressions under ``node`` (an index, an operand of a
    comparison, a stored index value), not looking inside them."""
    found: list = []

    def pre(n):
        if isinstance(n, _INT_ARITH) and isinstance(n, PrimExpr) and not n.dtype.is_float and n.dtype.lanes == 1 \
                and not n.dtype.is_bool:
            found.append(n)
            return n
        return None

    transform(node, lambda n: None, pre)
    return found


def _uses(e, a: Var, b: Var) -> bool:
    """Whether ``e`` reads ``a`` or ``b`` (one walk of it)."""
    seen: set = set()
    collect_vars(e, seen)
    return any(v is a or v is b for v in seen)


def _fusable(exprs: list, a: Var, b: Var, inner: int) -> bool:
    """Every expression using ``a`` or ``b`` is affine in them, with coefficient(a) ==
    ``inner`` * coefficient(b), and neither appears inside one of its non-variable atoms."""
    used = False
    for e in exprs:
        if not _uses(e, a, b):
            continue
        used = True
        form = affine(e)
        if form is None:
            return False
        for atom in form:
            if isinstance(atom, PrimExpr) and not isinstance(atom, Var) and _uses(atom, a, b):
                return False
        ca = next((c for k, c in form.items() if k is a), 0)
        cb = next((c for k, c in form.items() if k is b), 0)
        if ca != inner * cb:
            return False
    return used


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


def _renamed(node, mapping: dict):
    return transform(substitute(node, mapping), _drop_zeros)


def _parts(block: Block) -> list:
    return [p for p in (block.body, block.init) if p is not None]


def _fuse_once(realize: BlockRealize) -> "BlockRealize | None":
    block = realize.block
    reduce = [(k, iv) for k, iv in enumerate(block.iter_vars)
              if iv.kind == IterKind.REDUCE and const_of(iv.dom.min) == 0 and const_of(iv.dom.extent) is not None]
    if len(reduce) < 2:
        return None
    exprs = [e for part in _parts(block) for e in _int_exprs(part)]
    for ka, outer in reduce:
        for kb, inner in reduce:
            if ka == kb:
                continue
            f = const_of(inner.dom.extent)
            if f < 1 or not _fusable(exprs, outer.var, inner.var, f):
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
                               body=_renamed(block.body, mapping),
                               init=_renamed(block.init, mapping) if block.init is not None else None,
                               reads=tuple(_renamed(r, mapping) for r in block.reads),
                               writes=tuple(_renamed(w, mapping) for w in block.writes))
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

    return transform(func, post)

"""Padded copies of a flattened view: dlight's Matmul rule over a batch it folds into rows.

A batched operand times a 2-D one is tiled by dlight as one GEMM whose rows run over the batch
and the rows together, padded to the tile (15 rows of a (3, 5, 7) input, padded to 32)::

    x_pad[v, k] = if_then_else(v < 15 and k < 7, x[v // 5, v % 5, k], 0)
    C_pad[v, j] += x_pad[v, k] * y_pad[k, j]
    C[v // 5, v % 5, j] = C_pad[v, j]

(and a batched matmul over two batch axes fuses them, ``x[v0 // 3, v0 % 3, i, k]``). The
padded axis ``v`` stands for several axes of the parameter: its digits ``v // 5`` and
``v % 5`` index them, and the product of their extents (15) is the axis's logical extent.
:func:`view_pad_source` and :func:`view_crop` read such a producer and such a write-back
(``view``: for each axis of the parameter, the padded axis and the digit ``// s % m`` of it
that indexes it); :mod:`.pad_einsum` then restores the op over the logical extents, reading
and storing the parameters through the same digits, and :func:`.reduce_fuse.split_fused_reductions`
gives each digit a variable of its own. Every digit is checked to tile its axis exactly:
the view is a bijection of the logical extent onto the parameter's axes.
"""
from __future__ import annotations

import math

from tir.expr import LT, FloorDiv, FloorMod, IntImm, Var

from .affine import const_of
from .recognize.guard import conjuncts
from .reduce_fuse import digit_of


def digit_view(indices, padded_vars: list, shape) -> "tuple | None":
    """(view, logical extents) of a parameter indexed at ``indices`` (of ``shape``, constant)
    through digits of ``padded_vars`` (the variables indexing the padded buffer, one per
    axis): ``view[j] = (padded axis, s, m)``, or ``(None, 0, None)`` for a unit axis of the
    parameter read at 0; the digits of each padded axis tile its logical extent exactly,
    most significant digit on the lowest parameter axis. None when some index is no such
    digit, a padded axis is not read, or no axis is split (a plain copy)."""
    where = {id(v): d for d, v in enumerate(padded_vars)}
    view, per_axis = [], {}
    for j, index in enumerate(indices):
        got = digit_of(index)
        extent = const_of(shape[j])
        if got is None and const_of(index) == 0 and extent == 1:
            view.append((None, 0, None))  # a unit axis of the parameter, read at 0
            continue
        if got is None or id(got[0]) not in where or extent is None:
            return None
        d = where[id(got[0])]
        view.append((d, got[1], got[2]))
        per_axis.setdefault(d, []).append((got[1], got[2], extent, j))
    if len(per_axis) != len(padded_vars) or all(len(ds) == 1 for ds in per_axis.values()):
        return None
    logical = []
    for d in range(len(padded_vars)):
        digits = sorted(per_axis[d], key=lambda t: t[0])  # least significant first
        span = 1
        for k, (s, m, extent, j) in enumerate(digits):
            last = k == len(digits) - 1
            if s != span or (m is not None and m != extent) or (m is None and not last):
                return None
            span *= extent
        if [j for *_, j in sorted(digits, key=lambda t: -t[0])] != sorted(j for *_, j in digits):
            return None  # the digits run over the parameter's axes in order
        if len(digits) == 1 and (digits[0][0] != 1 or digits[0][1] is not None):
            return None  # one digit must be the variable itself
        logical.append(span)
    return tuple(view), logical


def apply_view(indices, view) -> tuple:
    """The parameter's indices for the padded buffer's ``indices`` through ``view``."""
    out = []
    for d, s, m in view:
        if d is None:
            out.append(IntImm(indices[0].dtype, 0))
            continue
        e = indices[d]
        if s != 1:
            e = FloorDiv(e, IntImm(e.dtype, s))
        if m is not None:
            e = FloorMod(e, IntImm(e.dtype, m))
        out.append(e)
    return tuple(out)


def view_pad_source(block) -> "tuple | None":
    """(padded buffer, source, logical extents, view) of a pad producer ``P[w] =
    if_then_else(cond, X[digits of w], c)`` over P's whole extent, the condition testing
    exactly the axes where P is longer than the logical extent (``w_d < logical_d``); the
    logical extents typed as P's."""
    from .pad_einsum import _pad_store, _same

    found = _pad_store(block)
    if found is None:
        return None
    store, cond, load, ivs = found
    viewed = digit_view(load.indices, [iv.var for iv in ivs], load.buffer.shape)
    if viewed is None:
        return None
    view, logical = viewed
    short = {}
    for iv, p_ext, x_ext in zip(ivs, store.buffer.shape, logical):
        p = const_of(p_ext)
        if not _same(iv.dom.extent, p_ext) or p is None or p < x_ext:
            return None
        if p > x_ext:
            short[id(iv.var)] = x_ext
    seen = set()
    for term in conjuncts(cond):
        if not isinstance(term, LT) or not isinstance(term.a, Var) or id(term.a) not in short:
            return None
        if const_of(term.b) != short[id(term.a)] or id(term.a) in seen:
            return None
        seen.add(id(term.a))
    if len(seen) != len(short):
        return None
    return store.buffer, load.buffer, _typed(logical, store.buffer), view


def view_crop(block) -> "tuple | None":
    """(output, padded source, logical extents, view) of a write-back ``C[digits of w] =
    C_pad[w]`` over the logical extents (C's whole extent through the view); the logical
    extents typed as C_pad's."""
    from .pad_einsum import _copy_back, _same

    found = _copy_back(block)
    if found is None:
        return None
    store, load = found
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    own = list(load.indices)
    if len(own) != len(block.iter_vars) or len({id(i) for i in own}) != len(own) or \
            not all(isinstance(i, Var) and id(i) in ivs for i in own):
        return None
    viewed = digit_view(store.indices, own, store.buffer.shape)
    if viewed is None:
        return None
    view, logical = viewed
    for i, extent, padded in zip(own, logical, load.buffer.shape):
        iv = ivs[id(i)]
        p = const_of(padded)
        if const_of(iv.dom.min) != 0 or not _same(iv.dom.extent, IntImm(iv.dom.extent.dtype, extent)) \
                or p is None or p < extent:
            return None
    if math.prod(logical) != math.prod(const_of(e) for e in store.buffer.shape):
        return None
    return store.buffer, load.buffer, _typed(logical, load.buffer), view


def _typed(extents: list, padded) -> list:
    """``extents`` (ints, one per axis of ``padded``) as constants of its extents' type."""
    return [IntImm(e.dtype, x) for e, x in zip(padded.shape, extents)]

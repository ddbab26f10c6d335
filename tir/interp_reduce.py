"""Vectorised reductions: blocks whose every store is ``C[s] = C[s] op f`` with a commutative ``op``.

The reduction of ``f`` over the reduction axes of the grid is computed in one go (a numpy
ufunc reduction, or ``einsum`` when ``f`` is a product, which turns convolutions and
matmuls into BLAS calls) and then combined with the value ``C[s]`` holds after the init.
"""
from __future__ import annotations

import attrs
import numpy as np

from . import expr as E
from . import stmt as S
from .functor import post_order_visit, substitute
from .interp_data import np_dtype
from .interp_expr import evaluate, max_of, min_of
from .loop_nest import free_vars, predicate_reduces, reduce_vars
from .structural import same_ir

_UFUNCS = {E.Add: np.add, E.Mul: np.multiply, E.Max: np.maximum, E.Min: np.minimum}
_CHUNK_ELEMS = 1 << 24
"""Largest grid (in elements) a generic reduction materialises at once."""


@attrs.frozen
class Combine:
    """One store ``buffer[indices] = buffer[indices] op value``."""

    store: S.BufferStore
    op: type
    value: E.PrimExpr


class _NotSimple(Exception):
    pass


def reduce_stores(block: S.Block) -> "list | None":
    """The stores of the block body with its lets inlined, or None if it holds anything else."""
    out = []

    def walk(s, subst):
        if isinstance(s, S.SeqStmt):
            for c in s.seq:
                walk(c, subst)
        elif isinstance(s, S.LetStmt):
            walk(s.body, {**subst, s.var: substitute(s.value, subst)})
        elif isinstance(s, S.BufferStore):
            out.append(substitute(s, subst))
        else:
            raise _NotSimple

    try:
        walk(block.body, {})
    except _NotSimple:
        return None
    return out


def _loads_any(node, buffers) -> bool:
    hit = [False]
    post_order_visit(node, lambda n: hit.__setitem__(0, True) if isinstance(n, E.BufferLoad) and n.buffer in buffers else None)
    return hit[0]


def _split_update(st: S.BufferStore):
    v = st.value
    if type(v) not in _UFUNCS:
        return None
    for own, other in ((v.a, v.b), (v.b, v.a)):
        if isinstance(own, E.BufferLoad) and own.buffer is st.buffer and same_ir(own.indices, st.indices):
            return Combine(st, type(v), other)
    return None


def _identity(op: type, d) -> "E.PrimExpr | None":
    """The constant ``x op c == x`` for every ``x`` of type ``d`` (-0.0 for a float sum:
    ``-0.0 + -0.0`` stays -0.0), or None."""
    if d.lanes != 1 or d.is_bool or not (d.is_float or d.is_integer):
        return None
    if op is E.Add:
        return E.const(-0.0 if d.is_float else 0, d)
    if op is E.Mul:
        return E.const(1, d)
    if d.is_float:
        return E.const(float("-inf") if op is E.Max else float("inf"), d)
    info = np.iinfo(np_dtype(d))
    return E.const(info.min if op is E.Max else info.max, d)


def plan_combine(nest, stores) -> "list | None":
    """The stores as Combines if the whole block is a commutative reduction, else None.

    A predicate over the reduction loops folds into each value: lanes it masks contribute
    the combine's identity (see :func:`.interp_nest._run_combine` for the lanes stored)."""
    reducing = reduce_vars(nest)
    masked = predicate_reduces(nest)
    written = [st.buffer for st in stores]
    if len(set(written)) != len(written):
        return None
    combines = []
    for st in stores:
        c = _split_update(st)
        if c is None or _loads_any(c.value, set(written)):
            return None
        if any(free_vars(i) & reducing for i in st.indices):
            return None
        if masked:
            unit = _identity(c.op, c.value.dtype)
            if unit is None:
                return None
            c = attrs.evolve(c, value=E.if_then_else(nest.realize.predicate, c.value, unit))
        combines.append(c)
    return combines


def combine_all(nest, combines, shape, ctx, mask) -> None:
    """Reduce every Combine's value over the reduction axes and fold it into its buffer."""
    reduced = [None if _in_order(nest, c, shape) else reduce_value(nest, c, shape, ctx, mask) for c in combines]
    for c, red in zip(combines, reduced):
        st = c.store
        idx = [evaluate(i, ctx, mask) for i in st.indices]
        data = ctx.data(st.buffer)
        cur = data.load(idx, mask, ctx.where)
        if red is None:
            new = _fold_in_order(nest, c, shape, ctx, mask, cur)
        else:
            new = _fold(c.op, cur, red)
        data.store(idx, new, mask, ctx.where)


def _in_order(nest, c: Combine, shape) -> bool:
    """A sum or product accumulated in a half-precision type: every step rounds (TVM's build
    and the C engine add in loop order), so the order decides the result; folded step by
    step in the nest's order of the reduction loops instead of numpy's pairwise reduction."""
    d = c.value.dtype
    return bool(nest.reduce_axes) and c.op in (E.Add, E.Mul) and d.is_float and d.bits == 16 \
        and int(np.prod(shape, dtype=np.int64)) <= _CHUNK_ELEMS


def _fold_in_order(nest, c, shape, ctx, mask, cur):
    """``cur op v_0 op v_1 ...`` over the reduction iterations in loop order (outer reduction
    loops first), rounding to the value's type at every step."""
    from .interp_data import round_bfloat16

    axes = list(nest.reduce_axes)
    npd = np_dtype(c.value.dtype)
    v = np.asarray(evaluate(c.value, ctx, mask))
    k = len(shape)
    r_shape = tuple(s if a in axes else 1 for a, s in enumerate(shape))
    full = np.broadcast_to(v, np.broadcast_shapes(v.shape, r_shape, np.shape(cur)))
    kept = [a for a in range(k) if a not in axes]
    steps = np.moveaxis(full, axes, list(range(k - len(axes), k)))
    steps = steps.reshape(steps.shape[:len(kept)] + (-1,))
    acc_shape = tuple(full.shape[a] if a in kept else 1 for a in range(k))
    acc = np.broadcast_to(np.asarray(cur), acc_shape).reshape(steps.shape[:-1]).astype(npd)
    ufunc = _UFUNCS[c.op]
    if npd != np.float16:  # bfloat16 (the other 16-bit float) held as float32: round each step explicitly
        for j in range(steps.shape[-1]):
            acc = round_bfloat16(ufunc(acc, steps[..., j]).astype(npd))
    else:
        acc = ufunc.accumulate(np.concatenate([acc[..., None], steps.astype(npd)], axis=-1), axis=-1,
                               dtype=npd)[..., -1]
    return acc.reshape(acc_shape)


def _fold(op, cur, red):
    if op is E.Max:
        return max_of(cur, red)
    if op is E.Min:
        return min_of(cur, red)
    return _UFUNCS[op](cur, red)


def reduce_value(nest, c: Combine, shape, ctx, mask):
    """``op``-reduction of ``c.value`` over the reduction axes (kept as size-1 axes)."""
    axes = nest.reduce_axes
    npd = np_dtype(c.value.dtype)
    if not axes:
        return evaluate(c.value, ctx, mask)
    if c.op is E.Add and npd.kind == "f" and npd.itemsize >= 4:
        out = _einsum(c.value, shape, axes, ctx, mask)
        if out is not None:
            return out.astype(npd, copy=False)
    return _chunked_reduce(nest, c, shape, ctx, mask, npd)


def _chunked_reduce(nest, c, shape, ctx, mask, npd):
    ufunc = _UFUNCS[c.op]
    axes = nest.reduce_axes
    total = int(np.prod(shape, dtype=np.int64))
    big = max(axes, key=lambda a: shape[a])
    step = max(1, shape[big] * _CHUNK_ELEMS // max(total, 1))
    if step >= shape[big]:
        return _reduce_once(c, ufunc, shape, axes, ctx, mask, npd)
    from .interp_nest import bind_iter_vars
    from .interp_stmt import scalar_int

    loop = nest.loops[big]
    lo = scalar_int(loop.min, ctx, "loop start")
    dims = [1] * len(shape)
    acc = None
    for start in range(0, shape[big], step):
        stop = min(start + step, shape[big])
        dims[big] = stop - start
        ctx.vars[loop.loop_var] = np.arange(lo + start, lo + stop, dtype=np_dtype(loop.loop_var.dtype)).reshape(dims)
        bind_iter_vars(nest, ctx, (S.IterKind.REDUCE,))
        part_shape = tuple(dims[big] if a == big else s for a, s in enumerate(shape))
        part = _reduce_once(c, ufunc, part_shape, axes, ctx, mask, npd)
        acc = part if acc is None else _fold(c.op, acc, part)
    return acc


def _reduce_once(c, ufunc, shape, axes, ctx, mask, npd):
    v = evaluate(c.value, ctx, mask)
    r_shape = tuple(s if a in axes else 1 for a, s in enumerate(shape))
    full = np.broadcast_to(v, np.broadcast_shapes(np.shape(v), r_shape))
    return ufunc.reduce(full, axis=axes, keepdims=True, dtype=npd)


def _factors(e) -> list:
    if isinstance(e, E.Mul):
        return _factors(e.a) + _factors(e.b)
    return [e]


def _einsum(value, shape, axes, ctx, mask):
    """Sum over ``axes`` of a product of factors as an einsum; None if it is not one."""
    factors = _factors(value)
    if len(factors) < 2:
        return None
    k = len(shape)
    scale, operands, used = None, [], set()
    for f in factors:
        v = evaluate(f, ctx, mask)
        if np.ndim(v) == 0:
            scale = v if scale is None else scale * v
            continue
        if np.ndim(v) != k:
            return None
        subs = [a for a in range(k) if v.shape[a] > 1]
        operands += [v.reshape([v.shape[a] for a in subs]), subs]
        used.update(subs)
    if len(operands) < 4 or any(shape[a] > 1 and a not in used for a in axes):
        return None
    out_subs = sorted(used - set(axes))
    res = np.einsum(*operands, out_subs, optimize=True)
    res = np.asarray(res).reshape([shape[a] if a in out_subs else 1 for a in range(k)])
    return res if scale is None else res * scale

"""matmul: ``out[..., i, j] = sum_k A[..., i, k] * B[..., k, j]`` (vectors and broadcast
batch dimensions included)."""
from __future__ import annotations

from tir.expr import BufferLoad, Cast, Mul

from ..affine import const_of, extents_differ, float_of
from ..semantic import Reduce
from .common import Match, Space, strip


def _load(e, ctx):
    while isinstance(e, (Cast,)):
        e = e.value
    e = strip(e)
    return e if isinstance(e, BufferLoad) and ctx.is_param(e.buffer) else None


def _batch_ok(load, nmat, out_batch) -> bool:
    batch = load.indices[:len(load.indices) - nmat]
    if len(batch) > len(out_batch):
        return False
    shift = len(out_batch) - len(batch)
    for d, i in enumerate(batch):
        if i is out_batch[shift + d]:
            continue
        if const_of(i) == 0 and const_of(load.buffer.shape[d]) == 1:
            continue
        return False
    return True


def match_matmul(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "sum" or len(e.axes) != 1:
        return None
    # the product is the reduction's own: TVM's matmul is one block. A product written by
    # a block of its own is a multiply op whose result a sum reads (FuseTIR keeps both).
    src = e.source
    if float_of(e.init) != 0.0 or not isinstance(src, Mul):
        return None
    a, b = _load(src.a, ctx), _load(src.b, ctx)
    k = e.axes[0].var
    if a is None or b is None or a.indices[-1] is not k:
        return None
    out = space.indices
    if len(a.indices) == 1 and len(b.indices) == 1:
        ok = b.indices[0] is k and len(out) == 0  # vector . vector: a 0-d result
    elif len(b.indices) == 1:
        if b.indices[0] is not k or len(a.indices) < 2 or a.indices[-2] is not out[-1]:
            return None
        ok = _batch_ok(a, 2, out[:-1])
    elif len(a.indices) == 1:
        if b.indices[-2] is not k or b.indices[-1] is not out[-1]:
            return None
        ok = _batch_ok(b, 2, out[:-1])
    else:
        if b.indices[-2] is not k or b.indices[-1] is not out[-1] or a.indices[-2] is not out[-2]:
            return None
        ok = _batch_ok(a, 2, out[:-2]) and _batch_ok(b, 2, out[:-2])
    if not ok or not (_whole(a, space, e) and _whole(b, space, e)):
        return None
    return Match("matmul", {}, (("lhs", a, space), ("rhs", b, space)))


def _whole(load, space: Space, e: Reduce) -> bool:
    """Every axis of ``load`` read at a variable runs over its whole extent: the reduction's
    over the operand's reduced axis, an output variable's over its axis (a matmul reads whole
    matrices; a block of a larger buffer is something else). A symbolic extent may take the
    value: TVM legalizes a matmul of an ``(n,)`` vector by a ``(3, 4)`` matrix, reading
    ``x[k]`` for ``k < 3``, trusting ``n`` to be 3."""
    extents = {id(v): x for v, x in zip(space.indices, space.extents)}
    extents.update({id(iv.var): iv.dom.extent for iv in e.axes})
    for i, n in zip(load.indices, load.buffer.shape):
        x = extents.get(id(i))
        if x is not None and extents_differ(x, n):
            return False
    return True

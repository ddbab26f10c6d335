"""gather_nd (attribute ``batch_dims``) in the form Relax's legalization gives it.

``gather_nd(x, y, batch_dims=b)`` with ``y`` of shape ``(B..., K'..., M)`` (``K = rank(y) - 1``
leading axes, the first ``b`` of them batch axes shared with ``x``) computes

    out[o_0, .., o_K-1, r...] = x[o_0, .., o_b-1, y[o_0, .., o_K-1, 0], .., y[o_0, .., o_K-1, M-1], r...]

TVM reads ``y`` through a transposed copy (``T_transpose[m, o...] = y[o..., m]``), which the
analysis inlines, so each gathered index is ``y`` read at the leading output indices and a
constant last index. ``b`` is the number of data indices before the first gathered one; no
other batch_dims writes the same loads. A ``take`` reads its indices at output indices only
(no constant position), so it never has this form.
"""
from __future__ import annotations

from tir.expr import BufferLoad, Cast, Var

from ..affine import const_of
from .common import Match, Space, strip
from .movement_index import pure_space


def _plain(e):
    e = strip(e)
    while isinstance(e, Cast) and e.dtype.is_integer:
        e = strip(e.value)
    return e


def _same(a, b) -> bool:
    """Equal extents: equal constants, or the same symbolic expression."""
    ca, cb = (v if isinstance(v, int) else const_of(v) for v in (a, b))
    if ca is not None or cb is not None:
        return ca == cb
    return a is b or a == b


def _split(load, space: Space, ctx) -> "tuple | None":
    """(b, gathered index loads, trailing output positions) of the data load's indices."""
    pos = {id(v): j for j, v in enumerate(space.indices)}
    kinds = []
    for idx in load.indices:
        e = _plain(idx)
        if isinstance(e, Var) and id(e) in pos:
            kinds.append(("out", pos[id(e)]))
        elif isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and e.buffer.dtype.is_integer:
            kinds.append(("idx", e))
        else:
            return None
    gathered = [d for d, (k, _) in enumerate(kinds) if k == "idx"]
    if not gathered:
        return None
    b, M = gathered[0], len(gathered)
    if gathered != list(range(b, b + M)):
        return None
    if [j for _, j in kinds[:b]] != list(range(b)):
        return None
    trailing = [j for _, j in kinds[b + M:]]
    return b, [e for _, e in kinds[b:b + M]], trailing


def _indices_ok(loads, space: Space, K: int) -> bool:
    """Each gathered load reads ``y[o_0, .., o_K-1, m]`` for its position ``m``, one ``y``."""
    y = loads[0].buffer
    for m, e in enumerate(loads):
        if e.buffer is not y or len(e.indices) != K + 1 or const_of(e.indices[-1]) != m:
            return False
        if not all(_plain(i) is space.indices[j] for j, i in enumerate(e.indices[:-1])):
            return False
    return _same(y.shape[-1], len(loads))


def match_gather_nd(expr, space: Space, ctx) -> "Match | None":
    load = strip(expr)
    if not (isinstance(load, BufferLoad) and ctx.is_param(load.buffer)) or not pure_space(space):
        return None
    got = _split(load, space, ctx)
    if got is None:
        return None
    b, loads, trailing = got
    K = space.rank - len(trailing)
    if trailing != list(range(K, space.rank)) or b > K or not _indices_ok(loads, space, K):
        return None
    x, y, M = load.buffer, loads[0].buffer, len(loads)
    if not all(_same(x.shape[d], y.shape[d]) for d in range(b)):
        return None
    if not all(_same(space.extents[j], y.shape[j]) for j in range(K)):
        return None
    if not all(_same(space.extents[K + t], x.shape[b + M + t]) for t in range(len(trailing))):
        return None
    return Match("gather_nd", {"batch_dims": b}, (("data", load, space), ("indices", loads[0], space)))

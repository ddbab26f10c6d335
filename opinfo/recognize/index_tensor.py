"""``index_tensor`` (numpy advanced indexing ``x[i0, i1, ...]``), named by its compute tag.

TVM lowers ``index_tensor(x, (i0, ..., ik-1))`` to one block tagged ``advanced_index``:
``out[b..., r...] = x[i0[b...], ..., ik-1[b...], r...]``, the index tensors broadcast
(numpy style, through ``T_broadcast_to`` copies when there are several) to the leading
output axes ``b``, the rest of ``x``'s axes read in order by the trailing ones ``r``. With
one index tensor that is exactly ``take(x, i0, axis=0)``'s loop, so the loops alone cannot
name it: the tag can (compare :mod:`.bool_xor`). A block with another tag is left to the
take recognizer; an ``advanced_index`` block in another form is not named.
"""
from __future__ import annotations

from tir.expr import BufferLoad

from ..semantic import Inlined
from ..tags import tag
from .common import Match, Space, aligned, strip
from .movement_index import pure_space

TAG = "advanced_index"


def _tagged(expr, ctx) -> bool:
    """``expr`` is the whole value of one output block tagged ``advanced_index``."""
    sem = ctx.sem
    stages = [s for s in sem.outputs() if sem.meaning(s) == expr]
    return len(stages) == 1 and tag(stages[0].block.name) == TAG


def _index_tensor(e, ctx) -> "BufferLoad | None":
    """An integer parameter read directly or through a pure copy (``T_broadcast_to``)."""
    if isinstance(e, Inlined):
        e = strip(e)
    if not (isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and e.buffer.dtype.is_integer):
        return None
    return e


def match_index_tensor(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not (isinstance(e, BufferLoad) and ctx.is_param(e.buffer)) or not pure_space(space):
        return None
    k = next((d for d, i in enumerate(e.indices) if _index_tensor(i, ctx) is None), len(e.indices))
    rest = len(e.indices) - k
    b = space.rank - rest
    if k == 0 or b < 0:
        return None
    if any(i is not v for i, v in zip(e.indices[k:], space.indices[b:])):
        return None
    lead = Space(space.indices[:b], space.extents[:b], space.dom)
    idx = [_index_tensor(i, ctx) for i in e.indices[:k]]
    if not all(aligned(i, lead) for i in idx) or not _tagged(expr, ctx):
        return None
    inputs = (("data", e, space),) + tuple((f"indices{n}", i, space) for n, i in enumerate(idx))
    return Match("index_tensor", {}, inputs)

"""``index_tensor`` (numpy advanced indexing) as TVM's topi ``index_tensor`` writes it: the
index tensors, when there are several, broadcast to one shape by ``T_broadcast_to`` copies,
then one ``advanced_index`` block ``out[b..., r...] = x[i0[b...], ..., r...]``."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder
from .broadcast import broadcast_shape
from .common import OpError
from .transform import broadcast_to


def index_tensor(b: Builder, x: Buffer, *indices: Buffer) -> Buffer:
    """``x[indices[0], ..., indices[k-1]]`` over the first ``k`` axes of ``x``."""
    if not indices or len(indices) > x.ndim:
        raise OpError("index_tensor", "indices", f"expected 1 to {x.ndim} index tensors, got {len(indices)}")
    if not all(i.dtype.is_integer for i in indices):
        raise OpError("index_tensor", "indices", "must be integer tensors")
    shape = broadcast_shape([i.shape for i in indices], "index_tensor")
    if len(indices) > 1:
        indices = tuple(broadcast_to(b, i, shape) for i in indices)
    lead, k = len(shape), len(indices)

    def body(*v):
        picks = tuple(i[v[lead - i.ndim:lead]] for i in indices)
        return x[picks + tuple(v[lead:])]

    out_shape = list(shape) + list(x.shape[k:])
    return b.compute("advanced_index", out_shape, body, names=[f"ax{d}" for d in range(len(out_shape))])

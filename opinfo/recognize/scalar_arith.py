"""A binary arithmetic op of a tensor and a scalar constant, named by its compute tag.

Relax's legalization folds a constant operand into the expression: ``multiply(x, -1.0)`` is
``-1.0 * x``, ``maximum(x, 0.0)`` is ``max(x, 0.0)``. Those are the values of ``negative``
and ``nn.relu`` too, whose blocks TVM names ``compute``; the binary ops' blocks are named
``T_multiply``, ``T_maximum`` (compare :mod:`.scalar_compare`). A block tagged by one of
these ops that stores that op of one tensor and one constant, on the side the values say
(:func:`opinfo.ew_tree._with_scalar`), is that op.
"""
from __future__ import annotations

from .. import ew_tree
from ..tags import tag
from .common import Match, Space, aligned, stages_storing


def _tag_op(expr, ctx) -> "str | None":
    stages = stages_storing(expr, ctx)
    if len(stages) != 1 or stages[0].expr is None:
        return None
    name = tag(stages[0].block.name).removeprefix("T_")
    return name if name in ew_tree.SCALAR_ROOTS else None


def match_scalar_arith(expr, space: Space, ctx) -> "Match | None":
    """``add``/``multiply``/``maximum``/... of one tensor and one scalar constant."""
    name = _tag_op(expr, ctx)
    if name is None:
        return None
    leaves = ew_tree.leaves_of(expr)
    if len(leaves) != 1:
        return None
    leaf = leaves[0]
    if len(leaf.indices) != space.rank or not aligned(leaf, space) or tuple(leaf.buffer.shape) != tuple(space.extents):
        return None  # a broadcast read is broadcast_to's
    consts, _ = ew_tree._consts(expr, leaves)
    got = ew_tree._with_scalar(ew_tree.strip(expr), leaf, consts, not leaf.dtype.is_float)
    if got is None or got[0] != name:
        return None
    return Match(name, {}, ((got[3][0], leaf, space),), constants=ew_tree.scalar_constants(name, got[3][0], expr, leaf))

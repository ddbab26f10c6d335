"""A comparison of a tensor with a scalar constant (``greater(x, 0.0)``, ``less(ids, 0)``),
named by its compute tag.

Relax's legalization folds the constant into the compare, and TVM writes ``greater(x, c)``
and ``less(c, x)`` alike as ``c < x``: the loops and values cannot tell them apart, the
block TVM gave the compute (``T_greater``, ``T_less``) can (compare :mod:`.bool_xor`). The
comparison must be the whole value its block stores, its tag must name it and the values
(:func:`opinfo.ew_tree.scalar_comparison`) must agree; anything else is not named.
"""
from __future__ import annotations

from tir.expr import BufferLoad, CmpOp, FloatImm, IntImm

from .. import ew_tree
from ..semantic import Inlined
from ..ew_tags import bare
from ..tags import tag
from .common import Match, Space, aligned, stages_storing, strip


def _tag_op(expr, ctx) -> "str | None":
    """The comparison named by the tag of the one block whose own value is ``expr``'s root."""
    stages = stages_storing(expr, ctx)
    if len(stages) != 1 or not isinstance(stages[0].expr, CmpOp):
        return None
    # FuseTIR appends digits to a repeated block name (``T_not_equal1``); no comparison's ends in one
    name = bare(tag(stages[0].block.name)).removeprefix("T_")
    return name if name in ew_tree.COMPARISONS else None


def _tensor(root: CmpOp, space: Space, ctx):
    """The operand that is not a constant: a parameter or an intermediate read whole, at
    the result's indices (a broadcast read is not this op's)."""
    rest = [s for s in (root.a, root.b) if not isinstance(s, (FloatImm, IntImm))]
    if len(rest) != 1:
        return None
    e = rest[0]
    if isinstance(e, BufferLoad) and not ctx.is_param(e.buffer) or not isinstance(e, (BufferLoad, Inlined)):
        return None
    if len(e.indices) != space.rank or not aligned(e, space) or tuple(e.buffer.shape) != tuple(space.extents):
        return None
    return e


def match_scalar_compare(expr, space: Space, ctx) -> "Match | None":
    """``greater``/``less``/``equal``/... of one tensor and a scalar constant."""
    root = strip(expr)
    if not isinstance(root, CmpOp):
        return None
    leaf = _tensor(root, space, ctx)
    name = _tag_op(expr, ctx) if leaf is not None else None
    role = ew_tree.scalar_comparison(root, leaf, name) if name is not None else None
    if role is None:
        return None
    return Match(name, {}, ((role, leaf, space),), constants=ew_tree.scalar_constants(name, role, expr, leaf))

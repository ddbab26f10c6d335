"""``x ^ y`` on bool tensors: logical_xor or bitwise_xor, told apart by the compute tag.

On bools TVM lowers ``logical_xor`` and ``bitwise_xor`` to the same ``bitwise_xor``
intrinsic over the same loops; only the block TVM gave the compute (``T_logical_xor`` or
``T_bitwise_xor``) says which op it was (compare :mod:`opinfo.copy_tags`). The xor must be
the whole value its block stores, so that the block's tag is the xor's own; any other tag,
or a xor inlined into another op's block, is not named.
"""
from __future__ import annotations


from tir.expr import BufferLoad, Call

from ..semantic import Inlined
from ..tags import tag
from .common import Match, Space, aligned, stages_storing, strip

TAGS = {"T_logical_xor": "logical_xor", "T_bitwise_xor": "bitwise_xor"}


def _tag_op(expr, ctx) -> "str | None":
    stages = stages_storing(expr, ctx)
    if len(stages) != 1 or stages[0].expr is None:
        return None
    own = stages[0].expr
    if not (isinstance(own, Call) and own.op == "bitwise_xor"):
        return None
    return TAGS.get(tag(stages[0].block.name))


def _operand_ok(e, space: Space, ctx) -> bool:
    if not e.dtype.is_bool:
        return False
    if isinstance(e, BufferLoad):
        return ctx.is_param(e.buffer) and aligned(e, space)
    return isinstance(e, Inlined) and aligned(e, space)


def match_bool_xor(expr, space: Space, ctx) -> "Match | None":
    """``bitwise_xor(a, b)`` on bool operands, named by its block's tag."""
    call = strip(expr)
    if not (isinstance(call, Call) and call.op == "bitwise_xor" and len(call.args) == 2):
        return None
    a, b = call.args
    if not (call.dtype.is_bool and _operand_ok(a, space, ctx) and _operand_ok(b, space, ctx)):
        return None
    name = _tag_op(expr, ctx)
    if name is None:
        return None
    return Match(name, {}, (("lhs", a, space), ("rhs", b, space)))

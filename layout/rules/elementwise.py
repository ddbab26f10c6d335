"""Rule for elementwise and numpy-broadcasting ops: the output follows the input layout."""
from __future__ import annotations

from tir.expr import as_int

from ..layout import LayoutError, fresh_letter
from ..tensor_layout import TensorLayout
from .base import OpContext, Refusal, checked, keep, with_attrs


def _broadcastable(shape, out_shape) -> bool:
    if len(shape) > len(out_shape):
        return False
    for s, o in zip(reversed(shape), reversed(out_shape)):
        si, oi = as_int(s), as_int(o)
        if si == 1 or s is o or (si is not None and si == oi):
            continue
        if si is None and oi is None and s == o:
            continue
        return False
    return True


def _main_operand(ctx: OpContext) -> "int | None":
    for k, tl in enumerate(ctx.inputs):
        if tl is not None and len(ctx.in_shapes[k]) <= len(ctx.out_shape):
            return k
    return None


def _output_layout(ctx: OpContext, main: int) -> TensorLayout:
    tl = ctx.inputs[main]
    extra = len(ctx.out_shape) - tl.logical.ndim
    logical, physical = tl.logical, tl.physical
    for _ in range(extra):
        x = fresh_letter(logical.primal)
        logical, physical = logical.insert(0, x), physical.insert(0, x)
    return TensorLayout(logical, physical)


def _operand_layout(out: TensorLayout, shape) -> "TensorLayout | None":
    letters = out.logical.primal[len(out.logical.primal) - len(shape):] if shape else ""
    if not letters:
        return None
    tl = TensorLayout(letters, out.physical.restrict(letters))
    try:
        tl.shape(shape)
    except LayoutError:
        return None  # e.g. a broadcast (extent 1) channel under a packed layout: left as is
    return tl


def broadcast(ctx: OpContext):
    """Every operand numpy-broadcasts to the output: the output takes the layout of the first
    converted operand (with new leading axes outermost), the other operands the same layout
    restricted to their trailing axes. An operand a packed layout cannot hold (a broadcast
    extent of 1 along a split axis) stays as it is: the loops read it in place."""
    if not all(_broadcastable(s, ctx.out_shape) for s in ctx.in_shapes):
        return Refusal("operands do not broadcast to the output shape")
    main = _main_operand(ctx)
    if main is None:
        return keep(ctx)
    out = _output_layout(ctx, main)
    inputs = [_operand_layout(out, s) for s in ctx.in_shapes]
    if inputs[main] is None:
        return Refusal(f"input does not fit layout {out.physical}")
    new = ctx.attrs
    if "shape" in new:
        try:
            new = with_attrs(ctx, shape=tuple(out.shape(ctx.out_shape)))
        except LayoutError as err:
            return Refusal(str(err))
    return checked(ctx, inputs, out, new)

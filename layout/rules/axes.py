"""Rules for ops with axis attributes: reductions, softmax, norms, concat, stack, permute,
pad, strided_slice, expand_dims, squeeze. Axes are renumbered in the physical layout;
an op whose axis is split by a packed layout is refused unless the rule can express it."""
from __future__ import annotations

from ..layout import fresh_letter
from ..tensor_layout import TensorLayout
from .base import (
    OpContext, Refusal, as_axes, checked, keep, physical_positions, split_letters, with_attrs,
)

_ARG_REDUCE = ("argmax", "argmin")


def _input(ctx: OpContext) -> "TensorLayout | None":
    return ctx.inputs[0] if ctx.inputs else None


def reduction(ctx: OpContext):
    """sum, mean, max, min, prod, variance, std, argmax, argmin over ``axis``."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    rank = tl.logical.ndim
    axes = as_axes(ctx.attrs.get("axis"), rank)
    axes = tuple(range(rank)) if axes is None else axes
    letters = "".join(tl.logical.primal[a] for a in axes)
    keepdims = bool(ctx.attrs.get("keepdims", False))
    split = split_letters(tl, letters)
    if split and (keepdims or ctx.op.name in _ARG_REDUCE):
        return Refusal(f"reduces axis {split} that layout {tl.physical} splits")
    new_axes = physical_positions(tl, letters)
    if keepdims:
        out = tl
    elif len(letters) == rank:
        out = None
    else:
        out = TensorLayout(tl.logical.drop_all(letters), tl.physical.drop_all(letters))
    axis_value = new_axes[0] if isinstance(ctx.attrs.get("axis"), int) else new_axes
    return checked(ctx, [tl], out, with_attrs(ctx, axis=axis_value))


def _single_axis(ctx: OpContext, name: str):
    tl = _input(ctx)
    if tl is None:
        return None, None
    axis = as_axes(ctx.attrs.get(name, -1), tl.logical.ndim)[0]
    return tl, tl.logical.primal[axis]


def softmax(ctx: OpContext):
    """softmax / log_softmax along one axis, which must not be split."""
    tl, letter = _single_axis(ctx, "axis")
    if tl is None:
        return keep(ctx)
    if split_letters(tl, letter):
        return Refusal(f"softmax axis {letter} is split by {tl.physical}")
    return checked(ctx, [tl], tl, with_attrs(ctx, axis=tl.physical.index_of(letter)))


def batch_norm(ctx: OpContext):
    """batch_norm: the channel axis moves; the 1-D statistics and affine parameters stay."""
    tl, letter = _single_axis(ctx, "axis")
    if tl is None:
        return keep(ctx)
    if split_letters(tl, letter):
        return Refusal(f"normalized axis {letter} is split by {tl.physical}")
    inputs = [tl] + [None] * (len(ctx.inputs) - 1)
    return checked(ctx, inputs, tl, with_attrs(ctx, axis=tl.physical.index_of(letter)))


def norm(ctx: OpContext):
    """layer_norm / rms_norm / group_norm over ``axes``: gamma and beta (shaped like the
    normalized axes) follow the new order of those axes."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    rank = tl.logical.ndim
    letters = "".join(tl.logical.primal[a] for a in as_axes(ctx.attrs.get("axes"), rank) or range(rank))
    chan = ctx.attrs.get("channel_axis")
    chan_letter = tl.logical.primal[as_axes(chan, rank)[0]] if chan is not None else ""
    if split_letters(tl, letters + chan_letter):
        return Refusal(f"normalized axes {letters} are split by {tl.physical}")
    inputs = [tl]
    for shape in ctx.in_shapes[1:]:
        sub = chan_letter if chan is not None else letters
        inputs.append(TensorLayout(sub, tl.physical.restrict(sub)) if len(shape) == len(sub) else None)
    changes = {"axes": physical_positions(tl, letters)}
    if chan is not None:
        changes["channel_axis"] = tl.physical.index_of(chan_letter)
    return checked(ctx, inputs, tl, with_attrs(ctx, **changes))


def concat(ctx: OpContext):
    """concat: every input in the layout of the first converted one; the axis renumbered."""
    k = ctx.first_converted()
    if k is None:
        return keep(ctx)
    tl = ctx.inputs[k]
    rank = tl.logical.ndim
    if any(len(s) != rank for s in ctx.in_shapes):
        return Refusal("inputs of different ranks")
    letter = tl.logical.primal[as_axes(ctx.attrs.get("axis", 0), rank)[0]]
    return checked(ctx, [tl] * len(ctx.inputs), tl, with_attrs(ctx, axis=tl.physical.index_of(letter)))


def stack(ctx: OpContext):
    """stack: a new axis, placed outside the axis it precedes in the original order."""
    k = ctx.first_converted()
    if k is None:
        return keep(ctx)
    tl = ctx.inputs[k]
    rank = tl.logical.ndim
    axis = as_axes(ctx.attrs.get("axis", 0), rank + 1)[0]
    x = fresh_letter(tl.logical.primal)
    pos = tl.physical.index_of(tl.logical.primal[axis]) if axis < rank else tl.physical.ndim
    out = TensorLayout(tl.logical.insert(axis, x), tl.physical.insert(pos, x))
    return checked(ctx, [tl] * len(ctx.inputs), out, with_attrs(ctx, axis=pos))


def permute_dims(ctx: OpContext):
    """permute_dims: the output keeps the input's physical order, so the data is not moved."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    rank = tl.logical.ndim
    axes = ctx.attrs.get("axes")
    axes = list(range(rank))[::-1] if axes is None else [a + rank if a < 0 else a for a in axes]
    out = TensorLayout("".join(tl.logical.primal[a] for a in axes), tl.physical)
    return checked(ctx, [tl], out, with_attrs(ctx, axes=tuple(range(tl.physical.ndim))))


def pad(ctx: OpContext):
    """nn.pad: the (before, after) pair of each axis moves with it; split axes must be unpadded."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    widths = list(ctx.attrs.get("pad_width") or ())
    rank = tl.logical.ndim
    if len(widths) != 2 * rank:
        return Refusal(f"pad_width {widths} does not have 2 values per axis")
    pairs = {tl.logical.primal[i]: (widths[2 * i], widths[2 * i + 1]) for i in range(rank)}
    new = []
    for a in tl.physical.axes:
        if tl.physical.factor_of(a.letter) and pairs[a.letter] != (0, 0):
            return Refusal(f"pads axis {a.letter} that {tl.physical} splits")
        new.extend(pairs[a.letter] if a.is_primal else (0, 0))
    return checked(ctx, [tl], tl, with_attrs(ctx, pad_width=tuple(new)))


def strided_slice(ctx: OpContext):
    """strided_slice: sliced axes renumbered; they must not be split."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    rank = tl.logical.ndim
    axes = [a + rank if a < 0 else a for a in (ctx.attrs.get("axes") or ())]
    letters = "".join(tl.logical.primal[a] for a in axes)
    if split_letters(tl, letters):
        return Refusal(f"slices axis {split_letters(tl, letters)} that {tl.physical} splits")
    new_axes = tuple(tl.physical.index_of(x) for x in letters)
    return checked(ctx, [tl], tl, with_attrs(ctx, axes=new_axes))


def expand_dims(ctx: OpContext):
    """expand_dims: new unit axes become the outermost physical axes."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    out_rank = len(ctx.out_shape)
    new_pos = as_axes(ctx.attrs.get("axis"), out_rank)
    logical, physical = tl.logical, tl.physical
    for p in new_pos:
        x = fresh_letter(logical.primal)
        logical, physical = logical.insert(p, x), physical.insert(0, x)
    out = TensorLayout(logical, physical)
    return checked(ctx, [tl], out, with_attrs(ctx, axis=tuple(range(len(new_pos)))))


def squeeze(ctx: OpContext):
    """squeeze: the removed unit axes must not be split."""
    tl = _input(ctx)
    if tl is None:
        return keep(ctx)
    rank = tl.logical.ndim
    axes = as_axes(ctx.attrs.get("axis"), rank)
    if axes is None:
        return Refusal("squeeze of every unit axis: axes not given")
    letters = "".join(tl.logical.primal[a] for a in axes)
    if split_letters(tl, letters):
        return Refusal(f"squeezes axis that {tl.physical} splits")
    out = TensorLayout(tl.logical.drop_all(letters), tl.physical.drop_all(letters))
    if out.logical.ndim == 0:
        out = None
    return checked(ctx, [tl], out, with_attrs(ctx, axis=physical_positions(tl, letters)))

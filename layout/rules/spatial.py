"""Rules for ops that carry layout attributes: convolutions and pools."""
from __future__ import annotations

from ..layout import Layout, LayoutError
from ..tensor_layout import TensorLayout
from .base import OpContext, Refusal, checked, keep, renamed_input, with_attrs


def _target_layouts(ctx: OpContext) -> "tuple[str | None, str | None]":
    target = ctx.target
    if target is None:
        return None, None
    if isinstance(target, str):
        return target, None
    return (tuple(target) + (None, None))[:2]


def conv(ctx: OpContext):
    """Convolutions convert only when they are a target: data and output to the target data
    layout, the kernel to the target kernel layout (kept when none is given)."""
    data_l = ctx.attrs.get("data_layout")
    kernel_l = ctx.attrs.get("kernel_layout")
    out_l = ctx.attrs.get("out_layout") or data_l
    if data_l is None or kernel_l is None:
        return Refusal("convolution without data_layout/kernel_layout attributes")
    want_data, want_kernel = _target_layouts(ctx)
    if want_data is None:
        return Refusal(f"not a target op: stays in {data_l}") if ctx.first_converted() is not None else keep(ctx)
    try:
        data = TensorLayout(Layout.parse(data_l).primal, want_data)
        kernel = TensorLayout(Layout.parse(kernel_l).primal, want_kernel or kernel_l)
        out = TensorLayout(Layout.parse(out_l).primal,
                           Layout.parse(want_data).rename(dict(zip(Layout.parse(data_l).primal,
                                                                   Layout.parse(out_l).primal))))
    except LayoutError as err:
        return Refusal(f"target layouts do not fit: {err}")
    inputs = [data, kernel] + [None] * (len(ctx.inputs) - 2)
    new = with_attrs(ctx, data_layout=str(data.physical), kernel_layout=str(kernel.physical),
                     out_layout=str(out.physical))
    return checked(ctx, inputs, out, new)


def pool(ctx: OpContext):
    """Pools run in any layout that does not split their window axes: the target layout, or
    the one their input arrives in."""
    lay = ctx.attrs.get("layout")
    if lay is None:
        return Refusal("pool without a layout attribute")
    letters = Layout.parse(lay).primal
    if ctx.target is not None:
        want = ctx.target if isinstance(ctx.target, str) else ctx.target[0]
        try:
            data = TensorLayout(letters, want)
        except LayoutError as err:
            return Refusal(f"target layout does not fit: {err}")
    else:
        data = renamed_input(ctx, 0, letters)
        if data is None:
            return keep(ctx)
    window = [x for x in letters if x not in "NC"]
    if any(data.physical.factor_of(x) for x in window):
        return Refusal(f"layout {data.physical} splits a pooled axis")
    out_letters = Layout.parse(ctx.attrs.get("out_layout") or lay).primal
    out = TensorLayout(out_letters, data.physical.rename(dict(zip(letters, out_letters))))
    new = with_attrs(ctx, layout=str(data.physical), out_layout=str(out.physical))
    return checked(ctx, [data] + [None] * (len(ctx.inputs) - 1), out, new)

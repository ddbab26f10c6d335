"""Transposed convolutions (``nn.conv{1,2,3}d_transpose``) as TVM legalizes
them: ``data_dilate`` (zeros between input pixels), ``data_pad``, an optional ``kernel_dilate``,
the kernel flipped and transposed (``kernel``/``kernel_transform``), then the ``compute`` reduction."""
from __future__ import annotations


from ..buffer import Buffer
from ..builder import Builder, sum_
from ..expr import EQ, FloorDiv, FloorMod, Sub, if_then_else, logical_and
from .common import OpError, ShapeError, add, cast_to, index, ints, mul, out_dtype, pad, padding, static, sub


def dilate(b: Builder, data: Buffer, strides, name: str) -> Buffer:
    """``name[i] = data[i // s]`` where every ``i % s == 0``, else 0 (TVM's ``dilate``)."""
    shape = [add(mul(sub(e, 1), s), 1) if s != 1 else e
             for e, s in zip(data.shape, strides)]

    def body(*i):
        conds = [EQ(FloorMod(v, index(s)), index(0)) for v, s in zip(i, strides) if s != 1]
        load = data[tuple(FloorDiv(v, index(s)) if s != 1 else v for v, s in zip(i, strides))]
        return if_then_else(logical_and(*conds), load, 0.0 if data.dtype.is_float else 0) if conds else load

    return b.compute(name, shape, body)


def conv_transpose(b: Builder, data: Buffer, kernel: Buffer, *, op: str, nd: int, strides=1, padding_=0,
                   output_padding=0, dilation=1, groups=1, data_layout="NCHW", kernel_layout="IOHW",
                   out_layout=None, out_dtype_=None) -> Buffer:
    """Transposed convolution over NC(D)(H)W data and an IO(D)(H)W kernel."""
    spatial = "DHW"[3 - nd:]
    if data_layout != "NC" + spatial or out_layout not in (None, "", data_layout):
        raise OpError(op, "data_layout", f"only {'NC' + spatial!r} is supported, got {data_layout!r}/{out_layout!r}")
    if kernel_layout != "IO" + spatial:
        raise OpError(op, "kernel_layout", f"only {'IO' + spatial!r} is supported, got {kernel_layout!r}")
    if data.ndim != nd + 2 or kernel.ndim != nd + 2:
        raise OpError(op, "data", f"expected {nd + 2}-d data and kernel")
    strides, dilation = ints(strides, nd, op, "strides"), ints(dilation, nd, op, "dilation")
    opad = ints(output_padding, nd, op, "output_padding")
    before, after = padding(padding_, nd, op)
    cin, kin = static(data.shape[1], op, "data channels"), static(kernel.shape[0], op, "kernel I")
    cout_g = static(kernel.shape[1], op, "kernel O")
    if not isinstance(groups, int) or groups < 1 or cin % groups:
        raise ShapeError(op, "groups", f"{groups!r} must divide the {cin} input channels")
    if kin != cin:
        raise ShapeError(op, "kernel", f"data has {cin} channels but the kernel's I is {kin}")
    if any(o >= max(s, d) for o, s, d in zip(opad, strides, dilation)):
        raise OpError(op, "output_padding", f"{opad} must be smaller than the strides or dilations")
    ks = [static(e, op, "kernel") for e in kernel.shape[2:]]
    dk = [(k - 1) * d + 1 for k, d in zip(ks, dilation)]
    odt = out_dtype(out_dtype_, data.dtype)
    dd = dilate(b, data, [1, 1] + strides, "data_dilate")
    lo = [k - 1 - p for k, p in zip(dk, before)]
    hi = [k - 1 - p + o for k, p, o in zip(dk, after, opad)]
    dp = pad(b, dd, [0, 0] + lo, [0, 0] + hi, 0.0, name="data_pad")
    kd = dilate(b, kernel, [1, 1] + dilation, "kernel_dilate") if any(d != 1 for d in dilation) else kernel
    cout = cout_g * groups
    ig = cin // groups
    sp_names = ["d", "h", "w"][3 - nd:]
    knames = ["o", "i"] + sp_names

    def flipped(o, i, *sp):
        src_i = add(mul(FloorDiv(o, index(cout_g)), ig), i) if groups > 1 else i
        src_o = FloorMod(o, index(cout_g)) if groups > 1 else o
        return kd[(src_i, src_o) + tuple(Sub(index(k - 1), v) for k, v in zip(dk, sp))]

    kt = b.compute("kernel" if nd == 1 else "kernel_transform", [cout, ig] + dk, flipped, names=knames)
    dc = b.reduce_axis(ig, "dc")
    red = [b.reduce_axis(k, "d" + n) for k, n in zip(dk, sp_names)]
    out_sp = [static(e, op, "data") - k + 1 for e, k in zip(dp.shape[2:], dk)]

    def body(bb, c, *sp):
        chan = add(mul(FloorDiv(c, index(cout_g)), ig), dc.var) if groups > 1 else dc.var
        d = dp[(bb, chan) + tuple(add(v, r.var) for v, r in zip(sp, red))]
        k = kt[(c, dc.var) + tuple(r.var for r in red)]
        return sum_(cast_to(d, odt) * cast_to(k, odt), [dc] + red)

    return b.compute("compute", [data.shape[0], cout] + out_sp, body, names=["b", "c"] + sp_names, dtype=odt)




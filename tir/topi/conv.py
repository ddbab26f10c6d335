"""Convolutions (``nn.conv1d/2d/3d``) in the loop forms of TVM's topi: a ``pad_temp`` stage,
then one reduction block ``[group_]conv{N}d_{layout}`` (or ``conv2d_NCHWc`` for packed data)."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, sum_
from ..expr import FloorDiv, FloorMod
from .common import OpError, ShapeError, cast_to, index, ints, mul, add, out_dtype, pad, padding, static, window
from .layouts import parse_layout

_SPATIAL_NAMES = ("yy", "xx", "zz")
_REDUCE_NAMES = ("ry", "rx", "rz")


def floordiv(a, b):
    """``a // b`` with ``x // 1`` folded (TVM folds it when building the expression)."""
    return a if b == 1 else FloorDiv(a, index(b))


def _check_layouts(op, nd, data_layout, kernel_layout, out_layout):
    dl, kl = data_layout, kernel_layout
    spatial = [c for c in dl if c not in "NC"]
    if sorted(dl) != sorted("NC" + "".join(spatial)) or len(spatial) != nd:
        raise OpError(op, "data_layout", f"expected a {nd}-d layout such as {'NC' + 'DHW'[3 - nd:]!r}, got {dl!r}")
    if sorted(kl) != sorted("OI" + "".join(spatial)):
        raise OpError(op, "kernel_layout", f"expected the axes O, I and {''.join(spatial)}, got {kl!r}")
    if out_layout not in (None, "", dl):
        raise OpError(op, "out_layout", f"must equal data_layout {dl!r}, got {out_layout!r}")
    return spatial


def conv(b: Builder, data: Buffer, kernel: Buffer, *, op: str, nd: int, strides=1, padding_=0,
         dilation=1, groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout=None,
         out_dtype_=None) -> Buffer:
    """An N-d convolution over unpacked layouts; ``op`` names the op in errors."""
    if any(ch.islower() for ch in data_layout):
        return conv2d_nchwc(b, data, kernel, op=op, strides=strides, padding_=padding_, dilation=dilation,
                            groups=groups, data_layout=data_layout, kernel_layout=kernel_layout,
                            out_layout=out_layout, out_dtype_=out_dtype_)
    spatial = _check_layouts(op, nd, data_layout, kernel_layout, out_layout)
    if data.ndim != nd + 2 or kernel.ndim != nd + 2:
        raise OpError(op, "data", f"expected {nd + 2}-d data and kernel, got ranks {data.ndim} and {kernel.ndim}")
    strides, dilation = ints(strides, nd, op, "strides"), ints(dilation, nd, op, "dilation")
    before, after = padding(padding_, nd, op)
    dshape = dict(zip(data_layout, data.shape))
    kshape = dict(zip(kernel_layout, kernel.shape))
    cin = static(dshape["C"], op, "data channels")
    cout, kin = static(kshape["O"], op, "kernel O"), static(kshape["I"], op, "kernel I")
    if not isinstance(groups, int) or groups < 1 or cin % groups or cout % groups:
        raise ShapeError(op, "groups", f"{groups!r} must divide the input channels ({cin}) and output channels ({cout})")
    if kin * groups != cin:
        raise ShapeError(op, "kernel", f"data has {cin} channels but the kernel expects I*groups = {kin}*{groups}")
    ksize = [static(kshape[s], op, f"kernel {s}") for s in spatial]
    out_sp = []
    for s, k, st, dl, lo, hi in zip(spatial, ksize, strides, dilation, before, after):
        size = (static(dshape[s], op, f"data {s}") + lo + hi - (k - 1) * dl - 1) // st + 1
        if size < 1:
            raise OpError(op, "data", f"the window ({k}, dilation {dl}) is larger than the padded input along {s}")
        out_sp.append(size)
    odt = out_dtype(out_dtype_, data.dtype)
    pos = {s: i for i, s in enumerate(spatial)}
    pad_before = [before[pos[c]] if c in pos else 0 for c in data_layout]
    pad_after = [after[pos[c]] if c in pos else 0 for c in data_layout]
    temp = pad(b, data, pad_before, pad_after, 0.0, names=[f"i{d}" for d in range(nd + 2)])
    rc = b.reduce_axis(kin, "rc")
    rs = [b.reduce_axis(k, _REDUCE_NAMES[i]) for i, k in enumerate(ksize)]
    red_of = {"C": rc, **{s: rs[i] for i, s in enumerate(spatial)}}
    axes = [red_of[c] for c in data_layout if c != "N"]
    out_names = {"N": "nn", "C": "ff", **{s: _SPATIAL_NAMES[i] for i, s in enumerate(spatial)}}
    out_shape = {"N": dshape["N"], "C": cout, **{s: out_sp[i] for i, s in enumerate(spatial)}}

    def body(*ov):
        o = dict(zip(data_layout, ov))
        chan = rc.var if groups == 1 else add(mul(floordiv(o["C"], cout // groups), cin // groups), rc.var)
        didx = [o["N"] if c == "N" else chan if c == "C" else
                window(o[c], strides[pos[c]], rs[pos[c]].var, dilation[pos[c]]) for c in data_layout]
        kidx = [o["C"] if c == "O" else rc.var if c == "I" else rs[pos[c]].var for c in kernel_layout]
        return sum_(cast_to(temp[tuple(didx)], odt) * cast_to(kernel[tuple(kidx)], odt), axes)

    name = f"{'group_' if groups > 1 else ''}conv{nd}d_{data_layout.lower()}"
    return b.compute(name, [out_shape[c] for c in data_layout], body,
                     names=[out_names[c] for c in data_layout], dtype=odt)


def conv2d_nchwc(b: Builder, data: Buffer, kernel: Buffer, *, op: str, strides, padding_, dilation, groups,
                 data_layout, kernel_layout, out_layout, out_dtype_) -> Buffer:
    """Packed ``NCHW{k}c`` data with an ``OIHW{i}i{o}o`` kernel (TVM's ``conv2d_NCHWc``)."""
    dl = parse_layout(data_layout, op, "data_layout")
    kl = parse_layout(kernel_layout, op, "kernel_layout")
    if [a for a, _ in dl] != list("NCHWc"):
        raise OpError(op, "data_layout", f"packed data must be NCHW{{k}}c, got {data_layout!r}")
    if [a for a, _ in kl] != list("OIHWio"):
        raise OpError(op, "kernel_layout", f"a packed kernel must be OIHW{{i}}i{{o}}o, got {kernel_layout!r}")
    if out_layout not in (None, "", data_layout):
        raise OpError(op, "out_layout", f"must equal data_layout {data_layout!r}, got {out_layout!r}")
    if groups != 1:
        raise OpError(op, "groups", "packed NCHW{k}c convolution supports groups=1 only")
    ic_bn, oc_bn = dl[4][1], kl[5][1]
    if kl[4][1] != ic_bn:
        raise OpError(op, "kernel_layout", f"kernel input block {kl[4][1]} differs from data block {ic_bn}")
    strides, dilation = ints(strides, 2, op, "strides"), ints(dilation, 2, op, "dilation")
    (pt, pl), (pb, pr) = padding(padding_, 2, op)
    n, ic_chunk, ih, iw, _ = data.shape
    oc_chunk, kic_chunk, kh, kw = (static(s, op, "kernel") for s in kernel.shape[:4])
    if kic_chunk != static(ic_chunk, op, "data C"):
        raise OpError(op, "kernel", f"data has {ic_chunk} channel blocks but the kernel {kic_chunk}")
    oh = (static(ih, op, "data H") + pt + pb - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (static(iw, op, "data W") + pl + pr - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    odt = out_dtype(out_dtype_, data.dtype)
    src = data
    if pt or pl or pb or pr:
        src = pad(b, data, [0, 0, pt, pl, 0], [0, 0, pb, pr, 0], 0.0, name="data_pad",
                  names=[f"i{d}" for d in range(5)])
    ic = b.reduce_axis(static(ic_chunk, op, "data C") * ic_bn, "ic")
    ry, rx = b.reduce_axis(kh, "kh"), b.reduce_axis(kw, "kw")

    def body(nn, oc, y, x, ob):
        d = src[nn, FloorDiv(ic.var, index(ic_bn)), window(y, strides[0], ry.var, dilation[0]),
                window(x, strides[1], rx.var, dilation[1]), FloorMod(ic.var, index(ic_bn))]
        k = kernel[oc, FloorDiv(ic.var, index(ic_bn)), ry.var, rx.var, FloorMod(ic.var, index(ic_bn)), ob]
        return sum_(cast_to(d, odt) * cast_to(k, odt), [ic, ry, rx])

    return b.compute("conv2d_NCHWc", (n, oc_chunk, oh, ow, oc_bn), body,
                     names=["n", "oc_chunk", "oh", "ow", "oc_block"], dtype=odt)

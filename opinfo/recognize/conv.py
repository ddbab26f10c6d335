"""Convolutions (1-3 spatial dims, any layout letters order, strides, asymmetric padding,
dilation, groups): ``out[n, o, y...] = sum_{c, r...} x[n, g(o)*I + c, y*s + r*d - p] * w[...]``."""
from __future__ import annotations

from tir.expr import BufferLoad, Cast, Mul, Var

from ..affine import const_of, float_of
from ..semantic import Reduce
from .common import Match, Space, strip
from .window import dim_of, pad_after, unpad

SPATIAL = "DHW"


def _split(src, ctx):
    src = strip(src)
    if not isinstance(src, Mul):
        return None
    for d, w in ((src.a, src.b), (src.b, src.a)):
        w = strip(w)
        while isinstance(w, Cast):
            w = w.value
        p = unpad(d, ctx)
        if p is not None and isinstance(w, BufferLoad) and ctx.is_param(w.buffer) and p.load.buffer is not w.buffer:
            if all(isinstance(i, Var) for i in w.indices):
                return p, w
    return None


def match_conv(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "sum" or float_of(e.init) != 0.0:
        return None
    got = _split(e.source, ctx)
    if got is None or not all(isinstance(i, Var) for i in space.indices):
        return None
    padded, w = got
    return _conv(e, space, padded, w)


def _conv(e, space, padded, w):
    x = padded.load
    out_ids = {id(v) for v in space.indices}
    red_ids = {id(iv.var) for iv in e.axes}
    rext = {id(iv.var): const_of(iv.dom.extent) for iv in e.axes}
    dims = [dim_of(i, out_ids, red_ids) for i in x.indices]
    if None in dims:
        return None
    w_ids = [id(i) for i in w.indices]
    sp = [d for d, dm in enumerate(dims) if dm.out is not None and dm.red is not None]
    batch = [d for d, dm in enumerate(dims) if dm.out is not None and dm.red is None and dm.group is None]
    chan = [d for d, dm in enumerate(dims) if dm.out is None and dm.red is not None]
    nsp = len(sp)
    if not 1 <= nsp <= 3 or len(batch) != 1 or len(chan) != 1 or len(x.indices) != nsp + 2:
        return None
    letters = SPATIAL[-nsp:]
    cdim = dims[chan[0]]
    if cdim.dilation != 1 or cdim.offset != 0 or id(cdim.red) not in w_ids:
        return None
    ochan = [v for v in space.indices if id(v) in w_ids]
    if len(ochan) != 1 or len(w.indices) != nsp + 2:
        return None
    o = ochan[0]
    # layouts
    name = {id(dims[batch[0]].out): "N", id(o): "C"}
    data_layout = ["N" if d == batch[0] else "C" if d == chan[0] else "" for d in range(len(dims))]
    kname = {id(o): "O", id(cdim.red): "I"}
    for k, d in enumerate(sp):
        data_layout[d] = letters[k]
        name[id(dims[d].out)] = letters[k]
        kname[id(dims[d].red)] = letters[k]
        if id(dims[d].red) not in w_ids:
            return None
    if len(name) != len(space.indices) or len(kname) != len(w.indices):
        return None
    out_layout = "".join(name.get(id(v), "?") for v in space.indices)
    kernel_layout = "".join(kname.get(i, "?") for i in w_ids)
    # groups
    in_c = const_of(x.buffer.shape[chan[0]])
    wi = rext[id(cdim.red)]
    o_ext = const_of(w.buffer.shape[w_ids.index(id(o))])
    if None in (in_c, wi, o_ext) or in_c % wi:
        return None
    groups = in_c // wi
    if groups == 1 and cdim.group is not None:
        return None
    if groups > 1:
        g = cdim.group
        if g is None or g[0].a is not o or g[1] != wi or const_of(g[0].b) * groups != o_ext:
            return None
    strides, dil, before, after = [], [], [], []
    for k, d in enumerate(sp):
        dm = dims[d]
        in_ext = const_of(x.buffer.shape[d])
        out_ext = const_of(space.extents[list(space.indices).index(dm.out)])
        kk = rext[id(dm.red)]
        if dm.stride <= 0 or dm.dilation <= 0 or dm.offset > 0 or None in (in_ext, out_ext, kk):
            return None
        pshape = padded.padded_shape[d] if padded.padded_shape and padded.pad_value is not None else None
        if padded.pad_value is None and dm.offset != 0:
            return None
        pa = 0 if padded.pad_value is None else pad_after(in_ext, out_ext, -dm.offset, dm.stride,
                                                           dm.dilation, kk, pshape)
        if pa is None or pa < 0:
            return None
        strides.append(dm.stride)
        dil.append(dm.dilation)
        before.append(-dm.offset)
        after.append(pa)
    if padded.pad_value not in (None, 0.0):
        return None
    attrs = {"strides": strides, "padding": before + after, "dilation": dil, "groups": groups,
             "data_layout": "".join(data_layout), "kernel_layout": kernel_layout,
             "out_layout": out_layout}
    space_x = Space(tuple(x.indices), tuple(x.buffer.shape), space.dom)
    return Match(f"nn.conv{nsp}d", attrs, (("data", x, space_x), ("weight", w, space_x)))

"""Convolutions (1-3 spatial dims, any layout letter order, packed ``NCHW{k}c`` /
``OIHW{i}i{o}o``, strides, asymmetric padding, dilation, groups):
``out[n, o, y...] = sum_{c, r...} x[n, g(o)*I + c, y*s + r*d - p] * w[o, c, r...]``.

The three accesses are first seen as logical tensors (``packed.view``); the roles of their
dimensions come from the index forms; the layouts are then named on the buffers.
"""
from __future__ import annotations

import attrs

from tir.buffer import Range
from tir.expr import Add, BufferLoad, Cast, IntImm, Mul, PrimExpr, Sub, Var
from tir.functor import pre_order_visit, transform
from tir.stmt import IterKind, IterVar

from ..affine import affine, const_of, extents_differ, float_of
from ..semantic import Reduce
from .common import Match, Space, strip
from .conv_views import conv_views
from .guard import guard_sides
from .window import dim_of, pad_after, padded_extent, sampled_guard_sides, symbolic_after, unpad

SPATIAL = "DHW"


def _candidates(src, ctx) -> list:
    """(padded data, weight load) pairs the product ``src`` may be (the reduction's own
    product: one written by a block of its own is a multiply op, see matmul)."""
    if not isinstance(src, Mul):
        return []
    out = []
    for d, w in ((src.a, src.b), (src.b, src.a)):
        w = strip(w)
        while isinstance(w, Cast):
            w = strip(w.value)
        while isinstance(strip(d), Cast):  # float16 data and weight accumulated in float32 (out_dtype)
            d = strip(d).value
        p = unpad(d, ctx)
        if p is not None and isinstance(w, BufferLoad) and ctx.is_param(w.buffer) and p.load.buffer is not w.buffer:
            out.append((p, w))
    return out


def match_conv(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "sum" or float_of(e.init) != 0.0:
        return None
    for padded, w in _candidates(e.source, ctx):
        views = conv_views(e, space, padded.load, w)
        got = _conv(e, space, padded, w, views) if views is not None else None
        if got is not None:
            return got
    for p, w0 in _candidates(e.source, ctx):
        restored, assumed = _with_unit_channel(e, space, p.load, w0), ()
        if restored is None:
            # a tap taken out of the data's index took its dilation with it: any dilation
            # reads the same element through a kernel axis of extent 1
            restored, assumed = _with_unit_taps(e, space, p.load, w0), ("dilation",)
        if restored is None:
            continue
        for padded, w in _candidates(restored.source, ctx):
            views = conv_views(restored, space, padded.load, w)
            got = _conv(restored, space, padded, w, views) if views is not None else None
            if got is not None:
                return attrs.evolve(got, assumed=tuple(got.assumed) + assumed)
    return None


def _with_unit_channel(e: Reduce, space: Space, x: BufferLoad, w: BufferLoad) -> "Reduce | None":
    """``e`` with the input-channel reduction variable of extent 1 given back, when a
    schedule that rebuilt the block from its loops (dlight) lost it: one input channel per
    group (depthwise), TVM's ``x[.., o // M + rc, ..] * w[o, rc, ..]`` printed as
    ``x[.., o // M, ..] * w[o, 0, ..]``. Given back only when exactly one weight axis of
    extent 1 is read at a constant 0, no reduction variable reads the data without an output
    variable beside it (no input channel left), and exactly one data axis reads the output
    channel alone; the reduction over ``rc`` in ``[0, 1)`` computes the same."""
    red = {id(iv.var) for iv in e.axes}
    outs = [v for v in space.indices if isinstance(v, Var)]
    unit_vars = _lone_unit_reductions(e, x, w)
    units = [k for k, (i, n) in enumerate(zip(w.indices, w.buffer.shape))
             if const_of(n) == 1 and (const_of(i) == 0 or any(i is u for u in unit_vars))]
    chans = [v for v in outs if any(_reads(i, v) for i in w.indices)]
    if len(units) != 1 or len(chans) != 1:
        return None
    o = chans[0]
    for i in x.indices:
        f = affine(i) or {}
        if any(isinstance(k, Var) and id(k) in red for k in f) and not any(isinstance(k, Var) and k in outs for k in f):
            return None  # an input channel is there
    dims = [j for j, i in enumerate(x.indices) if _reads(i, o)]
    if len(dims) != 1 or any(_reads(x.indices[dims[0]], v) for v in outs if v is not o) or \
            any(_reads(x.indices[dims[0]], iv.var) for iv in e.axes):
        return None
    kept = w.indices[units[0]]
    if isinstance(kept, Var):  # the weight reads the unit reduction variable: the data gets it too
        rc, added = kept, ()
    else:
        iv = unit_reduction(o.dtype)
        rc, added = iv.var, (iv,)
    new_w = attrs.evolve(w, indices=tuple(rc if k == units[0] else i for k, i in enumerate(w.indices)))
    new_x = attrs.evolve(x, indices=tuple(Add(i, rc if rc.dtype == i.dtype else Cast(i.dtype, rc)) if j == dims[0] else i
                                          for j, i in enumerate(x.indices)))
    return with_loads(e, ((w, new_w), (x, new_x)), added)


def _with_unit_taps(e: Reduce, space: Space, x: BufferLoad, w: BufferLoad) -> "Reduce | None":
    """``e`` with the kernel taps of spatial dimensions of extent 1 given back to the data's
    indices, when a schedule's simplifier took them out knowing they are 0 (``x[n, c, y, x]
    * w[o, c, ry, rx]``, ``ry`` and ``rx`` in [0, 1), after ``transform_layout``): the
    reduction variables of extent 1 the weight alone reads, each once, and the data axes that
    read one output variable alone, the first of them being the batch (every convolution
    layout puts N first, so it must be axis 0) and the others, in order, the spatial axes
    that lost those taps in the weight's order of them. ``y + ry`` reads the same element."""
    unit_vars = _lone_unit_reductions(e, x, w)
    if not unit_vars:
        return None
    outs = [v for v in space.indices if isinstance(v, Var)]
    if not all(any(_reads(i, o) for i in tuple(x.indices) + tuple(w.indices)) for o in outs):
        # an output axis neither operand reads: its variable (of extent 1) was simplified
        # out of the data's index with its stride, and a unit axis written at 0 beside it
        # (one block of channels, given a variable by restore_unit_vars) is no spatial one
        return None
    red = {id(iv.var) for iv in e.axes}
    alone = []
    for j, i in enumerate(x.indices):
        f = affine(i)
        vs = [k for k in (f or {}) if isinstance(k, Var)]
        if len(vs) == 1 and id(vs[0]) not in red and any(vs[0] is o for o in outs) and f[vs[0]] > 0:
            alone.append(j)
    if not alone or alone[0] != 0 or len(alone) != len(unit_vars) + 1:
        return None
    taps = sorted(unit_vars, key=lambda v: next(k for k, i in enumerate(w.indices) if i is v))
    terms = []
    for j, r in zip(alone[1:], taps):
        term = _output_term(x.indices[j])
        if term is None:
            return None
        terms.append((term, Add(term, r if r.dtype == term.dtype else Cast(term.dtype, r))))
    # the term is given its tap wherever it occurs: in the data's index and in the guard of a
    # pad read through (``1 <= y * 2 and ...`` tests the padded index the tap was taken from)
    def pre(n):
        for term, given in terms:
            if n is term or _same_scaled(n, term):
                return given
        return None

    return attrs.evolve(e, source=transform(e.source, lambda n: None, pre))


def _same_scaled(n, term) -> bool:
    """Whether ``n`` is ``term``, a ``y * s`` of the very variable ``y`` by the same constant."""
    if not isinstance(n, Mul) or not isinstance(term, Mul):
        return False
    a, b = (n.a, n.b) if isinstance(n.a, Var) else (n.b, n.a)
    ta, tb = (term.a, term.b) if isinstance(term.a, Var) else (term.b, term.a)
    return a is ta and const_of(b) is not None and const_of(b) == const_of(tb)


def _output_term(index) -> "PrimExpr | None":
    """The part ``y * s`` (or ``y``) of a data index ``y * s + offset`` that reads the output
    variable, as a node of ``index``; None for another form."""
    while isinstance(index, (Add, Sub)) and const_of(index.b) is not None:
        index = index.a
    if isinstance(index, Add) and const_of(index.a) is not None:
        index = index.b
    if isinstance(index, Var):
        return index
    if isinstance(index, Mul) and (isinstance(index.a, Var) and const_of(index.b) is not None
                                   or isinstance(index.b, Var) and const_of(index.a) is not None):
        return index
    return None


def unit_reduction(dtype) -> IterVar:
    """A fresh reduction variable of extent 1: it takes the one value 0, so adding it to an
    index reads the same element."""
    rc = Var("v_rc", dtype)
    return IterVar(rc, Range(IntImm(dtype, 0), IntImm(dtype, 1)), IterKind.REDUCE)


def with_loads(e: Reduce, swaps, added=()) -> Reduce:
    """``e`` with each load of ``swaps`` ((load, new load) pairs, the very nodes of its
    source) replaced, and the reduction axes ``added``."""
    def pre(n):
        return next((new for old, new in swaps if n is old), None)

    return attrs.evolve(e, axes=tuple(e.axes) + tuple(added), source=transform(e.source, lambda n: None, pre))


def _lone_unit_reductions(e: Reduce, x: BufferLoad, w: BufferLoad) -> list:
    """The reduction variables of extent 1 (from 0) that the weight reads alone as one of its
    indices and nothing else of the reduction reads (a schedule's simplifier dropped the
    variable's term from the data's channel index, ``x[.., o, ..] * w[o, rc, ..]``, knowing
    it is 0, and kept the bare variable)."""
    out = []
    for iv in e.axes:
        v = iv.var
        if const_of(iv.dom.min) != 0 or const_of(iv.dom.extent) != 1:
            continue
        if sum(1 for i in w.indices if i is v) != 1 or any(_reads(i, v) for i in w.indices if i is not v):
            continue
        if any(_reads(i, v) for i in x.indices):
            continue
        uses = []
        pre_order_visit(e.source, lambda n: uses.append(n) if n is v else True)
        if len(uses) == 1:
            out.append(v)
    return out


def _reads(e, v: Var) -> bool:
    found = []
    pre_order_visit(e, lambda n: not found and (found.append(n) if n is v else True))
    return bool(found)


class _Conv:
    """The roles of the logical dimensions, filled by :func:`_roles`."""

    def __init__(self, e, views):
        self.ov, self.xv, self.wv = views
        self.rext = {id(iv.var): const_of(iv.dom.extent) for iv in e.axes}
        out_ids = {id(v) for v in self.ov.indices if isinstance(v, Var)}
        self.dims = [dim_of(i, out_ids, set(self.rext)) for i in self.xv.indices]


def _output_channel(c: _Conv) -> bool:
    """Find the result's channel (the index the weight shares); a data index ``o * I + i``
    over it is the grouped channel with one output channel per group (depthwise: TVM
    folds ``o // 1 * I`` to ``o * I``)."""
    w_idx = list(c.wv.indices)
    ochan = [i for i in c.ov.indices if const_of(i) is None and any(i == j for j in w_idx)]
    if len(ochan) != 1:
        return False
    c.o, c.per_group = ochan[0], None
    for d, dm in enumerate(c.dims):
        if dm is not None and dm.out is c.o and dm.red is not None and dm.group is None:
            if c.per_group is not None:
                return False
            c.per_group = dm.stride
            c.dims[d] = attrs.evolve(dm, out=None, stride=0)
    return True


def _roles(c: _Conv) -> bool:
    if None in c.dims or not _output_channel(c):
        return False
    dims = c.dims
    c.sp = [d for d, dm in enumerate(dims) if dm.out is not None and dm.red is not None]
    batch = [d for d, dm in enumerate(dims) if dm.out is not None and dm.red is None and dm.group is None]
    chan = [d for d, dm in enumerate(dims) if dm.out is None and dm.red is not None]
    if not 1 <= len(c.sp) <= 3 or len(batch) != 1 or len(chan) != 1 or len(dims) != len(c.sp) + 2:
        return False
    c.batch, c.chan = batch[0], chan[0]
    bdim = dims[c.batch]
    o_pos = [k for k, i in enumerate(c.ov.indices) if i is bdim.out]
    if bdim.stride != 1 or bdim.offset != 0 or len(o_pos) != 1 \
            or extents_differ(c.xv.shape[c.batch], c.ov.shape[o_pos[0]]):
        return False  # the batch is read whole, element for element
    cdim = dims[c.chan]
    w_idx = list(c.wv.indices)
    if cdim.dilation != 1 or cdim.offset != 0 or not any(i is cdim.red for i in w_idx):
        return False
    if len(w_idx) != len(c.sp) + 2:
        return False
    return all(any(i is dims[d].red for i in w_idx) for d in c.sp)


def _layouts(c: _Conv) -> "tuple | None":
    letters = SPATIAL[-len(c.sp):]
    data = ["N" if d == c.batch else "C" for d in range(len(c.dims))]
    out_name = {c.dims[c.batch].out: "N", c.o: "C"}
    w_name = {c.o: "O", c.dims[c.chan].red: "I"}
    for k, d in enumerate(c.sp):
        data[d] = letters[k]
        out_name[c.dims[d].out] = letters[k]
        w_name[c.dims[d].red] = letters[k]
    out = [_lookup(out_name, i) for i in c.ov.indices]
    kern = [_lookup(w_name, i) for i in c.wv.indices]
    if None in out or None in kern or len(set(kern)) != len(kern) or len(set(out)) != len(out):
        return None
    got = (c.xv.layout(data), c.wv.layout(kern), c.ov.layout(out))
    return None if None in got else got


def _lookup(names: dict, e):
    for k, v in names.items():
        if k is e or (not isinstance(k, Var) and k == e):
            return v
    return None


def _groups(c: _Conv) -> "int | None":
    cdim = c.dims[c.chan]
    in_c = const_of(c.xv.shape[c.chan])
    wi = c.rext[id(cdim.red)]
    o_pos = next(k for k, i in enumerate(c.wv.indices) if i is c.o or i == c.o)
    o_ext = const_of(c.wv.shape[o_pos])
    if None in (in_c, wi, o_ext) or in_c % wi:
        return None
    groups = in_c // wi
    if c.per_group is not None:
        ok = c.per_group == wi and o_ext == groups > 1 and cdim.group is None
        return groups if ok else None
    if groups == 1:
        return 1 if cdim.group is None else None
    g = cdim.group
    if g is None or g[0].a is not c.o or g[1] != wi or const_of(g[0].b) * groups != o_ext:
        return None
    return groups


def _after_guarded(c: _Conv, sides, d, before) -> "bool | None":
    """What the pad guard says of after-padding on logical data dim ``d``: a dimension
    without an upper test is not padded after; one tested although not padded before
    is (TVM's pads test a side only when padding, or both sides when padding either)."""
    if sides is None:
        return False
    s = sides[c.xv.parts[d].outer]
    if not s.upper:
        return False
    return True if before == 0 else None


def _geometry(c: _Conv, padded, sides) -> "tuple | None":
    strides, dil, before, after = [], [], [], []
    for d in c.sp:
        dm = c.dims[d]
        in_ext = const_of(c.xv.shape[d])
        o_pos = next(k for k, i in enumerate(c.ov.indices) if i is dm.out)
        out_ext, kk = const_of(c.ov.shape[o_pos]), c.rext[id(dm.red)]
        if dm.stride <= 0 or dm.dilation <= 0 or dm.offset > 0 or kk is None:
            return None
        if padded.pad_value is None and dm.offset != 0:
            return None
        pa = 0
        if None in (in_ext, out_ext):  # a symbolic length: the after-padding its output length gives
            pa = symbolic_after(c.xv.shape[d], c.ov.shape[o_pos], -dm.offset, dm.stride, dm.dilation, kk,
                                _after_guarded(c, sides, d, -dm.offset) if padded.pad_value is not None else False)
        elif padded.pad_value is not None:
            pa = pad_after(in_ext, out_ext, -dm.offset, dm.stride, dm.dilation, kk,
                           padded_extent(padded, dm.out, dm.red), _after_guarded(c, sides, d, -dm.offset))
        if pa is None or pa < 0:
            return None
        strides.append(dm.stride)
        dil.append(dm.dilation)
        before.append(-dm.offset)
        after.append(pa)
    return strides, dil, before + after


def _conv(e, space, padded, w, views):
    c = _Conv(e, views)
    if not _roles(c) or padded.pad_value not in (None, 0.0):
        return None
    sides = _guard_sides(e, space, padded) if padded.conds else None
    if padded.conds and sides is None:
        return None
    layouts, groups, geo = _layouts(c), _groups(c), _geometry(c, padded, sides)
    if layouts is None or groups is None or geo is None:
        return None
    strides, dil, padding = geo
    attrs = {"strides": strides, "padding": padding, "dilation": dil, "groups": groups,
             "data_layout": layouts[0], "kernel_layout": layouts[1], "out_layout": layouts[2]}
    x = padded.load
    space_x = Space(tuple(x.indices), tuple(x.buffer.shape), space.dom)
    return Match(f"nn.conv{len(c.sp)}d", attrs, (("data", x, space_x), ("weight", w, space_x)))


def _guard_sides(e, space, padded) -> "tuple | None":
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in e.axes})
    shape = padded.load.buffer.shape
    sides = guard_sides(padded.conds, padded.load.indices, shape, dom)
    # a symbolic length: the sides the guard tests at lengths past the window, the same at each
    return sides if sides is not None else sampled_guard_sides(padded.conds, padded.load.indices, shape, dom)

"""The logical views (``packed.view``) of a convolution's result, data and weight accesses.

The variables that may be packed are found from the index forms before any view:

* input channels: the reduction variables that never share a data index with an output
  variable (the others are window taps);
* output channels: the result's variables that the weight reads (one, or two when the
  block iterates a packed result: channel blocks and lanes).
"""
from __future__ import annotations

from tir.expr import Var
from tir.functor import pre_order_visit

from ..affine import affine, const_of
from .guard import fold
from .packed import view


def _vars_in(exprs) -> list:
    """Variables in ``exprs``, in order of first appearance."""
    found = []

    def visit(n):
        if isinstance(n, Var) and not any(n is f for f in found):
            found.append(n)
        return True

    for e in exprs:
        pre_order_visit(e, visit)
    return found


def _window_taps(x_indices, red: set, outs: set) -> set:
    """Reduction variables that appear next to an output variable in some data index."""
    taps = set()
    for idx in x_indices:
        f = affine(idx) or {}
        keys = [k for k in f if isinstance(k, Var)]
        if any(k in outs for k in keys):
            taps.update(k for k in keys if k in red)
    return taps


def _bare(indices, dom) -> tuple:
    """Weight indices with a sum that is one variable on the domain replaced by it
    (``cb * 4 + ci`` with a single block ``cb``)."""
    out = []
    for i in indices:
        raw = affine(i) or {}
        f = fold(raw, dom) if len(raw) > 1 else None
        one = next(iter(f)) if f and len(f) == 1 else None
        out.append(one if isinstance(one, Var) and f[one] == 1 else i)
    return tuple(out)


def conv_views(e, space, x, w) -> "tuple | None":
    """(result, data, weight) Views of ``sum(x * w)`` stored at ``space.indices``."""
    red = {iv.var for iv in e.axes}
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in e.axes})
    outs = {v for v in _vars_in(space.indices)}
    taps = _window_taps(x.indices, red, outs)
    in_chan = [v for v in _vars_in(x.indices) if v in red and v not in taps]
    w_vars = set(_vars_in(_bare(w.indices, dom)))
    out_chan = [v for v in _vars_in(space.indices) if v in w_vars]
    if len(out_chan) > 2 or len(in_chan) > 1:
        return None
    pairs = [tuple(out_chan)] if len(out_chan) == 2 else []
    single = out_chan if len(out_chan) == 1 else []
    w_idx = _bare(w.indices, dom)
    elsewhere = set(_vars_in(x.indices)) | set(_vars_in(w_idx))
    units = [v for v in space.indices if isinstance(v, Var) and v not in elsewhere
             and const_of(dom.get(v)) == 1]
    ov = view(space.indices, space.extents, dom, single, pairs, units)
    xv = view(x.indices, x.buffer.shape, dom, in_chan)
    wv = view(w_idx, w.buffer.shape, dom, single + in_chan, pairs)
    return ov, xv, wv

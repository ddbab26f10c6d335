"""Shared by convolution and pooling: a data access ``x[...]`` inside optional padding,
read through affine indices ``out * stride + r * dilation - pad_before``."""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad, Call, FloorDiv, Var

from ..affine import ONE, affine, const_of, float_of
from ..semantic import Inlined


@attrs.frozen
class Padded:
    """A parameter load seen through pad guards."""

    load: BufferLoad
    padded_shape: "tuple | None"
    """Extents of the padded intermediate buffer, when a pad block existed."""
    pad_value: "float | None"
    """The value outside the guard (None: no guard)."""
    conds: tuple = ()
    """The guard conditions (in the reader's variables), checked by ``guard.guard_sides``."""
    pad_indices: tuple = ()
    """The reader's indices into the padded intermediate buffer (with ``padded_shape``)."""
    padded_exprs: tuple = ()
    """``padded_shape`` as the buffer declares it (expressions: a symbolic extent too)."""


def unpad(e, ctx) -> "Padded | None":
    """The parameter load under pad guards and Inlined markers, or None."""
    shape, value, conds, at, exprs = None, None, (), (), ()
    while True:
        if isinstance(e, Inlined):
            if shape is None and len(e.buffer.shape) == len(e.indices):
                shape = tuple(const_of(s) for s in e.buffer.shape)
                at, exprs = tuple(e.indices), tuple(e.buffer.shape)
            e = e.value
            continue
        if isinstance(e, Call) and e.op == "if_then_else":
            v = float_of(e.args[2])
            if v is None or value is not None:
                return None
            value, conds, e = v, (e.args[0],), e.args[1]
            continue
        break
    if not isinstance(e, BufferLoad) or not ctx.is_param(e.buffer):
        return None
    return Padded(e, shape, value, conds, at, exprs)


def padded_extent(p: Padded, out, red, declared: bool = False) -> "int | None":
    """Extent of the padded buffer along the dimension the reader indexes with ``out`` and
    ``red`` (``o * stride + r * dilation``), when a pad buffer was seen; with ``declared``,
    the extent expression the buffer declares (symbolic ones too)."""
    if p.padded_shape is None or p.pad_value is None:
        return None
    hits = []
    for j, idx in enumerate(p.pad_indices):
        f = affine(idx) or {}
        if (out is None or out in f) and red in f:
            hits.append((p.padded_exprs if declared else p.padded_shape)[j])
    return hits[0] if len(hits) == 1 else None


@attrs.frozen
class Dim:
    """One data dimension's index: ``out * stride + r * dilation + offset`` (+ group term)."""

    out: "Var | None"
    stride: int
    red: "Var | None"
    dilation: int
    offset: int
    group: "tuple | None" = None
    """(FloorDiv atom, coefficient) for grouped channels."""


def dim_of(index, out_ids: set, red_ids: set) -> "Dim | None":
    f = affine(index)
    if f is None:
        return None
    out = red = group = None
    stride = dil = 0
    for k, c in f.items():
        if k is ONE:
            continue
        if isinstance(k, Var) and id(k) in out_ids and out is None:
            out, stride = k, c
        elif isinstance(k, Var) and id(k) in red_ids and red is None:
            red, dil = k, c
        elif isinstance(k, FloorDiv) and group is None and isinstance(k.a, Var) and id(k.a) in out_ids:
            group = (k, c)
        else:
            return None
    return Dim(out, stride, red, dil, f.get(ONE, 0), group)


GUARD_SAMPLES = range(17, 23)
"""Lengths past the windows of usual kernels at which a pad guard over a symbolic length is
read (:func:`sampled_guard_sides`): the sides it tests must be the same at each."""


def sampled_guard_sides(conds, indices, shape, dom) -> "tuple | None":
    """:func:`.guard.guard_sides` for a read of a buffer with symbolic extents: the sides the
    guard tests at the lengths of :data:`GUARD_SAMPLES`, when the same at each (None else,
    and for a buffer without symbolic extents)."""
    from tir.expr import IntImm
    from tir.functor import substitute

    from .guard import guard_sides

    symbols = symbolic_in(shape)
    if not symbols:
        return None
    found = set()
    for n in GUARD_SAMPLES:
        b = {v: IntImm(v.dtype, n) for v in symbols}
        found.add(guard_sides(tuple(substitute(c, b) for c in conds), indices,
                              tuple(substitute(x, b) for x in shape), {k: substitute(v, b) for k, v in dom.items()}))
    return found.pop() if len(found) == 1 else None


SYMBOLIC_SAMPLES = range(1, 41)
"""The lengths a symbolic extent takes in :func:`symbolic_after`: every residue of every
stride a window recognizer meets, from lengths below the window up."""


def symbolic_in(exprs) -> list:
    """The distinct variables of ``exprs`` (extents: the symbolic sizes), in order."""
    from tir.expr import Var
    from tir.functor import pre_order_visit

    found = []
    for e in exprs:
        pre_order_visit(e, lambda n: (found.append(n) if isinstance(n, Var) and all(n is not v for v in found)
                                      else None) or True)
    return found


def symbolic_after(in_ext, out_ext, before, stride, dil, k, guarded=None) -> "int | None":
    """The after-padding of a window over a symbolic input length ``in_ext`` (an expression)
    producing ``out_ext``: the one value whose output length equals ``out_ext`` at every
    sampled length where that is positive (at one length two paddings may fit -- at w = 17
    a stride-2 window of 5 after one before gives 7 outputs after 1 or 2, at w = 18 after 0
    or 1 -- the lengths together leave one). ``guarded``: as for :func:`pad_after`."""
    from tir.expr import IntImm
    from tir.functor import substitute

    found = symbolic_in((in_ext, out_ext))
    if not found:
        return None
    fits, seen = set(range(0, stride + k * dil + 1)), 0
    for n in SYMBOLIC_SAMPLES:
        binding = {v: IntImm(v.dtype, n) for v in found}
        i, o = const_of(substitute(in_ext, binding)), const_of(substitute(out_ext, binding))
        if i is None or o is None:
            return None
        if o < 1:
            continue
        seen += 1
        fits = {pa for pa in fits if (i + before + pa - dil * (k - 1) - 1) // stride + 1 == o}
    fits = {pa for pa in fits if guarded is None or (pa > 0) == guarded}
    return fits.pop() if seen >= 2 * stride and len(fits) == 1 else None


def pad_after(in_ext, out_ext, before, stride, dil, k, padded_ext, guarded=None) -> "int | None":
    """The after-padding: from the padded buffer when known, else only when unique among
    those giving ``out_ext`` (``guarded``: whether the pad guard shows after-padding)."""
    if padded_ext is not None:
        return padded_ext - in_ext - before
    fits = [pa for pa in range(0, stride + k * dil + 1)
            if (in_ext + before + pa - dil * (k - 1) - 1) // stride + 1 == out_ext
            and (guarded is None or (pa > 0) == guarded)]
    return fits[0] if len(fits) == 1 else None

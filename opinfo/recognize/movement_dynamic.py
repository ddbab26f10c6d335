"""Movement ops over a symbolic extent (a batch ``n``) whose index maps the constant-extent
readers of :mod:`.movement` do not take: flip along the symbolic axis (``x[n - 1 - v]``),
nn.pad of a symbolic axis (extent ``n + 2``, guard ``v < n``) and concat along it
(``y[v - n]`` chosen by ``v >= n``). Offsets, extents and guards are read with sympy
(:mod:`.symbolic`); attributes are reported only when the symbol cancels out of them.
strided_slice with TVM's clamped bounds (``T.min(3, n) + v``) is read by :mod:`.movement_slice`."""
from __future__ import annotations

import sympy

from tir.expr import BufferLoad, Sub

from ..affine import float_of
from . import symbolic
from .common import Match, Space, strip
from .extent import always_equal, sym
from .movement_index import branches, const_extents, data_operand, load_extents, pure_space
from .movement_select import chain_loads, last_axis_written_either_way
from .movement_slice import match_symbolic_slice
from .movement import flip_tagged


def match_dynamic_movement(expr, space: Space, ctx) -> "Match | None":
    """One of the ops above, when some extent is symbolic."""
    e = strip(expr)
    if not pure_space(space) or None not in const_extents(space) and not _symbolic_loads(e):
        return None
    if isinstance(e, BufferLoad) and ctx.is_param(e.buffer):
        return _flip(e, space, flip_tagged(ctx)) or match_symbolic_slice(e, space)
    br = branches(e)
    if br is None:
        return None
    cond, t, f = br
    value = float_of(f)
    if value is not None and isinstance(t, BufferLoad) and ctx.is_param(t.buffer):
        return _pad(cond, t, value, space)
    order = chain_loads(e, ctx)
    return _concat(e, space, order) if order is not None else None


def _symbolic_loads(e) -> bool:
    """Whether ``e`` (a load or a select over loads) reads a buffer of symbolic extent."""
    br = branches(e)
    parts = [e] if br is None else [br[1], br[2]]
    return any(isinstance(p, BufferLoad) and None in load_extents(p) or branches(p) is not None and _symbolic_loads(p)
               for p in parts)


def _flip(load, space, tagged_flip: bool = False) -> "Match | None":
    """flip along a symbolic axis: ``x[.., n - 1 - v, ..]``, every other axis read whole
    (``v * -1 + (n - 1)`` under flip's compute tag alone: :func:`.movement.flip_tagged`)."""
    t = symbolic.sym_terms(load, space)
    if t is None or len(t) != space.rank:
        return None
    ine = [sym(e) for e in load.buffer.shape]
    oute = [sym(e) for e in space.extents]
    axes = []
    for d, (j, a, off) in enumerate(t):
        if j != d or not always_equal(ine[d], oute[d]):
            return None
        if (a, off) == (1, 0):
            continue
        if a != -1 or not always_equal(off, ine[d] - 1) or not (isinstance(load.indices[d], Sub) or tagged_flip):
            return None
        axes.append(d)
    return Match("flip", {"axis": axes[0]}, data_operand(load, space)) if len(axes) == 1 else None


def _pad(cond, load, value, space):
    """nn.pad of data with a symbolic extent (``n + 2`` long, guard ``v < n``): widths are
    the constant differences of the extents, the guard is read as bounds on each variable."""
    if not load.dtype.is_float:
        return None  # TVM truncates the float pad_value to the data's type: not recoverable
    terms = symbolic.sym_terms(load, space)
    if terms is None or len(terms) != space.rank:
        return None
    width, want = [], []
    for d, (j, a, off) in enumerate(terms):
        n_in, n_out = sym(load.buffer.shape[d]), sym(space.extents[d])
        before = symbolic.difference(0, off)
        after = symbolic.difference(n_out - n_in, before or 0)
        if j != d or a != 1 or before is None or after is None or before < 0 or after < 0:
            return None
        width += [before, after]
        want.append((before, before + n_in - 1))
    if not any(width) or not symbolic.guard_is(cond, space, want):
        return None
    return Match("nn.pad", {"pad_width": width, "pad_value": value, "pad_mode": "constant"}, (("data", load, space),))


def _concat(e, space, loads):
    """concat along an axis of symbolic extent: data ``k`` read at ``v - offset_k``, chosen
    by TVM's chain ``if v >= offset_last: last elif ...: ... else first``, each condition
    exactly that lower bound (read with :func:`.symbolic.bounds`)."""
    terms = [symbolic.sym_terms(l, space) for l in loads]
    if None in terms:
        return None
    axes = {d for t in terms for d, (j, a, off) in enumerate(t) if (j, a) != (d, 1) or off != 0}
    if len(axes) != 1:
        return None
    (axis,) = axes
    oute = [sym(x) for x in space.extents]
    offsets = [sympy.Integer(0)]
    for l, t in zip(loads, terms):
        ine = [sym(x) for x in l.buffer.shape]
        if any(d != axis and not always_equal(ine[d], oute[d]) for d in range(space.rank)):
            return None
        if (t[axis][0], t[axis][1]) != (axis, 1) or not always_equal(t[axis][2], -offsets[-1]):
            return None
        offsets.append(offsets[-1] + ine[axis])
    if not always_equal(offsets[-1], oute[axis]):
        return None
    node, k = e, len(loads) - 1
    while branches(node) is not None:
        cond, t, node = branches(node)
        got = symbolic.bounds(cond, space)
        if k < 1 or t is not loads[k] or got is None or set(got) != {axis}:
            return None
        lo, hi = got[axis]
        if hi or len(lo) != 1 or not always_equal(lo[0], offsets[k]):
            return None
        k -= 1
    if k != 0 or node is not loads[0]:
        return None
    return Match("concat", {"axis": axis}, tuple(("data", l, space) for l in loads),
                 unconventional=last_axis_written_either_way(axis, space.rank))

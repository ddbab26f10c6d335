"""``image.affine_grid`` in ``topi.image.affine_grid``'s form: for a target of ``k`` spatial
axes (2 or 3) and an affine matrix ``x`` of shape (N, k, k + 1),

    out[n, dim, c_0, ..., c_{k-1}] = x[n, dim, k] + sum_r x[n, dim, k-1-r] * (start_r + c_r * step_r)

(matrix columns run fastest axis first). ``size`` is the output's spatial extents; the
coordinates tell ``align_corners``: start -1 and step (2 - 1e-7) / (s - 1) (corner pixels),
or start -1 + 1/s and step 2/s (pixel centres). Anything else (another normalisation, a
column read twice, a spatial axis of one) is not named. A batch of one may be read at a constant
0 (dlight drops unit loops).
"""
from __future__ import annotations

from tir.expr import Add, BufferLoad, Cast, Mul

from ..affine import const_of, float_of
from .common import Match, Space, strip
from .movement_index import pure_space

REL_TOL = 1e-6
"""Float32 constants are compared with the formula's value to this relative tolerance."""


def _terms(e) -> list:
    """The summands of an Add tree (through Inlined markers)."""
    e = strip(e)
    if isinstance(e, Add):
        return _terms(e.a) + _terms(e.b)
    return [e]


def _column(e, space, ctx) -> "tuple | None":
    """(load, column) of ``x[n, dim, column]`` read at the first two output indices."""
    e = strip(e)
    if not (isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and len(e.indices) == 3):
        return None
    n, dim, col = e.indices
    if not (n is space.indices[0] or _unit_batch(n, e, space)) or dim is not space.indices[1] \
            or const_of(col) is None:
        return None
    return e, const_of(col)


def _unit_batch(n, load, space) -> bool:
    """``x[0, dim, col]`` with a batch of one, where a schedule that rebuilt the block from its
    loops (dlight) dropped the unit variable: the same element as ``x[n, dim, col]``."""
    return const_of(n) == 0 and const_of(load.buffer.shape[0]) == 1 and const_of(space.extents[0]) == 1


def _coordinate(e, space) -> "tuple | None":
    """(output axis, start, step) of ``start + Cast(float, c) * step`` (either order)."""
    e = strip(e)
    if not isinstance(e, Add):
        return None
    for start, scaled in ((e.a, e.b), (e.b, e.a)):
        scaled = strip(scaled)
        if float_of(start) is None:
            continue
        # a step of 1 is folded away: the cast alone
        pairs = ((scaled.a, scaled.b), (scaled.b, scaled.a)) if isinstance(scaled, Mul) else ((scaled, None),)
        for c, step in pairs:
            axis = _cast_axis(c, space)
            step = 1.0 if step is None else float_of(step)
            if axis is not None and step is not None:
                return axis, float_of(start), step
    return None


def _cast_axis(c, space) -> "int | None":
    """The spatial output axis ``d >= 2`` of ``Cast(float, index_d)``."""
    c = strip(c)
    if not (isinstance(c, Cast) and c.dtype.is_float):
        return None
    axis = next((d for d, v in enumerate(space.indices) if strip(c.value) is v), None)
    return axis if axis is not None and axis >= 2 else None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(b))


def _align(start: float, step: float, s: int) -> "bool | None":
    """align_corners of one axis of ``s`` points, or None when neither form fits."""
    if _close(start, -1.0) and _close(step, (2.0 - 1e-7) / (s - 1)):
        return True
    if _close(start, -1.0 + 1.0 / s) and _close(step, 2.0 / s):
        return False
    return None


def _summand(t, space, ctx) -> "tuple | None":
    """(load, column, None) of the translation ``x[n, dim, col]``, or (load, column,
    (axis, start, step)) of ``x[n, dim, col] * coordinate``."""
    col = _column(t, space, ctx)
    if col is not None:
        return col[0], col[1], None
    t = strip(t)
    if not isinstance(t, Mul):
        return None
    for a, b in ((t.a, t.b), (t.b, t.a)):
        col, coord = _column(a, space, ctx), _coordinate(b, space)
        if col is not None and coord is not None:
            return col[0], col[1], coord
    return None


def _read(terms, space, ctx, k) -> "tuple | None":
    """(x load, {axis: (start, step)}): every column of one matrix once, the last alone, column
    ``k - 1 - r`` times the coordinate of spatial axis ``r``."""
    parts = [_summand(t, space, ctx) for t in terms]
    if None in parts or len({id(p[0].buffer) for p in parts}) != 1:
        return None
    if sorted(c for _, c, _ in parts) != list(range(k + 1)):
        return None
    coords = {}
    for _, c, coord in parts:
        if coord is None:
            if c != k:
                return None
            continue
        axis, start, step = coord
        if axis in coords or c != k - 1 - (axis - 2):
            return None
        coords[axis] = (start, step)
    return parts[0][0], coords


def match_affine_grid(expr, space: Space, ctx) -> "Match | None":
    k = space.rank - 2
    if k not in (2, 3) or not pure_space(space) or not expr.dtype.is_float:
        return None
    size = [const_of(e) for e in space.extents[2:]]
    if const_of(space.extents[1]) != k or any(s is None or s < 2 for s in size):
        return None
    terms = _terms(expr)
    if len(terms) != k + 1:
        return None
    got = _read(terms, space, ctx, k)
    if got is None:
        return None
    x, coords = got
    shape = [const_of(s) for s in x.buffer.shape[1:]]
    if shape != [k, k + 1]:
        return None
    aligns = {_align(*coords[a + 2], size[a]) for a in range(k)}
    if len(aligns) != 1 or None in aligns:
        return None
    return Match("image.affine_grid", {"size": size, "align_corners": aligns.pop()}, (("data", x, space),))

"""More data movement in topi's forms: repeat, nn.pixel_shuffle, gather_elements, one_hot
(tril/triu are in :mod:`.trilu`). Each reads one parameter element (or a constant) per
output element; the recognizers check the index map structurally where the form is fixed
and numerically over the whole output grid where TVM's arithmetic may be written in several
ways."""
from __future__ import annotations

import numpy as np
import sympy

from tir.expr import EQ, BufferLoad, Cast, FloorDiv, Var

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate, scalar_int, shape_envs
from .common import Match, Space, int_list, is_param_load, strip
from .extent import always_equal, sym
from ..semantic import Inlined
from .movement_index import branches, grid_over, pure_space
from .movement_reshape import MAX_CHECKED, MAX_SIZES, MIN_SIZES, SIZES, reshape_ok
from . import symbolic


def _param_load(e, ctx):
    e = strip(e)
    return e if is_param_load(e, ctx) else None


def _uncast(e):
    while isinstance(e, Cast):
        e = e.value
    return e


def _values(e, env, like):
    try:
        return np.broadcast_to(evaluate(e, env), like.shape)
    except NotEvaluable:
        return None


def _single_axis(load, space, whole) -> "int | None":
    """The one dimension where ``load`` does not read the output index as it is (``whole(d)``
    must also hold elsewhere), or None when there is none or more than one."""
    axis = None
    for d, (idx, v) in enumerate(zip(load.indices, space.indices)):
        if idx is v and whole(d):
            continue
        if axis is not None:
            return None
        axis = d
    return axis


# ------------------------------------------------------------------ repeat
def match_repeat(expr, space: Space, ctx) -> "Match | None":
    """``topi.repeat``: ``x[..., v // r, ...]`` along one axis, the others read whole."""
    if isinstance(expr, Inlined):
        return _flat_repeat(expr, space, ctx)
    load = _param_load(expr, ctx)
    if load is not None and pure_space(space) and space.rank == 1 and len(load.indices) >= 2:
        return _inlined_flat_repeat(load, space)
    if load is None or not pure_space(space) or len(load.indices) != space.rank:
        return None
    ine, oute = [sym(e) for e in load.buffer.shape], [sym(e) for e in space.extents]
    axis = _single_axis(load, space, lambda d: always_equal(ine[d], oute[d]))
    if axis is None:
        return None
    idx, v = _uncast(load.indices[axis]), space.indices[axis]
    if not (isinstance(idx, FloorDiv) and _uncast(idx.a) is v):
        return None
    r = const_of(idx.b)
    if r is None or r < 2 or not always_equal(oute[axis], r * ine[axis]):
        return None
    return Match("repeat", {"repeats": r, "axis": axis}, (("data", load, space),))


def _flat_repeat(inl, space, ctx) -> "Match | None":
    """repeat with axis None: ``flat[v // r]`` where ``flat`` is a parameter reshaped to 1-D
    in row-major order (the flattening block Relax's legalization always writes first, even
    for 1-D data; repeat along a given axis reads the data directly)."""
    stages = ctx.sem.producers.get(id(inl.buffer), [])
    if space.rank != 1 or len(inl.indices) != 1 or len(inl.buffer.shape) != 1 or len(stages) != 1:
        return None
    idx, v = _uncast(inl.indices[0]), space.indices[0]
    r = const_of(idx.b) if isinstance(idx, FloorDiv) and _uncast(idx.a) is v else None
    if r is None or r < 2 or not always_equal(sym(space.extents[0]), r * sym(inl.buffer.shape[0])):
        return None
    stage = stages[0]
    data = _param_load(ctx.sem.meaning(stage), ctx)
    flat = Space(tuple(stage.indices), tuple(inl.buffer.shape))
    if data is None or not pure_space(flat) or not reshape_ok(data, flat):
        return None
    return Match("repeat", {"repeats": r, "axis": None}, (("data", strip(inl), space),))


def _inlined_flat_repeat(load, space) -> "Match | None":
    """repeat with axis None whose flattening block was inlined (``compute_inline``): a
    1-D output reading data of rank >= 2 at ``unravel(v // r)``, checked at every output
    point. Data of rank 1 is left alone: there the inlined form differs from repeat along
    axis 0 only by a modulo that changes no value. With symbolic extents ``r`` is the ratio
    of the element counts, which must be one integer for every value of the shape
    variables, and the map is checked at each of a few values of them, as a symbolic
    reshape is (:func:`.movement_reshape._row_major_at_sizes`)."""
    numel = 1
    for e in load.buffer.shape:
        numel = numel * sym(e)
    if numel == 0:
        return None
    ratio = sympy.simplify(sym(space.extents[0]) / numel)
    if not ratio.is_Integer or int(ratio) < 2:
        return None
    r = int(ratio)
    names = symbolic.symbol_vars(list(load.buffer.shape) + list(space.extents))
    checked = 0
    for shape_env in shape_envs(names.values(), SIZES):
        ine = [scalar_int(e, shape_env) for e in load.buffer.shape]
        ext = scalar_int(space.extents[0], shape_env)
        if None in ine or ext is None or min(ine) < 0:
            return None
        if 0 in ine or ext != r * int(np.prod(ine)):
            continue
        if ext > MAX_CHECKED:
            break
        (v,) = space.indices
        env = grid_over((v,), [ext])
        if env is None:
            break
        env.update(shape_env)
        want = np.unravel_index(np.floor_divide(env[v], r).astype(np.int64), ine)
        for e, wv in zip(load.indices, want):
            got = _values(e, env, env[v])
            if got is None or not np.array_equal(got, wv):
                return None
        checked += 1
        if checked == MAX_SIZES:
            break
    if checked < (MIN_SIZES if names else 1):
        return None
    return Match("repeat", {"repeats": r, "axis": None}, (("data", load, space),))


# ------------------------------------------------------------------ pixel_shuffle
def match_pixel_shuffle(expr, space: Space, ctx) -> "Match | None":
    """``topi.nn.pixel_shuffle``: ``x[..., c*r*r + (h%r)*r + w%r, h//r, w//r]`` on the last
    three axes (channel, height, width), leading axes read whole."""
    load = _param_load(expr, ctx)
    R = space.rank
    if load is None or not pure_space(space) or R < 3 or len(load.indices) != R:
        return None
    ine, oute = int_list(load.buffer.shape), int_list(space.extents)
    if ine is None or oute is None:
        return None
    if any(load.indices[d] is not space.indices[d] or ine[d] != oute[d] for d in range(R - 3)):
        return None
    (ci, hi, wi), (co, ho, wo) = ine[-3:], oute[-3:]
    if hi == 0 or ho % hi:
        return None
    r = ho // hi
    if r < 2 or wo != wi * r or ci != co * r * r:
        return None
    vc, vh, vw = space.indices[-3:]
    env = grid_over((vc, vh, vw), (co, ho, wo))
    if env is None:
        return None
    c, h, w = env[vc], env[vh], env[vw]
    want = (c * r * r + np.mod(h, r) * r + np.mod(w, r), np.floor_divide(h, r), np.floor_divide(w, r))
    for e, wv in zip(load.indices[-3:], want):
        got = _values(e, env, c)
        if got is None or not np.array_equal(got, wv):
            return None
    return Match("nn.pixel_shuffle", {"upscale_factor": r}, (("data", load, space),))


# ------------------------------------------------------------------ gather_elements
def match_gather_elements(expr, space: Space, ctx) -> "Match | None":
    """``topi.gather``: ``x[i0, .., idx[i0, .., iR-1], .., iR-1]``: the indices tensor read at
    the output position, the data at the output position but along ``axis``."""
    load = _param_load(expr, ctx)
    R = space.rank
    if load is None or not pure_space(space) or R < 2 or len(load.indices) != R:
        return None
    axis = _single_axis(load, space, lambda d: True)
    if axis is None:
        return None
    ind = _uncast(load.indices[axis])
    if not (isinstance(ind, BufferLoad) and ctx.is_param(ind.buffer) and ind.buffer is not load.buffer):
        return None
    if len(ind.indices) != R or not all(i is v for i, v in zip(ind.indices, space.indices)):
        return None
    if not ind.buffer.dtype.is_integer:
        return None
    if space.rank == 1:
        return None  # 1-D: take(axis=0) computes exactly the same
    return Match("gather_elements", {"axis": axis}, (("data", load, space), ("indices", ind, space)))


# ------------------------------------------------------------------ one_hot
def match_one_hot(expr, space: Space, ctx) -> "Match | None":
    """``topi.one_hot``: ``Select(indices[i.. without axis] == v_axis, on, off)`` with constant
    on and off values; the output adds the depth axis to the indices' shape."""
    e = strip(expr)
    br = branches(e)
    R = space.rank
    if br is None or R < 1 or not pure_space(space):
        return None
    cond, on, off = br
    on_v, off_v = float_of(on), float_of(off)
    if on_v is None or off_v is None or not isinstance(cond, EQ):
        return None
    for a, b in ((cond.a, cond.b), (cond.b, cond.a)):
        ind, v = _uncast(a), _uncast(b)
        if not (isinstance(ind, BufferLoad) and ctx.is_param(ind.buffer) and isinstance(v, Var)):
            continue
        if not ind.buffer.dtype.is_integer:
            continue
        axis = next((d for d, o in enumerate(space.indices) if o is v), None)
        if axis is None:
            continue
        rest = [o for d, o in enumerate(space.indices) if d != axis]
        if len(ind.indices) != len(rest) or not all(i is o for i, o in zip(ind.indices, rest)):
            continue
        depth = const_of(space.extents[axis])
        if depth is None:
            return None
        # the last axis is written -1 (Relax's default): the same axis whatever the rank
        axis = -1 if axis == space.rank - 1 else axis
        return Match("one_hot", {"depth": depth, "axis": axis, "on_value": on_v, "off_value": off_v},
                     (("indices", ind, space),))
    return None

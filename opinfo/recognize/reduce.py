"""Reductions: sum, prod, max, min, mean, variance, argmax, argmin (axis, keepdims)."""
from __future__ import annotations


from tir.expr import BufferLoad, Div, Mul, Sub, Var, max_value, min_value

from ..affine import affine, const_of, equal_extents, float_of
from ..probe import vars_in
from ..semantic import ArgReduce, Reduce
from .common import Match, Space, loads_in, strip
from .extent import same_extent
from ..tags import tags
from ..unit_axes import rebuilt

POOL_TAGS = frozenset({"adaptive_pool_sum", "adaptive_pool_avg", "pool_sum", "pool_avg"})
"""TVM's compute tags of average pooling. A pool whose windows cover whole axes (adaptive
pooling to 1) averages exactly what a mean does; read from a packed buffer, TVM's
``transform_layout`` has folded the extent-1 output variables out of the window's index,
so the pool reader cannot see its window and the mean reader would: the tag says which op
it was, as in :mod:`opinfo.copy_tags`."""

MAX_POOL_TAGS = frozenset({"pool_max"})
"""TVM's compute tag of max pooling: a pool whose window covers the whole input (one output
position per axis) maxes exactly what a max over those axes does, and once ``transform_layout``
(or a scheduler rebuilding blocks) has folded the unit output variables out of the window's
index, only the tag says which op it was (as :data:`POOL_TAGS` for average pooling)."""

_INIT = {"sum": 0.0, "prod": 1.0}


def input_space(src, reduce_vars, dom) -> "Space | None":
    """The index space of a reduction's input: the indices of its widest load, which must
    be distinct plain variables covering every reduction variable."""
    loads = loads_in(src)
    if not loads:
        return None
    widest = max(loads, key=lambda l: len(l.indices))
    idx = widest.indices
    if any(l.indices != idx for l in loads):
        return None
    if not all(isinstance(i, Var) for i in idx) or len({id(i) for i in idx}) != len(idx):
        return None
    if not all(any(r is i for i in idx) for r in reduce_vars):
        return None
    return Space(tuple(idx), tuple(dom.get(i) for i in idx), dom)


def _axes_keepdims(ins: Space, out: Space, reduce_vars) -> "tuple | None":
    axis = [d for d, i in enumerate(ins.indices) if any(i is r for r in reduce_vars)]
    kept = [i for d, i in enumerate(ins.indices) if d not in axis]
    if len(out.indices) == len(ins.indices):
        outer = [o for d, o in enumerate(out.indices) if d not in axis]
        if all(a is b for a, b in zip(outer, kept)) and len(outer) == len(kept):
            return axis, True
        return None
    if len(out.indices) == len(kept) and all(a is b for a, b in zip(out.indices, kept)):
        return axis, False
    return None


def unit_axes_open(ins: Space, axis, ctx) -> dict:
    """``axis`` marked open (assumed: the function alone abstains; unconventional: no
    importer's convention settles it either, so a network abstains too) when the input keeps an axis of extent 1 in a function whose blocks a
    scheduler rebuilt (:func:`.unit_axes.rebuilt`: dlight drops the loops of extent 1, a
    reduced one's variable with them, and :func:`.unit_axes.restore_unit_vars` gives the
    element read at 0 the output's unit variable back): ``max(x, axis=[0, 1], keepdims=True)``
    and ``axis=[1]`` over a ``(1, 6)`` tensor then print the same block. Plain and split
    loops keep a variable for every axis, reduced or kept, and decide it."""
    if ctx is None or not rebuilt(ctx.sem.func):
        return {}
    kept = [d for d in range(ins.rank) if d not in axis]
    if not any(const_of(ins.extents[d]) == 1 for d in kept):
        return {}
    return {"assumed": ("axis",), "unconventional": ("axis",)}


def _init_ok(comb, init, dtype) -> bool:
    v = float_of(init)
    if v is None:
        return False
    if comb in _INIT:
        return v == _INIT[comb]
    # the lowest (max) or highest (min) value of the type, or beyond: nothing can beat it
    # (uint8's max starts at 0; an int8 max starting at -127 would miss an input of -128)
    return v <= float_of(min_value(dtype)) if comb == "max" else v >= float_of(max_value(dtype))


def _reduction(e, space: Space) -> "tuple | None":
    if not isinstance(e, Reduce) or not _init_ok(e.combiner, e.init, e.dtype):
        return None
    if not e.axes:
        # an init and update over spatial variables only (``reindex`` of a reduction whose
        # reduction loop has extent 1 makes it spatial): which axes were reduced is lost
        return None
    rvars = [iv.var for iv in e.axes]
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in e.axes})
    ins = input_space(e.source, rvars, dom)
    if ins is None:
        return None
    ak = _axes_keepdims(ins, space, rvars)
    if ak is None:
        return None
    return ins, ak[0], ak[1]


def _count(e: Reduce):
    return [iv.dom.extent for iv in e.axes]


def match_reduce(expr, space: Space, ctx) -> "Match | None":
    """A plain reduction at the root."""
    e = strip(expr)
    got = _reduction(e, space)
    if got is None:
        return None
    if e.combiner == "max" and MAX_POOL_TAGS.intersection(tags(ctx.sem.func)):
        return None
    ins, axis, keep = got
    return Match(e.combiner, {"axis": axis, "keepdims": keep}, (("data", e.source, ins),),
                 **unit_axes_open(ins, axis, ctx))


def _divided(e) -> "tuple | None":
    """``Reduce(sum) / N`` -> (reduce, N)."""
    e = strip(e)
    if isinstance(e, Div) and isinstance(strip(e.a), Reduce):
        return strip(e.a), e.b
    return None


def match_mean(expr, space: Space, ctx) -> "Match | None":
    if POOL_TAGS.intersection(tags(ctx.sem.func)):
        return None
    d = _divided(expr)
    if d is None or d[0].combiner != "sum" or not same_extent(d[1], _count(d[0])):
        return None
    if _is_variance(d[0]):
        return None
    got = _reduction(d[0], space)
    if got is None:
        return None
    ins, axis, keep = got
    return Match("mean", {"axis": axis, "keepdims": keep}, (("data", d[0].source, ins),),
                 **unit_axes_open(ins, axis, ctx))


def _is_variance(red: Reduce) -> bool:
    src = strip(red.source)
    if not isinstance(src, Mul) or strip(src.a) != strip(src.b):
        return False
    diff = strip(src.a)
    return isinstance(diff, Sub) and _divided(diff.b) is not None


def match_variance(expr, space: Space, ctx) -> "Match | None":
    d = _divided(expr)
    if d is None or d[0].combiner != "sum" or not same_extent(d[1], _count(d[0])):
        return None
    red = d[0]
    if not _is_variance(red):
        return None
    diff = strip(strip(red.source).a)
    x, inner = strip(diff.a), _divided(diff.b)
    if not isinstance(x, BufferLoad) or not ctx.is_param(x.buffer):
        return None
    if inner[0].combiner != "sum" or not same_extent(inner[1], _count(inner[0])):
        return None
    src = strip(inner[0].source)
    if not isinstance(src, BufferLoad) or src.buffer is not x.buffer:
        return None
    if len(inner[0].axes) != len(red.axes) or not _same_reading(src, inner[0], x, red):
        return None
    got = _reduction(Reduce("sum", x, red.axes, red.init), space)
    if got is None:
        return None
    ins, axis, keep = got
    return Match("variance", {"axis": axis, "keepdims": keep}, (("data", x, ins),),
                 **unit_axes_open(ins, axis, ctx))


def _same_reading(src: BufferLoad, inner: Reduce, x: BufferLoad, red: Reduce) -> bool:
    """Whether the mean inside a variance reads the element the deviation subtracts it from:
    ``src`` (over the mean's reduction variables) is ``x`` (over the variance's) once each
    mean variable is renamed to the variance variable at the same position (a one-to-one
    pairing of equal extents); every other index is the same expression in both."""
    mine = {id(iv.var): iv for iv in inner.axes}
    theirs = {id(iv.var): iv for iv in red.axes}
    paired = {}
    if len(src.indices) != len(x.indices):
        return False
    for a, b in zip(src.indices, x.indices):
        if isinstance(a, Var) and id(a) in mine:
            if not (isinstance(b, Var) and id(b) in theirs) or id(a) in paired or id(b) in paired.values():
                return False
            if not equal_extents(mine[id(a)].dom.extent, theirs[id(b)].dom.extent):
                return False
            paired[id(a)] = id(b)
            continue
        if a != b or _uses(a, mine) or _uses(b, theirs):
            return False
    return len(paired) == len(mine) == len(theirs)


def _uses(e, variables: dict) -> bool:
    found = vars_in(e)
    return any(id(v) in variables for v in found)


def _row_major(e: ArgReduce) -> "list | None":
    """The reduction variables, outermost first, when the recorded index is their row-major
    position (the outermost extent is no stride, so it may be symbolic); else None. The
    block may list them in any order (a merged rfactor puts its own last): the update
    keeps the smaller index on equal values (:mod:`opinfo.arg_select`), so the order of
    iteration does not change the result."""
    f = affine(e.index)
    if f is None or len(f) != len(e.axes):
        return None
    coef = {id(iv.var): f.get(iv.var) for iv in e.axes}
    if any(not isinstance(c, int) for c in coef.values()):
        return None
    order = sorted(e.axes, key=lambda iv: -coef[id(iv.var)])
    stride = 1
    for iv in reversed(order):
        if stride is None or coef[id(iv.var)] != stride:
            return None
        ext = const_of(iv.dom.extent)
        stride = stride * ext if ext is not None else None
    return [iv.var for iv in order]


def _match_flat_arg(e: ArgReduce, space: Space, ctx) -> "Match | None":
    """argmax/argmin with ``axis=None``: over every dimension, index of the flattened input."""
    rvs = _row_major(e)
    if rvs is None:
        return None
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in e.axes})
    src = strip(e.source)
    ins = input_space(src, rvs, dom)
    ak = _axes_keepdims(ins, space, rvs) if ins is not None else None
    if ak is None or ak[0] != list(range(ins.rank)) or [i for i in ins.indices] != rvs:
        return None
    return Match(e.combiner, {"axis": None, "keepdims": ak[1]}, (("data", src, ins),),
                 **unit_axes_open(ins, ak[0], ctx))


def match_arg(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if isinstance(e, ArgReduce) and len(e.axes) > 1:
        return _match_flat_arg(e, space, ctx)
    if not isinstance(e, ArgReduce) or len(e.axes) != 1 or e.index is not e.axes[0].var:
        return None
    rv = e.axes[0].var
    dom = dict(space.dom)
    dom[rv] = e.axes[0].dom.extent
    src = strip(e.source)
    ins = input_space(src, [rv], dom)
    if ins is None:
        return None
    ak = _axes_keepdims(ins, space, [rv])
    if ak is None or ins.rank == 1:  # one dimension: axis=0 and axis=None lower the same
        return None
    return Match(e.combiner, {"axis": ak[0][0], "keepdims": ak[1]}, (("data", src, ins),),
                 **unit_axes_open(ins, ak[0], ctx))

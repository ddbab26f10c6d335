"""The window of a pooling reduction: which data dimensions are pooled, and how.

Each data dimension's read index is compared with the result's index ``o`` there:

* ``o * stride + r * dilation - before``: a pooled dimension, its window in sight;
* ``o`` itself (same extent): passed through (batch, channels), or a pooled axis of
  kernel 1, stride 1 and no padding whose window variable was folded away (below);
* ``o * stride - before``: a pooled axis of kernel 1 whose window variable was folded away;
* ``r * dilation - before`` with ``o`` of extent 1 not read: one output position, its
  output variable folded away; its stride is not in the loops (every stride gives one
  position), which only an adaptive pool does not need.

Folding. TVM's ``transform_layout`` (NCHW -> NCHW4c) rewrites the accesses and simplifies
them on the block's domain: ``o + r`` with ``r`` in [0, 1) becomes ``o``, ``o * 8 + r``
with ``o`` in [0, 1) becomes ``r``. The block keeps the variable (of extent 1); only the
index lost it. TVM's pools make one reduction variable per pooled axis, in the layout's
order (rv0 for H, rv1 for W), so the block's reduction variables, in order, belong to the
pooled dimensions in order: a reduction variable of extent 1 that no index reads is
placed by that order, on a ``o * stride - before`` dimension or on a passed-through one.
A passed-through dimension cannot say whether it is pooled; it is taken only as the
layouts pools are written in place it (N first, C second or last: NCHW, NHWC, NCDHW, ...,
packed NCHW4c), and when more than one place remains, nothing is recognised. A folded
kernel-1 axis shows no dilation: it is reported as 1 (it has no effect on the numbers),
and only when no window in sight is dilated (a framework's single dilation given for
every axis would be the truth); when no window at all is in sight, the dilation is only
a convention (the match names it assumed).
"""
from __future__ import annotations

import itertools
import re

import attrs

from tir.expr import FloorDiv, FloorMod, Var
from tir.functor import pre_order_visit

from ..affine import affine, const_of
from ..semantic import Reduce
from ..unpack import split_dims
from .common import Space
from .guard import guard_sides, same_on_domain
from .window import Dim, dim_of, padded_extent, sampled_guard_sides, unpad

SPATIAL = "DHW"


@attrs.frozen
class Window:
    """A recognized pooling window: the padded read and its pooled dimensions."""

    padded: object
    """window.Padded of the data read."""
    spatial: tuple
    """Data dimensions that are pooled, in order."""
    dims: tuple
    """window.Dim of each pooled dimension (a folded window: its extent-1 variable)."""
    sides: "tuple | None"
    """guard.Sides per data dimension (None without a guard)."""
    rext: dict
    """id(reduction var) -> extent."""
    strideless: frozenset = frozenset()
    """Pooled data dimensions of one output position whose stride the loops do not show
    (their Dim's stride is the kernel: an adaptive pool's)."""
    folded: bool = False
    """Whether some pooled axis was read without its window or output variable."""
    blind: bool = False
    """Whether no pooled axis shows its window variable (every one of kernel 1, folded):
    no dilation is in sight, not even a framework's single one (reported 1, assumed)."""


@attrs.frozen
class _Dims:
    """The data dimensions of a pooling read, by what their index shows."""

    seen: dict
    """dimension -> Dim with its reduction variable in sight."""
    kernel1: dict
    """dimension -> Dim ``o * stride - before`` (no reduction variable)."""
    through: tuple
    """Passed-through dimensions of equal data and result extents."""
    strideless: frozenset
    """Dimensions in ``seen`` whose output variable is folded away."""


def _domain(red: Reduce, space: Space) -> dict:
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in red.axes})
    return dom


def uses(e, ids) -> bool:
    """Whether ``e`` reads a variable of ``ids`` (``id``s)."""
    found = []
    pre_order_visit(e, lambda n: found.append(n) if isinstance(n, Var) and id(n) in ids else True)
    return bool(found)


def _unit_out(o, space: Space, d: int) -> bool:
    """Whether result dimension ``d`` has one position (its index a variable of extent 1 or 0)."""
    if const_of(space.extents[d]) != 1:
        return False
    return const_of(o) == 0 or (isinstance(o, Var) and const_of(space.dom.get(o)) == 1)


def _classify(load, space: Space, red: Reduce, dom: dict) -> "_Dims | None":
    out_ids = {id(v) for v in space.indices if isinstance(v, Var)}
    red_ids = {id(iv.var) for iv in red.axes}
    seen, kernel1, through, strideless = {}, {}, [], set()
    for d, (idx, o) in enumerate(zip(load.indices, space.indices)):
        if not uses(idx, red_ids) and same_on_domain(idx, o, dom):
            size, ext = const_of(load.buffer.shape[d]), const_of(space.extents[d])
            if None not in (size, ext) and size != ext:
                return None  # not a copy of the dimension: a slice or a folded window
            through.append(d)
            continue
        dm = dim_of(idx, out_ids, red_ids)
        if dm is None or dm.group is not None:
            return None
        if dm.red is not None and dm.out is o:
            seen[d] = dm
        elif dm.red is not None and dm.out is None and _unit_out(o, space, d):
            seen[d], strideless = dm, strideless | {d}
        elif dm.red is None and dm.out is o and dm.stride > 0:
            kernel1[d] = dm
        else:
            return None
    return _Dims(seen, kernel1, tuple(through), frozenset(strideless))


def window(red: Reduce, space: Space, ctx, pad_value_ok) -> "Window | None":
    """The pooling window of ``red`` evaluated in ``space``, or None."""
    p = unpad(red.source, ctx)
    if p is None or len(p.load.indices) != space.rank:
        return None
    if p.pad_value is not None and not pad_value_ok(p.pad_value, p.load.dtype):
        return None
    dom = _domain(red, space)
    dims = _classify(p.load, space, red, dom)
    if dims is None:
        return None
    placed = _place(dims, red, space, split_dims(ctx.sem.func, p.load.buffer))
    if placed is None or not 1 <= len(placed[0]) <= 3:
        return None
    spatial, pooled, strideless = placed
    sides = None
    if p.conds:
        sides = guard_sides(p.conds, p.load.indices, p.load.buffer.shape, dom) \
            or sampled_guard_sides(p.conds, p.load.indices, p.load.buffer.shape, dom)
        if sides is None:
            return None
    rext = {id(iv.var): const_of(iv.dom.extent) for iv in red.axes}
    folded = bool(strideless) or len(dims.seen) < len(spatial)
    pooled = tuple(_strideless_dim(dm, rext) if d in strideless else dm for d, dm in zip(spatial, pooled))
    return Window(p, spatial, pooled, sides, rext, frozenset(strideless), folded, blind=folded and not dims.seen)


def _strideless_dim(dm: Dim, rext: dict) -> Dim:
    return attrs.evolve(dm, stride=rext[id(dm.red)])


def _place(dims: _Dims, red: Reduce, space: Space, split: tuple) -> "tuple | None":
    """(pooled dimensions, their Dims, strideless dimensions), the reduction variables not
    read placed as the module doc says; None when not exactly one placement fits.
    ``split``: the data's dimensions a packed layout holds split, never pooled."""
    read = {id(dm.red) for dm in dims.seen.values()}
    if len(read) != len(dims.seen):
        return None
    unread = [iv for iv in red.axes if id(iv.var) not in read]
    if not unread and not dims.kernel1 and not dims.strideless:
        spatial = tuple(sorted(dims.seen))
        return spatial, tuple(dims.seen[d] for d in spatial), frozenset()
    if any(const_of(iv.dom.extent) != 1 for iv in unread):
        return None
    if unread and any(dm.dilation != 1 for dm in dims.seen.values()):
        return None  # the folded axes' dilation: see the module doc
    extra = len(unread) - len(dims.kernel1)
    if extra < 0:
        return None
    # TVM writes a pooled axis's result at its variable (a constant there is a folded
    # ``c // 4`` of a single block of channels), and its pools split no pooled axis
    through = [d for d in dims.through if isinstance(space.indices[d], Var) and d not in split]
    fits = [f for f in itertools.combinations(through, extra) if _fits(dims, f, red, space)]
    if len(fits) != 1:
        return None
    return _placement(dims, fits[0], red, space)


def _placement(dims: _Dims, through: tuple, red: Reduce, space: Space) -> tuple:
    spatial = tuple(sorted([*dims.seen, *dims.kernel1, *through]))
    pooled, strideless = [], set(dims.strideless)
    for d, iv in zip(spatial, red.axes):
        if d in dims.seen:
            pooled.append(dims.seen[d])
            continue
        base = dims.kernel1.get(d) or Dim(space.indices[d], 1, None, 1, 0)
        pooled.append(attrs.evolve(base, red=iv.var, dilation=1))
        if d in through and const_of(space.extents[d]) == 1:
            strideless.add(d)  # o of extent 1 read at itself: any stride
    return spatial, tuple(pooled), frozenset(strideless)


def _fits(dims: _Dims, through: tuple, red: Reduce, space: Space) -> bool:
    """Whether the reduction variables, in order, meet the pooled dimensions in order
    (a variable in sight where it is read, a folded one elsewhere); a passed-through
    dimension taken as pooled must leave one of the layouts pools are written in."""
    spatial = sorted([*dims.seen, *dims.kernel1, *through])
    if len(spatial) != len(red.axes):
        return False
    read = {id(dm.red) for dm in dims.seen.values()}
    for d, iv in zip(spatial, red.axes):
        if d in dims.seen and dims.seen[d].red is not iv.var:
            return False
        if d not in dims.seen and id(iv.var) in read:
            return False
    return not through or _framework_layout(layout_of(spatial, space))


def _framework_layout(layout: "str | None") -> bool:
    """N first, then C and the pooled axes, or the pooled axes and C; a packed channel
    sub-axis last (NCHW, NHWC, NCHW4c, NCDHW8c, ...)."""
    m = re.fullmatch(r"([A-Z]+)(\d+c)?", layout or "")
    k = len(m.group(1)) - 2 if m else 0
    if not 1 <= k <= 3:
        return False
    return m.group(1) in ("NC" + SPATIAL[-k:], "N" + SPATIAL[-k:] + "C")


def layout_of(spatial, space: Space, packed: bool = True) -> "str | None":
    """Layout letters: pooled dims D/H/W, the others N, C (and ``{k}c`` when packed, last).
    ``packed`` False: three unpooled dims name no layout. A function whose blocks a schedule
    rebuilt from its loops (dlight, :func:`.unit_axes.scheduled`) may have lost a pooled
    axis's unit window variable, and that axis would read as a channel chunk or block
    (NHWC pooled to (6, 1) over H = 6 read as a 1-D pool in ``NCW7c``)."""
    letters = SPATIAL[-len(spatial):]
    rest = [d for d in range(space.rank) if d not in spatial]
    names = {d: letters[i] for i, d in enumerate(spatial)}
    if len(rest) == 2:
        names.update({rest[0]: "N", rest[1]: "C"})
    elif packed and len(rest) == 3 and rest[2] == space.rank - 1 and _packed(space, rest[1], rest[2]):
        # the channel's sub-axis last, as every packed layout has it (NCHW4c): a block in
        # the middle (``NC11cHW``) is a third pooled axis whose window lost its variable
        k = const_of(space.extents[rest[2]])
        names.update({rest[0]: "N", rest[1]: "C", rest[2]: f"{k}c"})
    else:
        return None
    return "".join(names[d] for d in range(space.rank))


def _packed(space: Space, outer: int, inner: int) -> bool:
    """Whether result dims ``outer``/``inner`` hold one channel axis split by the inner extent
    (``c // k``, ``c % k``; ``0``, ``c`` when there is one block; or the packed loops)."""
    k = const_of(space.extents[inner])
    a, b = space.indices[outer], space.indices[inner]
    if k is None:
        return False
    if isinstance(a, Var) and isinstance(b, Var):
        return True
    if isinstance(a, FloorDiv) and isinstance(b, FloorMod) and a.a == b.a:
        return const_of(a.b) == k and const_of(b.b) == k
    unit = const_of(a) == 0 and const_of(space.extents[outer]) == 1
    return unit and isinstance(b, Var) and const_of(space.dom.get(b)) == k


def padded_extent_of(w: Window, dm: Dim, declared: bool = False) -> "int | None":
    """The padded buffer's extent along pooled dimension ``dm`` (when a pad buffer was
    seen): looked up by its window variable, or by its output variable alone when the
    window variable was folded away. With ``declared``, the extent expression the buffer
    declares (symbolic ones too)."""
    p = w.padded
    if p.padded_shape is None or p.pad_value is None:
        return None
    if dm.out is None or any(uses(idx, {id(dm.red)}) for idx in p.pad_indices):
        return padded_extent(p, dm.out, dm.red, declared)
    shape = p.padded_exprs if declared else p.padded_shape
    hits = [shape[j] for j, idx in enumerate(p.pad_indices) if dm.out in (affine(idx) or {})]
    return hits[0] if len(hits) == 1 else None

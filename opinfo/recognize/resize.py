"""``image.resize2d`` and ``image.resize3d`` (size, layout, method,
coordinate_transformation_mode, rounding_method, and for cubic cubic_alpha and cubic_exclude).

A resize reads the data at positions computed from the output coordinate through float
arithmetic, rounding and clamping; linear interpolation reads two neighbours along each
spatial axis, cubic four. The recognizer evaluates the expression over every output
spatial position with hashed data and compares it with numpy references of TVM's formulas
(:mod:`.resize_ref`) for each candidate layout, method, coordinate transformation and
rounding. Several candidates can compute the same function on a given shape (``round`` and
``round_prefer_ceil`` when no position falls on .5; any rounding for linear and cubic):
:mod:`.resize_form` chooses by the writing, else the first in default-first order.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir.expr import BufferLoad
from tir.topi.resize import RESIZE2D, RESIZE3D, Flavour

from ..affine import affine
from ..probe import NotEvaluable
from . import resize_crop as crop
from . import resize_ref as ref
from .common import Match, Space
from .numeric import Check, Operand, claim, float_consts, visit_once
from .resize_form import written_like

MAX_POSITIONS = 1_000_000
"""Output positions a resize's candidates are compared at (each spatial position, the other
axes at four values) above which the recognizer abstains: a 448 x 448 output plane (1,792 x
448 x 4 rows) takes 3-10 s; 200,000 refused even a 224 x 224 output."""


@attrs.frozen
class Spec:
    """One resize op as the recognizer reads it."""

    flavour: Flavour
    """The op name, its plain layouts and where TVM computes it differently."""
    blocked: str
    """The layout with a split channel, ``{}`` for the inner channel count."""
    interp_rounding: str
    """The rounding reported for linear and cubic (which ignore it): Relax's default."""

    @property
    def op(self) -> str:
        return self.flavour.op

    def layouts(self, extents: list) -> list:
        """(layout, spatial axes) candidates for an output of these extents."""
        spatial = len(self.flavour.layouts[0]) - 2
        if len(extents) == spatial + 3:
            return [(self.blocked.format(extents[-1]), tuple(range(2, 2 + spatial)))]
        if len(extents) != spatial + 2:
            return []
        return [(lay, tuple(lay.index(c) for c in "DHW"[3 - spatial:])) for lay in self.flavour.layouts]


SPEC2D = Spec(RESIZE2D, "NCHW{}c", "round")
SPEC3D = Spec(RESIZE3D, "NCDHW{}c", "")


def match_resize2d(expr, space: Space, ctx) -> "Match | None":
    """resize2d of one parameter: the first matching candidate in default-first order,
    when exactly one layout fits."""
    return claim(expr, space, ctx, lambda check: _find(SPEC2D, check), _wanted)


def match_resize3d(expr, space: Space, ctx) -> "Match | None":
    """resize3d of one parameter, as :func:`match_resize2d`."""
    return claim(expr, space, ctx, lambda check: _find(SPEC3D, check), _wanted)


def _grid(extents: list, axes: tuple) -> np.ndarray:
    """Output positions: every combination of spatial coordinates, the other dimensions at
    both corners and at random values (different for every combination)."""
    grids = np.meshgrid(*[np.arange(extents[a]) for a in axes], indexing="ij")
    count = grids[0].size
    rng = np.random.default_rng(7)
    rows = []
    for kind in ("first", "last", "random", "random"):
        p = np.zeros((count, len(extents)), dtype=np.int64)
        for d, e in enumerate(extents):
            p[:, d] = 0 if kind == "first" else e - 1 if kind == "last" else rng.integers(0, e, count)
        for a, g in zip(axes, grids):
            p[:, a] = g.ravel()
        rows.append(p)
    return np.unique(np.concatenate(rows), axis=0)


def _pixel(check: Check, x, axes, in_sizes, scale):
    """``pixel(coords)``: the data at clamped source coordinates of the spatial axes, the
    other axes as the sample positions'."""
    def pixel(coords):
        idx = [check.pts[:, d].astype(float) for d in range(len(check.extents))]
        for a, c, size in zip(axes, coords, in_sizes):
            idx[a] = np.clip(c, 0, size - 1)
        return check.values(x, idx, scale)
    return pixel


def _data_load(expr, ctx) -> "BufferLoad | None":
    """The one parameter read, through at least one non-affine index."""
    loads = []
    visit_once(expr, lambda n: loads.append(n) if isinstance(n, BufferLoad) else True)
    bufs = {id(l.buffer) for l in loads}
    if len(bufs) != 1 or not ctx.is_param(loads[0].buffer):
        return None
    if all(affine(i) is not None for l in loads for i in l.indices):
        return None
    return loads[0]


def _candidates(spec: Spec, n_loads: int, spatial: int, consts) -> list:
    """(attributes, reference) pairs for the number of distinct data reads, defaults first."""
    fl, rnd = spec.flavour, spec.interp_rounding
    if n_loads == 1:
        return [({"method": "nearest_neighbor", "coordinate_transformation_mode": m, "rounding_method": r},
                 lambda *a, m=m, r=r: ref.nearest_nd(*a, fl, m, r)) for m in ref.MODES for r in ref.ROUNDINGS]
    # an axis resized to one pixel by pytorch_half_pixel reads index 0 at every tap: TVM's
    # simplifier merges those loads, down to 2 ** k (linear) or 4 ** k (cubic), k < spatial --
    # or part of them, when it writes the same index in two forms (a cubic 12 -> 1 by 6 -> 12
    # keeps 12 loads): any count up to the full one, the numbers deciding
    out = []
    if 2 <= n_loads <= 2 ** spatial:
        out += [({"method": "linear", "coordinate_transformation_mode": m, "rounding_method": rnd},
                 lambda *a, m=m: ref.linear_nd(*a, fl, m)) for m in ref.MODES]
    if not 4 <= n_loads <= 4 ** spatial:
        return out
    alphas = [-0.75, -0.5] + [c for c in consts if c < 0 and c not in (-0.75, -0.5)]
    return out + [({"method": "cubic", "coordinate_transformation_mode": m, "rounding_method": rnd,
              "cubic_alpha": a, "cubic_exclude": e}, lambda *args, m=m, a=a, e=e: ref.cubic_nd(*args, fl, m, a, e))
            for m in ref.MODES for a in alphas for e in (0, 1)]


def _wanted(expr, ctx) -> bool:
    """One parameter read through a non-affine index, of the output's rank, as floats."""
    load = _data_load(expr, ctx)
    return load is not None and expr.dtype.is_float


def _find(spec: Spec, check: Check) -> "Match | None":
    load = _data_load(check.expr, check.ctx)
    if len(load.indices) != len(check.extents):
        return None
    x = load.buffer
    n_loads = _count_loads(check.expr)
    in_shape = check.shape_of(x)
    if crop.guards(check.expr) is not None:
        return _crop(spec, check, load, in_shape, n_loads)
    found = []
    for layout, axes in spec.layouts(check.extents):
        if _fits(load, check.space, in_shape, check.extents, axes):
            got = _matching(spec, check, x, axes, in_shape, n_loads)
            found += [(layout, axes, got)] if got else []
    if len(found) != 1:
        return None
    layout, axes, passing = found[0]
    size = [check.extents[a] for a in axes]
    chosen = written_like(spec.flavour, check.expr, x, size, layout, passing)
    if chosen is None:
        return None
    attrs_ = {"size": size, "layout": layout, **chosen}
    return Match(spec.op, attrs_, (("data", load, check.space),))


def _crop(spec: Spec, check: Check, load, in_shape, n_loads) -> "Match | None":
    """tf_crop_and_resize (2-D only): the one layout whose axes the guards read, the one
    candidate equal to the expression at every spatial position (:mod:`.resize_crop`)."""
    if spec is not SPEC2D or None in in_shape:
        return None
    x, found = load.buffer, []
    for layout, axes in spec.layouts(check.extents):
        if not _fits(load, check.space, in_shape, check.extents, axes):
            continue
        in_sizes = tuple(in_shape[a] for a in axes)
        out_sizes = tuple(check.extents[a] for a in axes)
        read = crop.read_crop(check.expr, check.space, list(axes), in_sizes, out_sizes)
        if read is None or int(np.prod(out_sizes)) * 4 > MAX_POSITIONS:
            continue
        roi, ext, coords, inner = read
        check.use_points(_grid(check.extents, axes))
        try:
            srcs = crop.coordinates_at(coords, check.space, list(axes), check.pts)
        except NotEvaluable:
            return None
        outside = np.zeros(len(check.pts), dtype=bool)
        for s, n in zip(srcs, in_sizes):
            outside |= (s < 0) | (s > n - 1)
        data = Operand(x, None, True)
        outs = [check.pts[:, a].astype(float) for a in axes]

        def reference(scale, make, axes=axes, in_sizes=in_sizes, srcs=srcs, outside=outside, ext=ext):
            val = make(srcs)(_pixel(check, x, axes, in_sizes, scale), outs, in_sizes)
            return np.where(outside, ext, val)

        passing = [a for a, make in crop.candidates(n_loads, len(axes), float_consts(check.expr), inner)
                   if check.matches(data, lambda s, make=make: reference(s, make))]
        if passing:
            found.append((layout, axes, roi, ext, passing))
    if len(found) != 1 or len(found[0][4]) != 1:
        return None
    layout, axes, roi, ext, (chosen,) = found[0]
    attrs_ = {"size": [check.extents[a] for a in axes], "layout": layout, "method": chosen["method"],
              "coordinate_transformation_mode": crop.MODE, "rounding_method": chosen["rounding_method"],
              "roi": roi, "extrapolation_value": ext}
    attrs_.update({k: v for k, v in chosen.items() if k.startswith("cubic_")})
    return Match(spec.op, attrs_, (("data", load, check.space),))


def _matching(spec: Spec, check: Check, x, axes, in_shape, n_loads) -> list:
    """The attributes of every candidate equal to the expression over all spatial positions."""
    out_sizes = tuple(check.extents[a] for a in axes)
    if int(np.prod(out_sizes)) * 4 > MAX_POSITIONS:
        return []
    check.use_points(_grid(check.extents, axes))
    data = Operand(x, None, True)
    in_sizes = tuple(in_shape[a] for a in axes)
    outs = [check.pts[:, a].astype(float) for a in axes]
    consts = float_consts(check.expr)
    return [attrs_ for attrs_, reference in _candidates(spec, n_loads, len(axes), consts)
            if check.matches(data, lambda s, r=reference: r(_pixel(check, x, axes, in_sizes, s), outs, in_sizes,
                                                            out_sizes))]


def _fits(load, space: Space, in_shape, out_shape, axes) -> bool:
    """The axes other than the spatial ones keep their size and are read at the output's own
    coordinate; the spatial ones are not (TVM computes their indices even when a size is
    unchanged), which keeps a 2-D resize of a blocked layout and a 3-D resize apart."""
    for d, (index, own) in enumerate(zip(load.indices, space.indices)):
        copied = index is own or index == own
        if (d in axes) == copied or d not in axes and in_shape[d] != out_shape[d]:
            return False
    return True


def _count_loads(expr) -> int:
    found = []
    visit_once(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and n not in found else True)
    return len(found)

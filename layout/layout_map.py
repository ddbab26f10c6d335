"""The IndexMap between two layouts of the same logical dimensions."""
from __future__ import annotations

from tir import dtype as dt
from tir.expr import Var, convert

from .index_map import IndexMap
from .layout import Layout, LayoutError
from .simplify import simplify_index


def _logical_indices(src: Layout, vs: tuple) -> dict:
    """letter -> expression of the logical index, from index variables of ``src``."""
    outer = {a.letter: v for a, v in zip(src.axes, vs) if a.is_primal}
    out = dict(outer)
    for a, v in zip(src.axes, vs):
        if not a.is_primal:
            out[a.letter] = outer[a.letter] * convert(a.factor, dt.int64) + v
    return out


def _layout_indices(dst: Layout, logical: dict, bounds: dict) -> list:
    out = []
    for a in dst.axes:
        factor = dst.factor_of(a.letter)
        x = logical[a.letter]
        if factor is None:
            out.append(x)
        elif a.is_primal:
            out.append(simplify_index(x // convert(factor, dt.int64), bounds))
        else:
            out.append(simplify_index(x % convert(factor, dt.int64), bounds))
    return out


def _one_way(src: Layout, dst: Layout) -> IndexMap:
    vs = tuple(Var(str(a) if a.is_primal else str(a)[-1] + "i", dt.int64) for a in src.axes)
    # a sub-axis index is below its factor: this lets C*4 + c split back into C and c
    bounds = {v: (0, a.factor - 1) for a, v in zip(src.axes, vs) if not a.is_primal}
    return IndexMap(vs, tuple(_layout_indices(dst, _logical_indices(src, vs), bounds)))


def layout_index_map(src: "Layout | str", dst: "Layout | str") -> IndexMap:
    """Index in ``src`` -> index of the same element in ``dst`` (with its inverse).

    ``layout_index_map("NCHW", "NCHW4c")`` is ``lambda N, C, H, W: [N, C // 4, H, W, C % 4]``.
    """
    src, dst = Layout.parse(src), Layout.parse(dst)
    if not src.compatible(dst):
        raise LayoutError(f"layouts {src} and {dst} do not have the same axes")
    back = _one_way(dst, src)
    fwd = _one_way(src, dst)
    return IndexMap(fwd.initial, fwd.final, back)

"""Layout strings -> ONNX's channel-first order, and Relax window attributes -> ONNX's.

ONNX convolutions and pools take ``N, C, spatial...`` data and ``O, I, spatial...`` kernels.
A Relax op in another plain layout (``NHWC``, ``HWIO``) is expressed with Transposes around
the ONNX node. Relax 2-D padding ``[top, left, bottom, right]`` (in general ``[before...,
after...]`` over the spatial axes in layout order) is exactly ONNX's ``pads`` order
``[x1_begin, x2_begin, x1_end, x2_end]``.
"""
from __future__ import annotations

from .region import Unsupported


def plain(layout: str, what: str) -> str:
    """``layout`` if it is a plain permutation of distinct axis letters (not ``NCHW4c``)."""
    if not layout.isalpha() or not layout.isupper() or len(set(layout)) != len(layout):
        raise Unsupported(f"{what}: layout {layout!r} is not expressible in ONNX (blocked or repeated axes)")
    return layout


def channel_first(layout: str, what: str) -> str:
    """The ``NC<spatial>`` order for a data layout, spatial axes kept in layout order."""
    plain(layout, what)
    if "N" not in layout or "C" not in layout:
        raise Unsupported(f"{what}: layout {layout!r} has no N or C axis")
    return "NC" + "".join(c for c in layout if c not in "NC")


def perm(src: str, dst: str) -> list:
    """The Transpose permutation taking ``src`` order to ``dst`` order."""
    return [src.index(c) for c in dst]


def kernel_first(kernel_layout: str, spatial: str, what: str, out_first: bool = True) -> str:
    """The ``OI<spatial>`` (or ``IO<spatial>``) order for a kernel layout."""
    plain(kernel_layout, what)
    head = "OI" if out_first else "IO"
    want = head + spatial
    if sorted(want) != sorted(kernel_layout):
        raise Unsupported(f"{what}: kernel layout {kernel_layout!r} does not fit data axes {spatial!r}")
    return want


def spatial_ints(value, n: int, what: str, name: str) -> list:
    """A per-spatial-axis attribute (``strides``, ``dilation``, ``pool_size``) as n ints."""
    vals = [int(v) for v in (value if isinstance(value, (tuple, list)) else [value])]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise Unsupported(f"{what}: {name} {list(vals)} does not have {n} values")
    return vals


def pads(value, n: int, what: str) -> list:
    """Relax ``padding`` as ONNX ``pads`` (``[begin..., end...]`` over n spatial axes)."""
    vals = [int(v) for v in (value if isinstance(value, (tuple, list)) else [value])]
    if len(vals) == 1:
        vals = vals * (2 * n)
    elif len(vals) == n:
        vals = vals + vals
    if len(vals) != 2 * n:
        raise Unsupported(f"{what}: padding {list(vals)} does not have {2 * n} values")
    if any(v < 0 for v in vals):
        raise Unsupported(f"{what}: negative padding")
    return vals

"""Ops of a function whose buffers TVM's ``transform_layout`` packed (NCHW4c, OIHW4i4o).

The function is read on its logical tensors (:func:`.unpack.unpack`) and the layouts of
packed operands are named packed (:func:`.unpack.repack`). When only unit splits show the
packing (``x[n, 0, h, w, c]``: a single block of 4 channels), the buffer may as well be a
genuine 5-D tensor with a unit dimension: the op is claimed only when both readings
agree (same op, same attributes, axes compared on each reading's rank).
"""
from __future__ import annotations

from .copy_tags import RESHAPES
from .unpack import buffer_shapes, repack, unpack

AXIS_KEYS = ("axis", "axes", "channel_axis")


def _canon(op, shapes: dict) -> tuple:
    """(name, attributes) with axes taken modulo the rank of the op's first operand."""
    first = op.operands[0] if op.operands else op.output
    rank = len(shapes.get(first.buffer) or ()) if first is not None else 0
    out = {}
    for k, v in op.attrs.items():
        if k in AXIS_KEYS and rank and isinstance(v, int):
            v = v % rank
        elif k in AXIS_KEYS and rank and isinstance(v, tuple) and all(isinstance(a, int) for a in v):
            v = tuple(a % rank for a in v)
        out[k] = v
    return op.name, tuple(sorted(out.items(), key=lambda kv: kv[0]))


def _packing_factors(packed: dict) -> bool:
    """Whether every split factor could be a packed layout's block (a power of two up to 64:
    NCHW4c, NCHW16c, ...)."""
    factors = [sp.factor for splits in packed.values() for sp in splits]
    return all(f is not None and 0 < f <= 64 and f & (f - 1) == 0 for f in factors)


def recognize_packed(func, recognize_ops) -> "tuple | None":
    """The ops of ``func`` (recognized by ``recognize_ops``) when some buffer is packed,
    () when not certain; None when no buffer is packed."""
    got = unpack(func)
    if got is None:
        return None
    logical, packed, shown = got
    raw = recognize_ops(logical)
    shapes = buffer_shapes(logical)
    ops = tuple(repack(op, packed, shapes) for op in raw)
    if shown:
        return recognize_ops(func) if not raw else (() if None in ops else ops)
    physical = recognize_ops(func)
    if not raw or (physical and all(op.name in RESHAPES for op in physical) and not _packing_factors(packed)):
        # only unit dimensions suggested a packing, with a trailing extent no packed layout
        # uses (LRN's squeeze of (1, 1, C, 56, 56)), and the function reads as a reshape of
        # its physical buffers: what the IR does, exactly
        return physical
    if None in ops or len(ops) != len(physical):
        return ()
    phys_shapes = buffer_shapes(func)
    agree = all(_canon(a, shapes) == _canon(b, phys_shapes) for a, b in zip(ops, physical))
    return physical if agree else ()

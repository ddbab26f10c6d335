"""Numpy broadcasting of shapes and the index a broadcast input is read at (TVM's rules)."""
from __future__ import annotations

from typing import Sequence

from ..expr import as_int
from .common import OpError, ShapeError, index


def broadcast_shape(shapes: Sequence[Sequence], op: str) -> list:
    """The numpy broadcast of ``shapes``; a symbolic extent matches itself or 1."""
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = [s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0]
        chosen = dims[0]
        for e in dims[1:]:
            chosen = _merge(chosen, e, op, shapes)
        out.append(chosen)
    return out


def _merge(a, b, op, shapes):
    ca, cb = as_int(a), as_int(b)
    if ca == 1:
        return b
    if cb == 1 or a is b or (ca is not None and ca == cb):
        return a
    if ca is None or cb is None:
        if ca is None and cb is None:
            raise OpError(op, "shapes", f"cannot prove that symbolic extents {a} and {b} are equal")
        return a if ca is None else b
    shown = " and ".join(str([as_int(e) if as_int(e) is not None else str(e) for e in s]) for s in shapes)
    raise ShapeError(op, "shapes", f"{shown} do not broadcast ({ca} vs {cb})")


def broadcast_index(shape: Sequence, out_index: Sequence, out_shape: Sequence) -> tuple:
    """Indices into a tensor of ``shape`` broadcast to ``out_shape``: trailing alignment,
    and ``0`` on a unit dimension that the output extends."""
    offset = len(out_shape) - len(shape)
    idx = []
    for d, extent in enumerate(shape):
        out_extent = out_shape[d + offset]
        if as_int(extent) == 1 and as_int(out_extent) != 1:
            idx.append(index(0))
        else:
            idx.append(out_index[d + offset])
    return tuple(idx)

"""The index maps of data movement, shared by its readers: an output space of plain loop
variables, the constant extents on either side, a load's indices as affine terms of the
output variables, the branches of a select, and the grid of every output point (for the
checks that evaluate an index map rather than prove it)."""
from __future__ import annotations

import numpy as np

from tir.expr import Call, Select, Var

from ..affine import ONE, affine, const_of
from .common import Space, strip

MAX_GRID = 60000


def pure_space(space: Space) -> bool:
    """Whether the output indices are distinct plain variables (no fused or split axes)."""
    idx = space.indices
    return all(isinstance(i, Var) for i in idx) and len({id(i) for i in idx}) == len(idx)


def const_extents(space) -> list:
    """The output extents as ints (None where symbolic)."""
    return [const_of(e) for e in space.extents]


def load_extents(load) -> list:
    """The extents of the buffer ``load`` reads, as ints (None where symbolic)."""
    return [const_of(s) for s in load.buffer.shape]


def affine_terms(load, space) -> "list | None":
    """Per input dim: (out dim or None, coeff, offset) for plain affine indices, else None."""
    out = []
    pos = {id(v): j for j, v in enumerate(space.indices)}
    for idx in load.indices:
        f = affine(idx)
        if f is None:
            return None
        keys = [k for k in f if k is not ONE]
        if len(keys) > 1 or (keys and id(keys[0]) not in pos):
            return None
        if keys and not isinstance(keys[0], Var):
            return None
        j = pos[id(keys[0])] if keys else None
        out.append((j, f.get(keys[0], 0) if keys else 0, f.get(ONE, 0)))
    return out


def data_operand(load, space) -> tuple:
    """The operand roles of a one-input movement op: ``load`` is its data."""
    return (("data", load, space),)


def branches(e) -> "tuple | None":
    """(condition, true value, false value) of a Select or an if_then_else, else None."""
    if isinstance(e, Select):
        return e.condition, strip(e.true_value), strip(e.false_value)
    if isinstance(e, Call) and e.op == "if_then_else":
        return e.args[0], strip(e.args[1]), strip(e.args[2])
    return None


def const_grid(space) -> "dict | None":
    """Every point of the output box (None when an extent is symbolic or the box too big)."""
    ext = const_extents(space)
    return None if None in ext else grid_over(space.indices, ext)


def grid_over(vars_, exts, limit: int = MAX_GRID) -> "dict | None":
    """Every point of the box ``exts``: var -> its value at each point (None when more than
    ``limit``)."""
    if int(np.prod(exts)) > limit:
        return None
    axes = np.meshgrid(*[np.arange(n, dtype=float) for n in exts], indexing="ij")
    return {v: a.ravel() for v, a in zip(vars_, axes)}

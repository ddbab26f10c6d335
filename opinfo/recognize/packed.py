"""Packed layouts (``NCHW4c``, ``OIHW4i4o``) seen as logical tensors.

A packed buffer holds one logical axis in two dimensions, in one of three forms:

* ``c // 4`` and ``c % 4``: TVM's ``transform_layout`` keeps the blocks iterating the
  logical axes and rewrites the accesses;
* a unit dimension read at ``0`` (or at a loop variable of extent 1 used nowhere else) and
  ``c``: the same when the axis has a single block (the simplifier folded ``c // 4`` to 0);
* two loop variables ``cb`` and ``ci``: the block iterates the packed shape itself (the
  logical index is ``cb * 4 + ci``).

:func:`view` fuses such pairs back into one logical dimension and remembers where its
parts live, so a recognizer can reason on logical indices and still name the packed
layout (:meth:`View.layout`). Which dimensions may pair is told by the caller, who knows
the roles of the variables; a unit dimension that pairs with nothing is left alone (and
will not fit any role).
"""
from __future__ import annotations

import attrs

from tir.expr import FloorDiv, FloorMod, IntImm

from ..affine import const_of


@attrs.frozen
class Part:
    """Where one logical dimension lives in the buffer."""

    outer: int
    """The dimension holding the axis (or its blocks)."""
    inner: "int | None" = None
    """The dimension holding the sub-axis, when packed."""
    factor: "int | None" = None


@attrs.frozen
class View:
    """An access seen through its packing."""

    indices: tuple
    """Logical index expressions."""
    shape: tuple
    """Logical extents."""
    parts: tuple
    """One Part per logical dimension."""
    rank: int
    """Rank of the buffer."""

    @property
    def packed(self) -> bool:
        return any(p.inner is not None for p in self.parts)

    def layout(self, letters) -> "str | None":
        """The buffer's layout string given one upper-case letter per logical dimension."""
        out = [None] * self.rank
        for letter, p in zip(letters, self.parts):
            out[p.outer] = letter
            if p.inner is not None:
                out[p.inner] = f"{p.factor}{letter.lower()}"
        return None if None in out else "".join(out)


def _split_pairs(indices, shape, used: set) -> list:
    """(outer, logical index, extent, inner, factor) for each ``e // k``, ``e % k`` pair."""
    out = []
    for a, ia in enumerate(indices):
        if not isinstance(ia, FloorDiv) or a in used:
            continue
        k = const_of(ia.b)
        for b in range(a + 1, len(indices)):
            ib = indices[b]
            if b in used or not isinstance(ib, FloorMod) or ib.a != ia.a or const_of(ib.b) != k:
                continue
            blocks = const_of(shape[a])
            if k and const_of(shape[b]) == k and blocks:
                used.update((a, b))
                out.append((a, ia.a, IntImm(shape[a].dtype, blocks * k), b, k))
                break
    return out


def _var_pairs(indices, shape, pairs, used: set) -> list:
    out = []
    for ov, iv in pairs:
        a = next((d for d, i in enumerate(indices) if i is ov and d not in used), None)
        b = next((d for d, i in enumerate(indices) if i is iv and d not in used), None)
        k, blocks = (const_of(shape[b]), const_of(shape[a])) if None not in (a, b) else (None, None)
        if a is None or b is None or a > b or not k or not blocks:
            continue
        used.update((a, b))
        out.append((a, ov * IntImm(ov.dtype, k) + iv, IntImm(shape[a].dtype, blocks * k), b, k))
    return out


def _unit_pairs(indices, shape, dom, chan_vars, unit_vars, used: set) -> list:
    out = []
    for a, ia in enumerate(indices):
        unit = const_of(ia) == 0 or any(ia is u for u in unit_vars)
        if a in used or not unit or const_of(shape[a]) != 1:
            continue
        for v in chan_vars:
            b = next((d for d, i in enumerate(indices) if i is v and d > a and d not in used), None)
            k = const_of(shape[b]) if b is not None else None
            if k and const_of(dom.get(v)) == k:
                used.update((a, b))
                out.append((a, v, shape[b], b, k))
                break
    return out


def view(indices, shape, dom: dict, chan_vars=(), var_pairs=(), unit_vars=()) -> View:
    """The logical view of ``buffer[indices]`` (see the module docstring).

    ``chan_vars`` (in order of preference) may sit in the sub-axis of a unit dimension;
    ``var_pairs`` are (block, sub-axis) loop variables of a block iterating packed shapes;
    ``unit_vars`` are variables of extent 1 that index nothing else (a single block).
    """
    indices, used = tuple(indices), set()
    fused = _split_pairs(indices, shape, used)
    fused += _var_pairs(indices, shape, var_pairs, used)
    fused += _unit_pairs(indices, shape, dom, chan_vars, unit_vars, used)
    fused += [(d, indices[d], shape[d], None, None) for d in range(len(indices)) if d not in used]
    fused.sort(key=lambda t: t[0])
    return View(tuple(t[1] for t in fused), tuple(t[2] for t in fused),
                tuple(Part(t[0], t[3], t[4]) for t in fused), len(indices))


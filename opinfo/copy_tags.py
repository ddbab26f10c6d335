"""Copies that several ops lower to identically, told apart by TVM's compute tag.

A copy that keeps every element in row-major order (``out[0, i] = x[i]``, ``out[i, j] =
x[i, j]``) is what reshape, squeeze, expand_dims, broadcast_to to the same size, tile by
ones, permute_dims moving only unit dimensions, nn.pad by zeros, a full strided_slice and
a one-section split all lower to. The loops cannot say which op it was; the block name TVM
gave the compute (its topi tag) can. :func:`settle` keeps a recognised copy when its block's
tag is that op's, renames it to the reshape family when the tag is a reshape's, and
abstains when the tag names another op or is unknown.
"""
from __future__ import annotations

import re

import attrs

RESHAPES = frozenset({"reshape", "squeeze", "expand_dims", "flatten"})
TAGS = {"T_reshape": "reshape", "T_squeeze": "squeeze", "T_expand_dims": "expand_dims", "expand_dims": "expand_dims",
        "T_dynamic_strided_slice_with_axes": "strided_slice",
        "T_broadcast_to": "broadcast_to", "T_tile": "tile", "T_transpose": "permute_dims",
        "PadInput": "nn.pad", "T_pad": "nn.pad", "T_strided_slice": "strided_slice",
        "T_strided_slice_with_axes": "strided_slice", "T_split": "split", "T_split_sections": "split"}


def _ints(v):
    try:
        return [int(x) for x in v]
    except (TypeError, ValueError):
        return None


def order_preserving(op, in_shape, out_shape) -> bool:
    """Whether ``op`` (as recognised) copies its data in row-major order."""
    a = dict(op.attrs)
    if op.name in RESHAPES:
        return True
    if in_shape is None or out_shape is None:
        return False
    if op.name == "broadcast_to":
        return [d for d in in_shape if d != 1] == [d for d in out_shape if d != 1]
    if op.name == "tile":
        reps = _ints(a.get("repeats", ()))
        return reps is not None and all(r == 1 for r in reps)
    if op.name == "permute_dims":
        axes = _ints(a.get("axes", ()))
        moved = [ax for ax in (axes or []) if in_shape[ax] != 1]
        return axes is not None and moved == sorted(moved)
    if op.name in ("nn.pad", "strided_slice"):
        return list(in_shape) == list(out_shape)
    return False


def settle(op, in_shape, out_shape, block_names):
    """``op``, a reshape, or None (see the module doc)."""
    if not order_preserving(op, in_shape, out_shape):
        return op
    tags = {TAGS.get(re.sub(r"_\d+$", "", b)) for b in block_names}
    if len(tags) != 1 or None in tags:
        return None
    (tag_op,) = tags
    if tag_op == op.name or (tag_op in RESHAPES and op.name in RESHAPES):
        return op
    if tag_op in RESHAPES and out_shape is not None:
        return attrs.evolve(op, name="reshape", attrs={"shape": list(out_shape)})
    return None

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

import attrs

from .ew_tags import bare
from .ew_tree import SCALAR_ROOTS
from .tags import tag

RESHAPES = frozenset({"reshape", "squeeze", "expand_dims", "flatten"})
TAGS = {"T_reshape": "reshape", "T_squeeze": "squeeze", "T_expand_dims": "expand_dims", "expand_dims": "expand_dims",
        "T_dynamic_strided_slice_with_axes": "strided_slice",
        "T_broadcast_to": "broadcast_to", "T_tile": "tile", "T_transpose": "permute_dims",
        "PadInput": "nn.pad", "T_pad": "nn.pad",
        "ReflectPadInput": "nn.pad", "ReplicatePadInput": "nn.pad", "CircularPadInput": "nn.pad", "T_strided_slice": "strided_slice",
        "T_strided_slice_with_axes": "strided_slice", "T_split": "split", "T_split_sections": "split",
        "T_repeat": "repeat", "T_reverse_sequence": "flip"}


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
        # a symbolic input extent read whole may be the output's constant one (n == 5)
        kept_in, kept_out = [d for d in in_shape if d != 1], [d for d in out_shape if d != 1]
        return len(kept_in) == len(kept_out) and all(a == b or isinstance(a, str) for a, b in zip(kept_in, kept_out))
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


TAKE_OR_GATHER = "take|gather_elements"
"""A one-block function ``out[i] = x[idx[i]]``: 1-D take and gather_elements(axis=0) lower
to the same loop, told apart by its tag (T_take or T_gather)."""
GATHER_TAGS = {"T_take": "take", "T_gather": "gather_elements"}


def _tag(block_name: str) -> str:
    """The compute tag of a block, also when FuseTIR appended digits to a repeated name (the
    second broadcast_to of a fused kernel is ``T_broadcast_to1``)."""
    t = tag(block_name)
    return t if t in TAGS or t in GATHER_TAGS or t in COMPUTING_TAGS else bare(t)


def settle(op, in_shape, out_shape, block_names):
    """``op``, a reshape, or None (see the module doc)."""
    if op.name == TAKE_OR_GATHER:
        named = {GATHER_TAGS.get(_tag(b)) for b in block_names}
        return attrs.evolve(op, name=named.pop()) if len(named) == 1 and None not in named else None
    if not order_preserving(op, in_shape, out_shape):
        return None if _contradicted(op, block_names) else op
    tags = {TAGS.get(_tag(b)) for b in block_names}
    if len(tags) != 1 or None in tags:
        return None
    (tag_op,) = tags
    if tag_op == op.name or (tag_op in RESHAPES and op.name in RESHAPES):
        return op
    if tag_op in RESHAPES and out_shape is not None:
        return attrs.evolve(op, name="reshape", attrs={"shape": list(out_shape)})
    if in_shape is not None and list(in_shape) == list(out_shape or ()):
        named = identity_attrs(tag_op, list(in_shape), block_names)
        if named is not None:
            return attrs.evolve(op, name=tag_op, attrs=named)
    return None


COPIES = RESHAPES | {"broadcast_to", "tile", "permute_dims", "nn.pad", "strided_slice", "split", "flip"}
TAG_REQUIRED = frozenset({"broadcast_to", "tile", "permute_dims", "nn.pad", "strided_slice", "flip"})
"""Copy readings that move data out of row-major order, named only where a block carries the
op's own tag: every op that repeats a unit axis (repeat, tile, a resize from 1x1, ...) lowers
to broadcast_to's loops once TVM simplifies ``j // r`` or ``j % 1`` to 0; layout_transform
with a permuting index map (tag ``te_layout_transform``) lowers to permute_dims' loops; flip
is TVM's ``T_reverse_sequence``. An op the tables do not know may lower to any of these
loops, so an unknown tag abstains."""
COMPUTING_TAGS = frozenset({"compute", "resize", "pool_max", "pool_sum", "pool_avg", "adaptive_pool_sum",
                            "adaptive_pool_avg"} | {f"T_{b}" for b in SCALAR_ROOTS})
"""Tags of ops that compute (elementwise ops, resize, pools): a copy in such a block is a
degenerate case of that op (a resize of a 1x1 image broadcasts it; its method is unseen)."""


def _contradicted(op, block_names) -> bool:
    """Whether the function's compute tags name another op than ``op``: a strided_slice
    reversing a whole axis is a flip's loop (its end, one past the start, is not seen), a
    tile or a repeat of a unit axis is a broadcast_to's, a resize from 1x1 a broadcast_to's."""
    if op.name in COPIES and any(_tag(b) in COMPUTING_TAGS for b in block_names):
        return True
    named = {TAGS.get(_tag(b)) for b in block_names}
    if op.name in TAG_REQUIRED and op.name not in named:
        return True  # possibly another op's loops (see TAG_REQUIRED)
    if len(named) != 1 or None in named:
        return False
    (tag_op,) = named
    return tag_op != op.name and not (tag_op in RESHAPES and op.name in RESHAPES)


def contradicted(op, block_names) -> bool:
    """Whether the compute tags of ``block_names`` (the blocks of one op of a fused kernel)
    name another op than the copy ``op`` (a whole-axis reversal recognised as flip in the
    blocks of a strided_slice)."""
    return op.name in COPIES and _contradicted(op, block_names)


def identity_attrs(tag_op, shape, block_names) -> "dict | None":
    """The attributes of ``tag_op`` when it copies a tensor of ``shape`` unchanged, if only
    one set of them does so: permute_dims keeps every axis in place (with two unit axes or
    more, which were swapped is not seen), tile repeats by ones (of the data's rank, as
    :func:`.movement._tile` reports repeats), broadcast_to the same shape, split of a 1-D
    tensor in one piece (its form, a count or an index list, read from the tag as in
    :mod:`.recognize.split`). A zero pad (pad value unseen), a full slice (axes unseen) and
    a one-piece split of a tensor of rank 2 or more (axis unseen) abstain."""
    rank = len(shape)
    if tag_op == "permute_dims" and sum(1 for d in shape if d == 1) <= 1:
        return {"axes": list(range(rank))}
    if tag_op == "tile" and rank:
        return {"repeats": [1] * rank}
    if tag_op == "broadcast_to":
        return {"shape": list(shape)}
    if tag_op == "split" and rank == 1 and len(block_names) == 1:
        form = tag(block_names[0])
        return {"axis": 0, "indices_or_sections": 1 if form == "T_split_sections" else []}
    return None

"""reverse_sequence, recognised by running the PrimFunc.

``reverse_sequence(x, seq_lengths, seq_axis, batch_axis)`` reverses, for every index b
along ``batch_axis``, the first ``seq_lengths[b]`` elements along ``seq_axis``. TVM
writes it as one gather whose index along ``seq_axis`` is a nest of ``if_then_else`` on
``seq_lengths[b]``. Any (seq_axis, batch_axis) pair the shapes allow is a candidate; the
function is run by the interpreter on random data and random lengths (including lengths
of 0, 1 and past the axis, which TVM clamps) and compared with numpy. Exactly one
candidate must agree, else abstain.
"""
from __future__ import annotations

import numpy as np

from tir.function import PrimFunc

from .info import OpInfo, Operand
from .recognize.running import concrete_shapes, poisoned, run, shapes_beyond

MAX_ELEMENTS = 1_000_000
SYMBOLIC_VALUE = 3


def _reference(x, lengths, seq_axis: int, batch_axis: int):
    out = np.array(x, copy=True)
    n = x.shape[seq_axis]
    for b, length in enumerate(lengths):
        length = int(min(max(length, 1), n))
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[seq_axis] = slice(length - 1, None, -1) if length > 0 else slice(0, 0)
        dst = list(src)
        dst[seq_axis] = slice(0, length)
        out[tuple(dst)] = x[tuple(src)]
    return out


def recognize_reverse_sequence(func: PrimFunc) -> "OpInfo | None":
    """The reverse_sequence op ``func`` computes, or None (see the module doc)."""
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != 3 or len(bufs) != len(func.params):
        return None
    data, lengths, out = bufs
    if len(lengths.shape) != 1 or not str(lengths.dtype).startswith("int") or data.dtype != out.dtype:
        return None
    shapes = concrete_shapes(bufs, SYMBOLIC_VALUE)
    if shapes is None or shapes[0] != shapes[2] or len(shapes[0]) < 2:
        return None
    if int(np.prod(shapes[0])) > MAX_ELEMENTS:
        return None
    rank = len(shapes[0])
    cands = [(s, b) for s in range(rank) for b in range(rank)
             if s != b and shapes[0][b] == shapes[1][0]]
    agree = _agreeing(func, shapes, str(data.dtype), str(lengths.dtype), cands)
    if len(agree) != 1 or not _holds_beyond(func, bufs, agree[0]):
        return None
    seq_axis, batch_axis = agree[0]
    return OpInfo("reverse_sequence", {"seq_axis": seq_axis, "batch_axis": batch_axis},
                  (Operand("data", data.name, 0), Operand("seq_lengths", lengths.name, 1)),
                  Operand("output", out.name, 2))


def _holds_beyond(func, bufs, cand) -> bool:
    """The reading holds with symbolic extents bound past every integer constant of the body
    (a test ``i < 12`` on a symbolic axis never bites at 3; see
    :func:`.recognize.running.shapes_beyond`)."""
    seq_axis, batch_axis = cand

    def fits(shapes):
        return shapes[0] == shapes[2] and shapes[0][batch_axis] == shapes[1][0]
    for shapes in shapes_beyond(func, bufs, SYMBOLIC_VALUE, fits):
        if int(np.prod(shapes[0])) > MAX_ELEMENTS:
            return False
        if _agreeing(func, shapes, str(bufs[0].dtype), str(bufs[1].dtype), [cand], runs=2) != [cand]:
            return False
    return True


EXTRA_RUNS = 8
"""Runs with independently drawn lengths after the sweep of every length."""


def _agreeing(func, shapes, dtype: str, ltype: str, cands: list, runs: int = 3) -> list:
    rng = np.random.default_rng(11)
    # every length from 0 to past the longest axis is drawn in some run (a test against one
    # particular length, ``y <= 2`` for ``y <= 1``, shows only there)
    # -- and then lengths drawn independently, so that batch entries differ in every way
    # (a length read from another batch entry, ``y[0]`` for ``y[b]``, shows only where
    # the two disagree about a position)
    span, batch = max(shapes[0]) + 2, max(1, int(np.prod(shapes[1])))
    order = rng.permutation(span)
    sweep = max(runs, -(-span // batch))
    for r in range(sweep + EXTRA_RUNS):
        if not cands:
            break
        x = rng.standard_normal(shapes[0]).astype(dtype) if dtype.startswith("float") else \
            rng.integers(-50, 50, shapes[0]).astype(dtype)
        lengths = order[(np.arange(batch) + r * batch) % span] if r < sweep else rng.integers(0, span, batch)
        lengths = lengths.reshape(shapes[1]).astype(ltype)
        got = run(func, [x, lengths, poisoned(shapes[2], dtype)])
        if got is None:
            return []
        cands = [c for c in cands if np.array_equal(got, _reference(x, lengths, *c))]
    return cands

"""A bench of Relax ops that the visible corpus does not hold, lowered the way TVM 0.27's
LegalizeOps writes them (topi's ``te.compute`` forms, one PrimFunc per Relax op).

Each :class:`Case` builds one PrimFunc. ``opinfo.analyze`` must abstain on it or report
exactly one of the ``accept`` answers: an unknown op must never come out as a different
op, with wrong attributes, or as several ops. ``accept`` lists the known ops a case is
*semantically identical* to (mean over several axes is ``mean``); where a Relax op's
PrimFunc is the very same program as a known op's (collapse_sum_to that only drops
leading axes is ``sum``'s program), the known op is accepted and the case says so.

The forms follow TVM's sources (python/tvm/relax/transform/legalize_ops/*.py,
include/tvm/topi/*.h, python/tvm/topi/*.py); block and buffer names are TVM's where they
matter to a reader, never to the analysis.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir.builder import Builder, sum_
from tir.expr import (EQ, Call, Cast, FloorDiv, FloorMod, Max, Min, Select, Var, const, if_then_else)
from tir.function import PrimFunc, prim_func
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, seq
from tir import dtype as dt
from tir.topi import lower_into

F32, I64 = "float32", "int64"


@attrs.frozen
class Case:
    """One PrimFunc of a Relax op and the answers allowed for it (besides abstaining)."""

    name: str
    """The Relax op and the variant, e.g. ``repeat(axis=1)``."""
    build: Callable[[], PrimFunc]
    accept: tuple = ()
    """Allowed non-empty answers, each a tuple of (op name, attrs) pairs."""


def _ax(n: int) -> list:
    return [f"ax{d}" for d in range(n)]


def _one(name: str, inputs, body_fn, shape, dtype=None, names=None) -> PrimFunc:
    """A single-block PrimFunc ``name[i...] = body_fn(*buffers)(*i)``."""
    b = Builder()
    bufs = [b.placeholder(s, d, f"x{k}" if k else "x") for k, (s, d) in enumerate(inputs)]
    out = b.compute(name, shape, body_fn(*bufs), dtype=dtype, names=names or _ax(len(shape)))
    return b.build(bufs, [out])


# ------------------------------------------------------------------ data movement
def repeat(axis: int) -> PrimFunc:
    """``topi.repeat``: ``x[..., i // repeats, ...]`` along ``axis``."""
    shape = [2, 3, 4]
    out = list(shape)
    out[axis] *= 2
    return _one("T_repeat", [(shape, F32)], lambda x: lambda *i: x[tuple(
        FloorDiv(v, const(2, I64)) if d == axis else v for d, v in enumerate(i))], out)


def repeat_flat() -> PrimFunc:
    """``relax.repeat`` with axis None: a flattening reshape, then repeat along axis 0."""
    b = Builder()
    x = b.placeholder((2, 3), F32, "x")
    flat = lower_into(b, "reshape", [x], shape=[6])
    out = b.compute("T_repeat", (12,), lambda i: flat[FloorDiv(i, const(2, I64))], names=["ax0"])
    return b.build([x], [out])


def pixel_shuffle() -> PrimFunc:
    """``topi.nn.pixel_shuffle`` (factor 2): channel blocks moved into space."""
    r = const(2, I64)

    def body(x):
        def f(n, c, h, w):
            cin = c * r * r + FloorMod(h, r) * r + FloorMod(w, r)
            return x[n, cin, FloorDiv(h, r), FloorDiv(w, r)]
        return f

    return _one("PixelShuffle", [((1, 8, 2, 3), F32)], body, (1, 2, 4, 6))


def one_hot() -> PrimFunc:
    """``topi.one_hot`` (depth 4, axis -1): ``Select(indices[i] == j, on, off)``."""
    return _one("T_one_hot", [((3,), I64)], lambda idx: lambda i, j: Select(
        EQ(idx[i], j), const(1.0, F32), const(0.0, F32)), (3, 4), dtype=F32)


def trilu(upper: bool, k: int) -> PrimFunc:
    """``topi.trilu``: ``Select(row <= col - k, x, 0)`` (upper) or ``row >= col - k`` (lower)."""
    def body(x):
        def f(i, j):
            shifted = j - const(k, I64)
            keep = (i <= shifted) if upper else (i >= shifted)
            return Select(keep, x[i, j], const(0.0, F32))
        return f

    return _one("trilu", [((4, 5), F32)], body, (4, 5), names=["i0", "i1"])


def split(sections: list) -> PrimFunc:
    """``topi.split`` along axis 1: one output per section, ``x[i, j + begin]``."""
    b = Builder()
    x = b.placeholder((3, 8), F32, "x")
    outs, begin = [], 0
    for width in sections:
        off = begin
        outs.append(b.compute("T_split_sections", (3, width),
                              lambda i, j, off=off: x[i, j + const(off, I64) if off else j], names=_ax(2)))
        begin += width
    return b.build([x], outs)


def gather_elements(axis: int) -> PrimFunc:
    """``topi.gather``: ``x[..., indices[i...], ...]`` with the index read at the output position."""
    def body(x, idx):
        return lambda *i: x[tuple(idx[i] if d == axis else v for d, v in enumerate(i))]

    return _one("T_gather", [((3, 4), F32), ((3, 4), I64)], body, (3, 4))


def prelu(axis: int) -> PrimFunc:
    """``topi.nn.prelu``: ``Select(x > 0, x, x * slope[i_axis])`` (block ``T_prelu``)."""
    shape = (2, 3, 4)
    zero = const(0.0, F32)
    return _one("T_prelu", [(shape, F32), ((shape[axis],), F32)], lambda x, s: lambda *i: Select(
        x[i] > zero, x[i], x[i] * s[i[axis]]), shape, names=["i0", "i1", "i2"])


def take_2d_indices() -> PrimFunc:
    """``relax.take`` with 2-D indices (a known op, other attributes)."""
    b = Builder()
    x = b.placeholder((5, 4), F32, "x")
    idx = b.placeholder((2, 3), I64, "x1")
    return b.build([x, idx], [lower_into(b, "take", [x, idx], axis=0)])


def reverse_sequence() -> PrimFunc:
    """``topi.reverse_sequence`` with seq_lengths (batch axis 0, seq axis 1)."""
    def body(x, lens):
        def f(bi, s):
            n = lens[bi]
            rev = if_then_else(or_(n <= const(1, I64), n <= s), s, if_then_else(
                n > const(5, I64), const(4, I64) - s, n - const(1, I64) - s))
            return x[bi, rev]
        return f

    return _one("T_reverse_sequence", [((3, 5), F32), ((3,), I64)], body, (3, 5))


def or_(a, b):
    """Logical or of two conditions (``a or b`` in TVMScript)."""
    return a | b


def pad_mode(mode: str) -> PrimFunc:
    """``topi.nn.reflect_pad`` / ``replicate_pad`` / ``circular_pad`` of (3, 4) by (1, 2) on axis 1."""
    before, n = const(1, I64), const(4, I64)

    def index(j):
        p = j - before
        if mode == "reflect":
            p = if_then_else(p < const(0, I64), const(0, I64) - p, p)
            return if_then_else(p >= n, const(6, I64) - p, p)
        if mode == "replicate":
            return Max(Min(p, const(3, I64)), const(0, I64))
        return FloorMod(p + n, n)

    return _one("PadInput", [((3, 4), F32)], lambda x: lambda i, j: x[i, index(j)], (3, 7))


def circular_pad_as_tile() -> PrimFunc:
    """``circular_pad`` with no before-padding and after-padding a multiple of the extent:
    the same program as ``tile`` (``x[i % n]``)."""
    return _one("PadInput", [((3, 4), F32)], lambda x: lambda i, j: x[i, FloorMod(j, const(4, I64))], (3, 8))


def plain_copy() -> PrimFunc:
    """``x[i, j]`` copied: permute_dims with axes [0, 1], squeeze or strided_slice of nothing,
    broadcast_to its own shape all lower to it. Its T_transpose tag names permute_dims, whose
    only axes that copy (3, 4) unchanged are [0, 1] (:mod:`opinfo.copy_tags`)."""
    return _one("T_transpose", [((3, 4), F32)], lambda x: lambda i, j: x[i, j], (3, 4))


def reversing_slice() -> PrimFunc:
    """``strided_slice(begin=[4], end=[-6], strides=[-1])`` over a whole axis: flip's values,
    strided_slice's form ``v * -1 + 4``."""
    return _one("T_strided_slice_with_axes", [((5, 3), F32)],
                lambda x: lambda i, j: x[i * const(-1, I64) + const(4, I64), j], (5, 3))


def leading_unit_broadcast() -> PrimFunc:
    """``broadcast_to`` (3, 4) -> (1, 3, 4): the same program as ``expand_dims(axis=0)`` (and
    a reshape); the reshape family's name is reported."""
    return _one("T_broadcast_to", [((3, 4), F32)], lambda x: lambda u, i, j: x[i, j], (1, 3, 4))


def gather_nd() -> PrimFunc:
    """``topi.gather_nd`` (indices transposed to (2, N)): ``x[idx[0, i], idx[1, i], j]``."""
    return _one("T_gather_nd", [((3, 4, 5), F32), ((2, 6), I64)],
                lambda x, idx: lambda i, j: x[idx[const(0, I64), i], idx[const(1, I64), i], j], (6, 5))


def dynamic_strided_slice() -> PrimFunc:
    """``relax.dynamic_strided_slice``: begin and strides are tensors read in the index."""
    return _one("T_dynamic_strided_slice", [((8, 3), F32), ((2,), I64), ((2,), I64)],
                lambda x, begin, st: lambda i, j: x[begin[const(0, I64)] + i * st[const(0, I64)], j], (3, 3))


def slice_scatter() -> PrimFunc:
    """``topi.slice_scatter`` along axis 0 (start 2, end 5, step 1): src inside, x outside."""
    def body(x, src):
        def f(i, j):
            inside = (i >= const(2, I64)) & (i < const(5, I64))
            return if_then_else(inside, src[i - const(2, I64), j], x[i, j])
        return f

    return _one("T_slice_scatter", [((8, 3), F32), ((3, 3), F32)], body, (8, 3))


def meshgrid() -> PrimFunc:
    """``topi.meshgrid`` of (3,) and (4,), indexing "ij": two outputs."""
    b = Builder()
    x, y = b.placeholder((3,), F32, "x"), b.placeholder((4,), F32, "x1")
    o1 = b.compute("T_meshgrid", (3, 4), lambda i, j: x[i], names=_ax(2))
    o2 = b.compute("T_meshgrid", (3, 4), lambda i, j: y[j], names=_ax(2))
    return b.build([x, y], [o1, o2])


def full_like() -> PrimFunc:
    """``relax.full_like``/``ones_like``: the input only gives the shape."""
    return _one("T_full_like", [((3, 4), F32)], lambda x: lambda i, j: const(1.0, F32), (3, 4))


def arange() -> PrimFunc:
    """``relax.arange(0, 6, 2)``: no input at all."""
    b = Builder()
    out = b.compute("T_arange", (3,), lambda i: Cast(dt.dtype(F32), i * const(2, I64)), names=["ax0"])
    return b.build([], [out])


def layout_transform() -> PrimFunc:
    """``relax.layout_transform`` NCHW -> NCHW4c."""
    b = Builder()
    x = b.placeholder((1, 8, 2, 2), F32, "x")
    return b.build([x], [lower_into(b, "layout_transform", [x], src_layout="NCHW", dst_layout="NCHW4c")])


# ------------------------------------------------------------------ reductions
def collapse_sum(shape, target) -> PrimFunc:
    """``topi.collapse_sum``: sum over the broadcast axes, target shape out (unit axes kept)."""
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    lead = len(shape) - len(target)
    red = [d for d in range(len(shape)) if d < lead or shape[d] != target[d - lead]]
    ks = {d: b.reduce_axis(shape[d], f"k{d}") for d in red}

    def body(*o):
        src = [ks[d].var if d in ks else o[d - lead] for d in range(len(shape))]
        return sum_(x[tuple(src)], list(ks.values()))

    return b.build([x], [b.compute("x_red", target, body, names=_ax(len(target)))])


def einsum(equation: str, shapes) -> PrimFunc:
    """``topi.einsum``: one block, the product of the operands summed over dropped labels."""
    lhs, out_labels = equation.split("->")
    subs = lhs.split(",")
    b = Builder()
    bufs = [b.placeholder(s, F32, f"x{k}" if k else "x") for k, s in enumerate(shapes)]
    extent = {c: e for sub, s in zip(subs, shapes) for c, e in zip(sub, s)}
    red = sorted(set("".join(subs)) - set(out_labels))
    ks = {c: b.reduce_axis(extent[c], c) for c in red}

    def body(*o):
        var = {**dict(zip(out_labels, o)), **{c: k.var for c, k in ks.items()}}
        term = None
        for buf, sub in zip(bufs, subs):
            load = buf[tuple(var[c] for c in sub)]
            term = load if term is None else term * load
        return sum_(term, list(ks.values())) if ks else term

    shape = [extent[c] for c in out_labels]
    return b.build(bufs, [b.compute("T_einsum", shape, body, names=_ax(len(shape)))])


def std() -> PrimFunc:
    """``relax.std``: ``sqrt(variance(x))`` in one PrimFunc."""
    b = Builder()
    x = b.placeholder((3, 4, 5), F32, "x")
    var = lower_into(b, "variance", [x], axis=[1, 2], keepdims=False)
    out = b.compute("compute", var.shape, lambda *i: Call(dt.dtype(F32), "sqrt", (var[i],)),
                    names=["i0", "i1"][:len(var.shape)])
    return b.build([x], [out])


def opaque_scan() -> PrimFunc:
    """``topi.cumsum`` (and sort/scatter): an extern block whose body is loops of stores."""
    x = Builder.placeholder((4, 5), F32, "x")
    out = Builder.placeholder((4, 5), F32, "out")
    i, k = Var("i", dt.int64), Var("k", dt.int64)
    first = BufferStore(out, x[i, const(0, I64)], (i, const(0, I64)))
    kk = k + const(1, I64)
    step = BufferStore(out, out[i, k] + x[i, kk], (i, kk))
    body = For(i, const(0, I64), const(4, I64), ForKind.SERIAL,
               seq(first, For(k, const(0, I64), const(4, I64), ForKind.SERIAL, step)))
    block = Block("cumsum", (), (), (), body)
    return prim_func([x, out], BlockRealize((), const(True, "bool"), block))


def _ops():
    """The cases of this module (nn composites are in :mod:`unknown_ops_nn`)."""
    return [
        Case("repeat(axis=1)", lambda: repeat(1), ((("repeat", {"repeats": 2, "axis": 1}),),)),
        Case("repeat(axis=2)", lambda: repeat(2), ((("repeat", {"repeats": 2, "axis": 2}),),)),
        Case("repeat(axis=None)", repeat_flat, ((("repeat", {"repeats": 2, "axis": None}),),)),
        Case("nn.pixel_shuffle", pixel_shuffle, ((("nn.pixel_shuffle", {"upscale_factor": 2}),),)),
        Case("one_hot", one_hot,
             ((("one_hot", {"depth": 4, "axis": -1, "on_value": 1.0, "off_value": 0.0}),),)),
        Case("tril(k=0)", lambda: trilu(False, 0), ((("tril", {"k": 0}),),)),
        Case("triu(k=1)", lambda: trilu(True, 1), ((("triu", {"k": 1}),),)),
        Case("split(2 sections)", lambda: split([4, 4]), ((("split", {"axis": 1, "indices_or_sections": 2}),),)),
        Case("split(indices)", lambda: split([1, 3, 4])),
        Case("gather_elements(axis=0)", lambda: gather_elements(0), ((("gather_elements", {"axis": 0}),),)),
        Case("gather_elements(axis=1)", lambda: gather_elements(1), ((("gather_elements", {"axis": 1}),),)),
        Case("nn.prelu(axis=1) (known)", lambda: prelu(1), ((("nn.prelu", {"axis": 1}),),)),
        Case("nn.prelu(axis=2) (known)", lambda: prelu(2), ((("nn.prelu", {"axis": 2}),),)),
        Case("take(2-d indices)", take_2d_indices, ((("take", {"axis": 0}),),)),
        Case("reverse_sequence", reverse_sequence, ((("reverse_sequence", {"seq_axis": 1, "batch_axis": 0}),),)),
        Case("permute_dims(axes=[0,1]) (plain copy) == broadcast_to", plain_copy,
             ((("broadcast_to", {"shape": [3, 4]}),), (("permute_dims", {"axes": [0, 1]}),))),
        Case("strided_slice(stride -1, whole axis)", reversing_slice),
        Case("broadcast_to((3,4)->(1,3,4)) == expand_dims", leading_unit_broadcast,
             ((("expand_dims", {"axis": [0]}),),)),
        Case("gather_nd", gather_nd),
        Case("dynamic_strided_slice", dynamic_strided_slice),
        Case("slice_scatter", slice_scatter),
        Case("meshgrid (two outputs)", meshgrid, ((("meshgrid", {"indexing": "ij"}),),)),
        Case("full_like", full_like),
        Case("arange", arange),
        Case("layout_transform(NCHW->NCHW4c)", layout_transform),
        Case("nn.pad(reflect)", lambda: pad_mode("reflect")),
        Case("nn.pad(replicate)", lambda: pad_mode("replicate")),
        Case("nn.pad(circular)", lambda: pad_mode("circular")),
        Case("nn.pad(circular) == tile", circular_pad_as_tile, ((("tile", {"repeats": [1, 2]}),),)),
        Case("collapse_sum_to((2,3,4)->(3,1))", lambda: collapse_sum((2, 3, 4), (3, 1))),
        Case("collapse_sum_to((2,3,4)->(1,4))", lambda: collapse_sum((2, 3, 4), (1, 4))),
        Case("collapse_sum_to((2,3,4)->(3,4)) == sum", lambda: collapse_sum((2, 3, 4), (3, 4)),
             ((("sum", {"axis": [0], "keepdims": False}),),)),
        Case("einsum(ij,ij->i)", lambda: einsum("ij,ij->i", [(3, 4), (3, 4)])),
        Case("einsum(ii->i)", lambda: einsum("ii->i", [(4, 4)])),
        Case("einsum(i,j->ij)", lambda: einsum("i,j->ij", [(3,), (4,)])),
        Case("einsum(ij,jk->ik) == matmul", lambda: einsum("ij,jk->ik", [(3, 4), (4, 5)]),
             ((("matmul", {}),),)),
        Case("std(axis=[1,2])", std, ((("std", {"axis": [1, 2], "keepdims": False}),),)),
        Case("cumsum (extern scan)", opaque_scan),
    ]


def cases() -> list:
    """Every case of the bench."""
    from unknown_ops_ew import ew_cases
    from unknown_ops_nn import nn_cases

    return _ops() + ew_cases() + nn_cases()

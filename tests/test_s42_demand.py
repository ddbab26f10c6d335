"""Blocks cut to what the outputs need (:mod:`opinfo.demand`): ``pad_einsum`` of a block
whose operand or result is an intermediate (a cache or rfactor buffer) leaves a pad
producer of a buffer nothing writes; its values reach no output."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import opinfo
import tir
from opinfo.demand import restrict_to_demand
from opinfo.normalize import as_lowered

from fixture_util import fixture_func


def _names(func) -> list:
    return [b.name for b in func.blocks()]


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_cache_write_pad_einsum_symbolic_abs():
    # TVM: cache_write, compute_at, pad_einsum of the cached block (a symbolic batch n)
    func = fixture_func("s42_pad_einsum_cache_abs")
    low = as_lowered(func)
    cut = restrict_to_demand(low)
    assert cut is not low
    # the pad producer of compute_local_pad (never written) is gone
    assert "compute_local_pad_pad" in _names(low) and "compute_local_pad_pad" not in _names(cut)
    for n in (1, 4, 7):
        x = np.random.default_rng(n).uniform(-1, 1, (n, 3)).astype("float32")
        np.testing.assert_allclose(tir.run(cut, x), np.abs(x))
        np.testing.assert_allclose(tir.run(func, x), np.abs(x))
    assert _ops(func) == [("abs", {})]


def test_rfactor_cache_pad_einsum_mean():
    # rfactor, cache_write of the reduction, compute_at with overlapping rows recomputed,
    # loop_partition, pad_einsum: two garbage pad producers
    func = fixture_func("s42_pad_einsum_rfactor_mean")
    x = np.random.default_rng(0).uniform(-1, 1, (7, 6)).astype("float32")
    cut = restrict_to_demand(as_lowered(func))
    np.testing.assert_allclose(tir.run(cut, x), x.mean(axis=1, keepdims=True), rtol=1e-6)
    assert not {"x_red_pad", "x_red_shared_pad_pad"} & set(_names(cut))
    assert _ops(func) == [("mean", {"axis": (1,), "keepdims": True})]


def test_garbage_reaching_an_output_is_kept_and_refused():
    # TVM's schedule copies a cache nothing writes (x_shared_pad) into what the output
    # reads: the copy is needed, so it stays, and the function is refused
    func = fixture_func("s42_pad_einsum_cache_gelu_broken")
    cut = restrict_to_demand(as_lowered(func))
    assert "x_shared_pad" in _names(cut)
    info = opinfo.analyze(func)
    assert info.ops == () and "storage is read before" in (info.refused or "")


def test_functions_without_unwritten_reads_are_not_walked():
    func = tir.topi.lower("nn.relu", [((4, 5), "float32")])
    low = as_lowered(func)
    assert restrict_to_demand(low) is low


_TEMPLATE = """
@T.prim_func
def f(x: T.Buffer(({r}, {c}), "float32"), y: T.Buffer(({r}, {c}), "float32")):
    y_local_pad = T.alloc_buffer(({r}, {cp}), scope="local")
    x_pad = T.alloc_buffer(({r}, {cp}))
    y_local_pad_pad = T.alloc_buffer(({rp}, {cp}), scope="local")
    y_pad = T.alloc_buffer(({rp}, {cp}))
    for i0, i1 in T.grid({r}, {cp}):
        with T.block("x_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(x[v0, v1])
            T.writes(x_pad[v0, v1])
            x_pad[v0, v1] = T.if_then_else(v1 < {c}, x[v0, v1], T.float32(0))
    for i0, i1 in T.grid({rp}, {cp}):
        with T.block("y_local_pad_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(y_local_pad[v0, v1])
            T.writes(y_local_pad_pad[v0, v1])
            y_local_pad_pad[v0, v1] = T.if_then_else(v0 < {r} and v1 < {cp}, y_local_pad[v0, v1], T.float32(0))
    for i1_o, i0, i1_i in T.grid({co}, {r}, {ci}):
        with T.block("y"):
            v0 = T.axis.spatial({r}, i0)
            v1 = T.axis.spatial({cp}, i1_o * {ci} + i1_i)
            T.where(i1_o * {ci} + i1_i < {c})
            T.reads(x_pad[v0, v1])
            T.writes(y_local_pad_pad[v0, v1])
            y_local_pad_pad[v0, v1] = {expr}
    for i0, i1 in T.grid({rp}, {cp}):
        with T.block("y_local"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.where(i1 < {c})
            T.reads(y_local_pad_pad[v0, v1])
            T.writes(y_pad[v0, v1])
            y_pad[v0, v1] = y_local_pad_pad[v0, v1]
    for i0, i1 in T.grid({r}, {c}):
        with T.block("y_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(y_pad[v0, v1])
            T.writes(y[v0, v1])
            y[v0, v1] = y_pad[v0, v1]
"""

_UNARY = {"exp": ("T.exp(x_pad[v0, v1])", np.exp), "abs": ("T.fabs(x_pad[v0, v1])", np.abs),
          "sigmoid": ("T.sigmoid(x_pad[v0, v1])", lambda x: 1 / (1 + np.exp(-x)))}


@settings(max_examples=15, deadline=None)
@given(r=st.integers(1, 6), c=st.integers(1, 6), extra_r=st.integers(0, 3), extra_c=st.integers(0, 4),
       ci=st.integers(1, 4), op=st.sampled_from(sorted(_UNARY)))
def test_garbage_pad_producer_property(r, c, extra_r, extra_c, ci, op):
    # any padding, any split of the padded axis: the cut function computes what the
    # function does and reads as the op
    cp = c + extra_c
    co = -(-cp // ci)
    text = _TEMPLATE.format(r=r, c=c, rp=r + extra_r, cp=cp, co=co, ci=ci, expr=_UNARY[op][0])
    func = tir.parse(text)
    low = as_lowered(func)
    cut = restrict_to_demand(low)
    assert cut is not low and "y_local_pad_pad" in _names(low)
    x = np.random.default_rng(r * 10 + c).uniform(-1, 1, (r, c)).astype("float32")
    want = _UNARY[op][1](x)
    np.testing.assert_allclose(tir.run(cut, x), want, rtol=1e-6)
    np.testing.assert_allclose(tir.run(func, x), want, rtol=1e-6)
    assert _ops(func) == [(op, {})]


def test_a_reader_of_the_padding_keeps_it():
    # the output reads a padded column the garbage producer fills with 0 (its guard is
    # false there): those iterations are needed, the function is not changed into another
    text = _TEMPLATE.format(r=3, c=2, rp=3, cp=4, co=4, ci=1, expr="T.exp(x_pad[v0, v1])")
    text = text.replace('y: T.Buffer((3, 2), "float32")', 'y: T.Buffer((3, 4), "float32")')
    text = text.replace("for i0, i1 in T.grid(3, 2):\n        with T.block(\"y_pad\")",
                        "for i0, i1 in T.grid(3, 4):\n        with T.block(\"y_pad\")")
    text = text.replace("            T.where(i1 < 2)\n", "")
    func = tir.parse(text)
    cut = restrict_to_demand(as_lowered(func))
    x = np.random.default_rng(1).uniform(-1, 1, (3, 2)).astype("float32")
    np.testing.assert_allclose(tir.run(cut, x), tir.run(func, x))
    assert "y_local_pad_pad" in _names(cut)
    assert opinfo.analyze(func).ops == ()


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_uncut_functions_compute_the_same(value):
    # the garbage producer's value is irrelevant: it is dead either way
    text = _TEMPLATE.format(r=2, c=3, rp=4, cp=8, co=2, ci=4, expr="T.exp(x_pad[v0, v1])")
    text = text.replace("y_local_pad[v0, v1], T.float32(0)", f"y_local_pad[v0, v1], T.float32({value})")
    func = tir.parse(text)
    x = np.random.default_rng(2).uniform(-1, 1, (2, 3)).astype("float32")
    np.testing.assert_allclose(tir.run(restrict_to_demand(as_lowered(func)), x), np.exp(x), rtol=1e-6)


def test_pad_artefacts_are_pad_einsum_buffers_only():
    from opinfo.demand import _pad_artefacts

    text = _TEMPLATE.format(r=2, c=3, rp=4, cp=8, co=2, ci=4, expr="T.exp(x_pad[v0, v1])")
    func = tir.parse(text)
    names = {b.name for blk in [func.root_block, *func.blocks()] for b in blk.alloc_buffers
             if id(b) in _pad_artefacts(func)}
    assert names == {"x_pad", "y_local_pad_pad", "y_pad"}  # y_local_pad: no y_local buffer
    # an op's data_pad (conv_transpose pads its dilated input) beside a parameter named data
    op = tir.parse("""
@T.prim_func
def f(data: T.Buffer((4,), "float32"), out: T.Buffer((6,), "float32")):
    data_dilate = T.alloc_buffer((4,))
    data_pad = T.alloc_buffer((6,))
    for i in range(4):
        with T.block("data_dilate"):
            v = T.axis.spatial(4, i)
            T.reads(data[v])
            T.writes(data_dilate[v])
            data_dilate[v] = data[v]
    for i in range(6):
        with T.block("data_pad"):
            v = T.axis.spatial(6, i)
            T.reads(data_dilate[v - 1])
            T.writes(data_pad[v])
            data_pad[v] = T.if_then_else(1 <= v and v < 5, data_dilate[v - 1], T.float32(0))
    for i in range(6):
        with T.block("out"):
            v = T.axis.spatial(6, i)
            T.reads(data_pad[v])
            T.writes(out[v])
            out[v] = data_pad[v]
""")
    assert _pad_artefacts(op) == set()


def test_dlight_nest_split_once_its_reduction_init_is_merged():
    # dlight's decompose_reduction leaves the init and the update under the thread loops
    # beside the shared-memory copies: the nest is split once the init is merged back, and
    # then (session 46, :mod:`opinfo.reindex_pad`) the reindexed pads, the padded reduction
    # axis (K 8 -> 16, zeros) and the crop are undone: one matmul block is left
    from opinfo.normalize import normalize
    from opinfo.rewrite import nest_of

    func = fixture_func("s42_dlight_matmul_f16")
    (top,) = [s for s in [normalize(func).root_block.body]]
    assert nest_of(top)[1].block.name == "matmul_update"
    (op,) = opinfo.analyze(func).ops
    assert op.name == "matmul"
    x = np.random.default_rng(0).uniform(-1, 1, (7, 8)).astype("float16")
    y = np.random.default_rng(1).uniform(-1, 1, (8, 7)).astype("float16")
    np.testing.assert_allclose(tir.run(normalize(func), x, y), x.astype("float32") @ y.astype("float32"),
                               rtol=1e-5, atol=1e-5)



def test_decision_of_a_block_without_spatial_variables():
    # a 0-d reduction only some of whose iterations are needed is kept whole ("keep"), not
    # a box: the rest of the function can still be cut
    from opinfo.demand import _decision

    func = tir.parse("""
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((), "float32")):
    for k in range(4):
        with T.block("y"):
            vk = T.axis.reduce(4, k)
            T.reads(x[vk])
            T.writes(y[()])
            with T.init():
                y[()] = T.float32(0)
            y[()] = y[()] + x[vk]
""")
    (realize,) = [r for r in _realizes(func)]
    values = np.arange(4).reshape(4, 1)
    decision, keep = _decision(realize, values, np.array([False, True, True, True]), {})
    assert decision == "keep" and keep.all()
    decision, keep = _decision(realize, values, np.ones(4, dtype=bool), {})
    assert decision == ("box", {}, False) and keep.all()
    assert _decision(realize, values, np.zeros(4, dtype=bool), {})[0] == "dead"


def _realizes(func):
    from opinfo.coverage import block_realizes

    return [r for r, _ in block_realizes(func.body) if r.block is not func.root_block]

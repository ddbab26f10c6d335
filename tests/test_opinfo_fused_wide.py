"""Fused kernels beyond conv/matmul + elementwise chains (TVM 0.27 LegalizeOps +
FuseOps + FuseTIR output in fixtures/h45_fused_*.py): casts as ops of their own, an
elementwise tree that is a no-op on samples, a slice after an elementwise op, batch_norm
with its dropped moving-stat outputs, concat of an intermediate, and a reversal whose
compute tag is a strided_slice's."""
from __future__ import annotations

import numpy as np

import opinfo
import tir

from fixture_util import fixture_func


def _ops(name):
    return opinfo.analyze(fixture_func(name)).ops


def _names(name):
    return [op.name for op in _ops(name)]


def test_cast_to_float16_and_back_is_two_astype_ops():
    ops = _ops("h45_fused_relu_cast_f16_f32")
    assert [(op.name, dict(op.attrs)) for op in ops] == [
        ("nn.relu", {}), ("astype", {"dtype": "float16"}), ("astype", {"dtype": "float32"})]


def test_cast_to_int32_is_astype_not_trunc():
    ops = _ops("h45_fused_add_cast_int32")
    assert [op.name for op in ops] == ["add", "astype"]
    assert dict(ops[1].attrs) == {"dtype": "int32"}
    assert ops[1].operands[0].buffer == ops[0].output.buffer


def test_where_that_keeps_every_sample_is_still_three_ops():
    # where(gelu > -1, gelu, 0.1 * gelu) equals gelu on any input: the greater, multiply
    # and where blocks after gelu's are ops of their own
    assert _names("h45_fused_exp_gelu_where") == ["exp", "nn.gelu", "greater", "multiply", "where"]


def test_slice_after_an_elementwise_op_is_not_swallowed():
    # its axes 0 and 1 are read whole (listed or not: the same loops): named with the
    # importers' convention, and on its own the whole kernel abstains
    assert _ops("h45_fused_power_slice") == ()
    ops = opinfo.analyze(fixture_func("h45_fused_power_slice"), conventions=True).ops
    assert [op.name for op in ops] == ["power", "strided_slice"]
    assert {k: list(v) for k, v in dict(ops[1].attrs).items()} == {"axes": [2], "begin": [0], "end": [1], "strides": [1]}
    assert ops[1].operands[0].buffer == ops[0].output.buffer


def test_batch_norm_in_a_fused_kernel_with_its_dead_moving_stats():
    ops = _ops("h45_fused_batch_norm_relu")
    assert [op.name for op in ops] == ["nn.batch_norm", "nn.relu"]
    assert dict(ops[0].attrs)["epsilon"] == 1e-3 and dict(ops[0].attrs)["axis"] == 1


def test_concat_of_a_parameter_and_an_intermediate_keeps_the_chain_order():
    func = fixture_func("h45_fused_sqrt_concat")
    sqrt, cat = opinfo.analyze(func).ops
    assert (sqrt.name, cat.name, dict(cat.attrs)) == ("sqrt", "concat", {"axis": 1})
    assert [o.buffer for o in cat.operands] == ["x1", sqrt.output.buffer]  # concat([x1, sqrt(x)])
    rng = np.random.default_rng(0)
    x, x1 = rng.uniform(0, 2, (2, 3)).astype("float32"), rng.uniform(-1, 1, (2, 1)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, x1), np.concatenate([x1, np.sqrt(x)], 1), rtol=1e-6)


def test_whole_axis_reversal_in_strided_slice_blocks_abstains():
    # strided_slice(begin 3, end -5, stride -1) is flip's loop; its tag says strided_slice,
    # whose end the loops do not show
    assert _ops("h45_fused_reverse_slice_relu") == ()


def test_reversing_slice_abstains():
    # x[:, 4:1:-1]: TVM writes x[v0, 4 - v1]; x[:, -2:-5:-1] prints the same loops, and a
    # reversal's begin is as often written negative (ONNX starts=-1): neither is a fact.
    assert _ops("h45_fused_neg_slice_relu") == ()


def test_reversing_slice_down_to_the_first_element_abstains():
    # x[:, 3::-1] (end -6): any end below -5 prints the same loops
    assert _ops("h45_fused_neg_slice_to_start_relu") == ()

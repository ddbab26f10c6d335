"""ONNX Sum of two tensors as TVM imports it (broadcast_to, broadcast_to, stack, sum over the
stacked axis), fused by FuseOps + FuseTIR into one kernel: the stack reads the two copies,
which are intermediates, and FuseTIR names the second copy's block ``T_broadcast_to1``. The
fixture is that kernel from TVM 0.27's fused ResNet-50 (ONNX zoo), at a smaller size."""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.copy_tags import _tag
from tests.fixture_util import FIXTURES

SHAPE = "T.int64(1), T.int64(256), T.int64(56), T.int64(56)"
SMALL = "T.int64(1), T.int64(4), T.int64(3), T.int64(5)"


def _func():
    text = (FIXTURES / "s23_fused_onnx_sum.py").read_text().replace(SHAPE, SMALL)
    (_, func), = tir.parse(text).prim_funcs()
    return func


def test_named_in_dataflow_order():
    ops = opinfo.analyze(_func()).ops
    assert [op.name for op in ops] == ["broadcast_to", "broadcast_to", "stack", "sum"]
    assert list(ops[0].attrs["shape"]) == [1, 4, 3, 5] and ops[2].attrs["axis"] == 0
    assert list(ops[3].attrs["axis"]) == [0] and ops[3].attrs["keepdims"] is False


def test_computes_the_sum():
    rng = np.random.default_rng(2)
    x, y = (rng.normal(size=(1, 4, 3, 5)).astype("float32") for _ in range(2))
    np.testing.assert_allclose(tir.run(_func(), x, y), x + y, rtol=1e-6)


def test_fusetir_digits_are_read_as_the_tag():
    assert _tag("T_broadcast_to1") == "T_broadcast_to"
    assert _tag("T_broadcast_to") == "T_broadcast_to"
    assert _tag("T_reshape_2") == "T_reshape"

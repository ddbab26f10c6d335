"""Binary ops one of whose operands Relax's legalization folded into a scalar constant
(``x * 0.0001``, ``pow(x, 0.75)``: the pieces of an ONNX LRN), alone and inside a fused
kernel after a convolution; trees that are not one such op abstain."""
import numpy as np
import pytest

import tir
from tir.builder import Builder
from tir.expr import Call, Max
from tir.topi import lower_into

from opinfo.api import analyze
from unknown_ops_ew import c, unary

F32 = "float32"


FORMS = [
    ("multiply", lambda x: x * c(0.0001), "lhs", lambda a: a * 0.0001),
    ("add", lambda x: x + c(2.0), "lhs", lambda a: a + 2.0),
    ("power", lambda x: Call(x.dtype, "pow", (x, c(0.75))), "lhs", lambda a: np.abs(a) ** 0.75),
    ("subtract", lambda x: c(1.0) - x, "rhs", lambda a: 1.0 - a),
    ("divide", lambda x: c(6.0) / x, "rhs", lambda a: 6.0 / a),
    ("maximum", lambda x: Max(x, c(0.5)), "lhs", lambda a: np.maximum(a, 0.5)),
]


@pytest.mark.parametrize("name,fn,role,ref", FORMS, ids=[f[0] for f in FORMS])
def test_scalar_operand(name, fn, role, ref):
    func = unary(fn)
    info = analyze(func)
    assert info.kind == "elemwise"
    assert [(o.name, dict(o.attrs)) for o in info.ops] == [(name, {})]
    assert [(o.role, o.buffer, o.param) for o in info.ops[0].operands] == [(role, "x", 0)]
    data = np.abs(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(F32)) + 0.5
    if name == "power":
        data = np.abs(data)
    got = tir.run(func, data)
    np.testing.assert_allclose(got, ref(data), rtol=1e-5)


def test_square_times_constant_abstains():
    """Two ops in one block (clip with an infinite bound and ``x * 0.5 + 1`` are cases of the
    unknown-ops bench)."""
    assert analyze(unary(lambda x: x * x * c(2.0))).ops == ()


@pytest.mark.parametrize("op,fn", [("multiply", lambda v: v * c(0.5)), ("add", lambda v: v + c(1.0))])
def test_fused_conv_scalar_relu(op, fn):
    """conv2d -> multiply(0.5) -> relu as FuseOps makes it: the scalar step is its own op, and
    the convolution's own constants (the pad value) are not taken for its operand."""
    b = Builder()
    x = b.placeholder((1, 4, 8, 8), F32, "x")
    w = b.placeholder((8, 4, 3, 3), F32, "w")
    y = lower_into(b, "nn.conv2d", [x, w], strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1,
                   data_layout="NCHW", kernel_layout="OIHW")
    m = b.compute(f"T_{op}", (1, 8, 8, 8), lambda *i: fn(y[i]), names=["ax0", "ax1", "ax2", "ax3"])
    out = lower_into(b, "nn.relu", [m])
    info = analyze(b.build([x, w], [out]))
    assert info.kind == "out_ewise_fusable"
    assert [o.name for o in info.ops] == ["nn.conv2d", op, "nn.relu"]
    assert info.ops[0].to_json()["attrs"]["padding"] == [1, 1, 1, 1]

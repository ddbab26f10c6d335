"""A binary op whose other operand Relax's legalization folded into the loops keeps it in
``OpInfo.constants`` (``power(x, R.const(0.75))`` is ``T.pow(x, 0.75)``), and the ONNX Runtime
backend offloads it with that scalar as an initializer (AlexNet's local response norm)."""
import numpy as np
import pytest

import opinfo
import tir

HEADER = "# from tvm.script import tirx as T\n\n"


def _func(tag: str, value: str):
    return tir.parse(HEADER + f'''@T.prim_func
def f(x: T.Buffer((2, 8), "float32"), y: T.Buffer((2, 8), "float32")):
    for i, j in T.grid(2, 8):
        with T.sblock("{tag}"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = {value}
''')


@pytest.mark.parametrize("tag, value, name, constants", [
    ("T_power", "T.pow(x[vi, vj], T.float32(0.75))", "power", (("rhs", 0.75),)),
    ("T_multiply", "x[vi, vj] * T.float32(0.5)", "multiply", (("rhs", 0.5),)),
    # TVM folds add(x, R.const(-1)) to x - 1 in a T_add block: the constant is -1
    ("T_add", "x[vi, vj] - T.float32(1.0)", "add", (("rhs", -1.0),)),
    ("T_divide", "T.float32(2.0) / x[vi, vj]", "divide", (("lhs", 2.0),)),
    ("T_maximum", "T.max(x[vi, vj], T.float32(-0.25))", "maximum", (("rhs", -0.25),)),
])
def test_the_folded_scalar_is_recovered(tag, value, name, constants):
    (op,) = opinfo.analyze(_func(tag, value)).ops
    assert op.name == name and op.constants == constants
    assert op.to_json()["constants"] == [{"role": r, "value": v} for r, v in constants]


def test_ops_of_two_tensors_have_no_constants():
    f = tir.topi.lower("add", [((2, 8), "float32"), ((2, 8), "float32")])
    (op,) = opinfo.analyze(f).ops
    assert op.constants == () and "constants" not in op.to_json()


def test_onnx_runtime_runs_a_binary_op_with_a_folded_scalar():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from byoc.onnx_build import build_model
    from byoc.region import OpStep, Region
    from opinfo.info import OpInfo
    from tir.dtype import float32
    from tir.relax import TensorType

    x = np.random.default_rng(0).uniform(0.5, 2.0, (2, 8)).astype("float32")
    for op, want in [(OpInfo("power", {}, constants=(("rhs", 0.75),)), x ** 0.75),
                     (OpInfo("divide", {}, constants=(("lhs", 2.0),)), 2.0 / x)]:
        types = {n: TensorType((2, 8), float32) for n in ("x", "y")}
        region = Region("r", ("x",), ("y",), types, {"x": (2, 8), "y": (2, 8)}, {}, {}, (),
                        (OpStep(op, ("x",), "y"),))
        sess = ort.InferenceSession(build_model(region).SerializeToString(), providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-5)

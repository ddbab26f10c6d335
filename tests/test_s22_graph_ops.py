"""Relax ops TVM 0.27's LegalizeOps leaves in ``main`` (cumsum, cumprod, sort, argsort, topk)
run by the graph executor with numpy. The fixture holds TVM's modules and its VM's outputs
(llvm build) on float inputs and on integer inputs with many ties: both engines give them
exactly, indices included (stable sorts, descending too)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import tir
from tests.fixture_util import FIXTURES
from tir.interp_data import InterpError

MEASURED = json.loads((FIXTURES / "s22_graph_ops_tvm.json").read_text())
ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(MEASURED))
def test_graph_level_op_gives_tvms_numbers(name, engine):
    case = MEASURED[name]
    x = np.array(case["x"], dtype=case["x_dtype"])
    got = tir.run(tir.parse(case["text"]), x, engine=engine)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(case["tvm"])
    for g, want, dtype in zip(got, case["tvm"], case["tvm_dtypes"]):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g, np.array(want, dtype=dtype))


def test_a_bad_axis_names_the_binding():
    text = MEASURED["cumsum"]["text"].replace("axis=1", "axis=4")
    with pytest.raises(InterpError, match="R.cumsum: axis 4 is not an axis of a 2-d tensor"):
        tir.run(tir.parse(text), np.zeros((3, 5), dtype="float32"))


CONST_MODULE = '''
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(x: T.Buffer((T.int64(4),), "float32"), c: T.Buffer((), "float32"), o: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("o"):
                v = T.axis.spatial(T.int64(4), i)
                o[v] = x[v] + c[()]

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, R.const(1.5, "float32")), out_ty=R.Tensor((4,), dtype="float32"))
            lv1 = R.cumsum(lv, axis=0, dtype=None, exclusive=False)
            R.output(lv1)
        return lv1
'''


@pytest.mark.parametrize("engine", ENGINES)
def test_inline_constant_argument_and_a_graph_level_scan_run(engine):
    """``R.const(1.5, "float32")`` written as a call's argument (as TVM prints a scalar the
    importer made) is a 0-d tensor; the cumsum after the call runs in the graph."""
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(tir.run(tir.parse(CONST_MODULE), x, engine=engine), np.cumsum(x + 1.5))

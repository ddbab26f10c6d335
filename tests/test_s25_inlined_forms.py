"""An elementwise op that changes nothing on the values of the op before it (relu after exp,
floor after floor), computed in the same block once ``compute_inline`` or dlight inlined the
first op's block, must not be named as the first op alone: the block performs more operations
than that op's TVM form (opinfo.recognize.ew_forms.form_size_ok)."""
from __future__ import annotations

import pytest

import opinfo
import tir

TEMPLATE = '''
# from tvm.script import tirx as T

@T.prim_func(private=True, s_tir=True)
def main(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), out: T.Buffer((T.int64(4), T.int64(3)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i0, i1 in T.grid(T.int64(4), T.int64(3)):
        with T.sblock("compute"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(x[v0, v1])
            T.writes(out[v0, v1])
            out[v0, v1] = EXPR
'''
X = "x[v0, v1]"


def _ops(expr: str) -> list:
    func = tir.parse(TEMPLATE.replace("EXPR", expr))
    return [op.name for op in opinfo.analyze(func).ops]


@pytest.mark.parametrize("expr, name", [
    (f"T.exp({X})", "exp"),
    (f"T.max({X}, T.float32(0.0))", "nn.relu"),
    (f"T.floor({X})", "floor"),
    (f"T.fabs({X})", "abs"),
    (f"T.sigmoid({X})", "sigmoid"),
])
def test_one_op_forms_are_named(expr, name):
    assert _ops(expr) == [name]


@pytest.mark.parametrize("expr", [
    f"T.max(T.exp({X}), T.float32(0.0))",  # relu(exp(x)) has exp's values
    f"T.max(T.sigmoid({X}), T.float32(0.0))",
    f"T.fabs(T.exp({X}))",
    f"T.floor(T.floor({X}))",
    f"T.ceil(T.ceil({X}))",
    f"T.fabs(T.fabs({X}))",
    f"T.max(T.max({X}, T.float32(0.0)), T.float32(0.0))",
    f"T.sqrt(T.fabs({X}) * T.fabs({X}))",  # |x| by its values, sqrt and two abs by its form
])
def test_inlined_chains_with_one_ops_values_abstain(expr):
    assert _ops(expr) == []

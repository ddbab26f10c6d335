"""More forms of TVM 0.27 output: symbolic scalars passed to ``call_tir`` (a PrimValue bound
to the PrimFunc's scalar parameter, buffer extents quoted because they use it) and
``T.alloc_local`` with ``while`` loops (TVM's bucketize). Each is read, printed back, run by
both engines and compared with numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tir
from tir import relax as rx
from tir.errors import ParseError
from tir.verifier import verify

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n# from tvm.script import relax as R\n\n"


def _round_trip(text: str):
    """Parse, print, parse again: structurally equal, and the printed text is a fixed point."""
    node = tir.parse(text)
    printed = tir.to_script(node)
    again = tir.parse(printed)
    tir.assert_structural_equal(node, again)
    assert tir.to_script(again) == printed
    return node, printed


# ---------------------------------------------------------------------------- symbolic scalars

# TVM's FuseOps/FuseTIR output (gen/v_fused/fused_reshape_exp_12_251.py): the exp kernel
# takes ``n`` as a scalar; ``lv``'s extent is quoted because ``n`` is declared after it.
RESHAPE_EXP = (Path(__file__).parent / "fixtures" / "reshape_symbolic_inner.py").read_text()


def test_quoted_extent_uses_the_scalar_parameter_declared_after_it():
    mod = tir.parse(RESHAPE_EXP)
    f = mod["tir_exp"]
    n = f.params[1]
    assert n not in f.buffer_map and str(n.dtype) == "int64"
    assert all(buf.shape[1].a is n for buf in f.buffers)
    assert mod["reshape"].buffers[0].shape[0] is not n  # the module-wide size variable


def test_symbolic_scalar_argument_is_a_prim_value_and_prints_back_bare():
    mod, printed = _round_trip(RESHAPE_EXP)
    verify(mod)
    call = mod["main"].bindings[1].value
    assert isinstance(call.args[1], rx.PrimValue)
    assert call.args[1].value is mod["main"].params[0].type.shape[0]
    assert "(lv, n)" in printed


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_symbolic_scalar_argument_runs(engine):
    x = np.random.default_rng(0).standard_normal((4, 3, 6, 5)).astype("float32")
    out = tir.run(tir.parse(RESHAPE_EXP), x, engine=engine)
    np.testing.assert_allclose(out, np.exp(x.reshape(5, -1)), rtol=1e-6)


# A local size variable (``"n"`` in the signature), an expression of it and a constant, as
# bare scalars and as ``R.prim_value``.
SCALARS = HEADER + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(x: T.Buffer((T.int64(2), "m"), "float32"), m: T.int64, k: T.int64, c: T.int32, out: T.Buffer((T.int64(2), m), "float32")):
        for i, j in T.grid(T.int64(2), m):
            with T.sblock("fill"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = x[vi, vj] + T.Cast("float32", k) + T.Cast("float32", c)

    @R.function
    def main(x: R.Tensor((2, "n"), dtype="float32")) -> R.Tensor((2, "n"), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fill, (x, n, R.prim_value(n * 10 + 1), T.int32(3)), out_ty=R.Tensor((2, n), dtype="float32"))
            R.output(gv)
        return gv
'''


def test_prim_value_forms_read_print_and_run():
    mod = tir.parse(SCALARS)
    verify(mod)
    args = mod["main"].bindings[0].value.args
    assert [type(a) for a in args] == [rx.RVar, rx.PrimValue, rx.PrimValue, rx.PrimValue]
    assert str(args[3].value.dtype) == "int32"
    again, printed = _round_trip(tir.to_script(mod))
    assert "n * 10 + 1, T.int32(3))" in printed
    x = np.ones((2, 7), "float32")
    for engine in ("interp", "c"):
        np.testing.assert_array_equal(tir.run(again, x, engine=engine), x + 71 + 3)


def test_prim_value_in_a_binding_prints_as_r_prim_value():
    text = HEADER + '''@R.function
def main(x: R.Tensor(("n",), dtype="float32")):
    k = R.prim_value(T.int64(4))
    return x
'''
    func, printed = _round_trip(text)
    assert "k = R.prim_value(4)" in printed
    assert isinstance(func.bindings[0].value, rx.PrimValue)


def test_the_module_alias_is_not_a_graph_level_value():
    text = RESHAPE_EXP.replace("(lv, n)", "(lv, cls)")
    with pytest.raises(ParseError, match="'cls' is not a graph-level value"):
        tir.parse(text)


# ---------------------------------------------------------------------------- T.alloc_local, while

# TVM's bucketize (gen/ops_new/bucketize_71_1.py, tir dialect, right=False): a binary search
# per element in two one-element local buffers.
BUCKETIZE = '''# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

elem_offset = TypeVar("elem_offset")
elem_offset_1 = TypeVar("elem_offset_1")
elem_offset_2 = TypeVar("elem_offset_2")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def searchsorted(y: T.Buffer((T.int64(7),), "float32", elem_offset=elem_offset_2), x: T.Buffer((n,), "float32", elem_offset=elem_offset_1), searchsorted: T.Buffer((n,), "int64", elem_offset=elem_offset)):
        T.func_attr({"tir.noalias": True})
        with T.block("searchsorted"):
            T.reads()
            T.writes()
            for v in T.parallel(n):
                buffer = T.alloc_local((T.int64(1),), "int64")
                buffer_1 = T.alloc_local((T.int64(1),), "int64")
                buffer[T.int64(0)] = T.int64(0)
                buffer_1[T.int64(0)] = T.int64(7)
                while buffer[T.int64(0)] < buffer_1[T.int64(0)]:
                    if y[buffer[T.int64(0)] + (buffer_1[T.int64(0)] - buffer[T.int64(0)] >> T.int64(1))] < x[v]:
                        buffer[T.int64(0)] = buffer[T.int64(0)] + (buffer_1[T.int64(0)] - buffer[T.int64(0)] >> T.int64(1)) + T.int64(1)
                    else:
                        buffer_1[T.int64(0)] = buffer[T.int64(0)] + (buffer_1[T.int64(0)] - buffer[T.int64(0)] >> T.int64(1))
                searchsorted[v] = buffer[T.int64(0)]

    @R.function
    def main(x: R.Tensor((n,), dtype="float32"), y: R.Tensor((7,), dtype="float32")) -> R.Tensor((n,), dtype="int64"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.searchsorted, (y, x), out_ty=R.Tensor((n,), dtype="int64"))
            gv: R.Tensor((n,), dtype="int64") = lv
            R.output(gv)
        return gv
'''


def _lines(text: str) -> list:
    return [line for line in text.strip().splitlines() if not line.strip().startswith("#") and line.strip()]


def test_alloc_local_is_a_local_buffer_over_the_rest_of_its_suite():
    mod, printed = _round_trip(BUCKETIZE)
    verify(mod)
    same_dialect = tir.to_script(mod, dialect="tir")
    assert _lines(same_dialect)[4:] == _lines(BUCKETIZE)[4:]  # the TypeVars come in first-use order
    loop = mod["searchsorted"].body.block.body.block.body
    outer = loop.body
    assert isinstance(outer, tir.AllocateBuffer) and outer.buffer.scope == "local"
    assert isinstance(outer.body, tir.AllocateBuffer)
    assert isinstance(outer.body.body.seq[2], tir.While)


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_bucketize_runs_like_numpy_searchsorted(engine):
    boundaries = np.arange(-3, 4).astype("float32")
    x = np.array([-5, -3, -2.5, 0, 0.5, 3, 9, 1], "float32")
    out = tir.run(tir.parse(BUCKETIZE), x, boundaries, engine=engine)
    np.testing.assert_array_equal(out, np.searchsorted(boundaries, x, side="left"))


def test_local_buffer_of_constant_shape_is_a_c_array():
    from tir.codegen_c import emit_c

    source = emit_c(tir.parse(BUCKETIZE)["searchsorted"])
    assert "int64_t buffer[1] = {0};" in source and "while (" in source


SCOPED = HEADER + '''@T.prim_func
def f(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.decl_buffer((1,), "float32", scope="local") as t:
            t[0] = a[i] * T.float32(2)
            b[i] = t[0]
        b[i] = b[i] + T.float32(1)
'''


def test_local_buffer_followed_by_statements_keeps_its_scope():
    func, printed = _round_trip(SCOPED)
    assert 'with T.decl_buffer((T.int64(1),), "float32", scope="local") as t:' in printed
    a = np.arange(4, dtype="float32")
    for engine in ("interp", "c"):
        np.testing.assert_array_equal(tir.run(func, a, engine=engine), 2 * a + 1)


@pytest.mark.parametrize("source, fragment", [
    ('    t = T.alloc_local((1,), "float32", scope="shared")\n    a[0] = t[0]\n', "takes no scope"),
    ("    while a[0] < T.float32(1):\n        a[0] = a[0] + T.float32(1)\n    else:\n        a[0] = T.float32(0)\n",
     "cannot have an else"),
    ("    while a[0] < T.float32(1):\n        a[0] = a[0] + T.float32(1)\n    else:\n        a[0] = T.float32(0)\n",
     "10:9"),
])
def test_bad_local_buffers_and_while_loops_are_refused_with_a_position(source, fragment):
    text = HEADER + '@T.prim_func\ndef f(a: T.Buffer((4,), "float32")):\n' + source
    with pytest.raises(ParseError) as err:
        tir.parse(text)
    assert fragment in str(err.value)

"""Forms TVM 0.27 prints that the reader once refused: bitwise operators, ``T.Div``, Relax ops
left unlowered (``R.cumsum``...), ``R.tuple()``, buffers in block attributes, ``T.attr`` and
dimensions written as string expressions. Each is read, printed back as TVM prints it, and
run where it can be."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from tir import relax as rx
from tir import stmt as S
from tir.expr import Call, Div
from tir.functor import post_order_visit
from tir.interp_data import InterpError
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


def _nodes(node, cls) -> list:
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def _body_lines(text: str) -> list:
    return [line for line in text.strip().splitlines() if not line.startswith("#") and line.strip()]


# ---------------------------------------------------------------------------- bitwise operators

BITWISE = HEADER + '''@T.prim_func(s_tir=True)
def bits(x: T.Buffer((T.int64(6),), "int32"), y: T.Buffer((T.int64(6),), "int32"), out: T.Buffer((T.int64(6), T.int64(6)), "int32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0 in range(T.int64(6)):
        with T.sblock("T_bits"):
            v_ax0 = T.axis.spatial(T.int64(6), ax0)
            T.reads(x[v_ax0], y[v_ax0])
            T.writes(out[T.int64(0):T.int64(6), v_ax0])
            out[T.int64(0), v_ax0] = x[v_ax0] ^ y[v_ax0]
            out[T.int64(1), v_ax0] = x[v_ax0] & y[v_ax0]
            out[T.int64(2), v_ax0] = x[v_ax0] | y[v_ax0]
            out[T.int64(3), v_ax0] = x[v_ax0] << (y[v_ax0] & 7)
            out[T.int64(4), v_ax0] = x[v_ax0] >> (y[v_ax0] & 7)
            out[T.int64(5), v_ax0] = ~(x[v_ax0] + 1) | x[v_ax0] & y[v_ax0] ^ 3
'''


def _bits_reference(x, y):
    return np.stack([x ^ y, x & y, x | y, x << (y & 7), x >> (y & 7), ~(x + 1) | x & y ^ 3])


def test_bitwise_operators_are_the_intrinsic_calls_and_print_back_as_operators():
    func, printed = _round_trip(BITWISE)
    ops = {c.op for c in _nodes(func, Call)}
    assert {"bitwise_xor", "bitwise_and", "bitwise_or", "shift_left", "shift_right", "bitwise_not"} <= ops
    assert _body_lines(printed) == _body_lines(BITWISE)


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_bitwise_operators_run_like_numpy(engine):
    func = tir.parse(BITWISE)
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, 6).astype("int32")
    y = rng.integers(-1000, 1000, 6).astype("int32")
    got = tir.run(func, x, y, engine=engine)
    np.testing.assert_array_equal(got, _bits_reference(x, y))


def test_xor_reads_as_the_ir_tir_topi_lowers_bitwise_xor_to():
    from tir.topi import lower

    text = HEADER + '''@T.prim_func(private=True, s_tir=True)
def bitwise_xor(x: T.Buffer((T.int64(9), T.int64(4)), "int32"), y: T.Buffer((T.int64(9), T.int64(4)), "int32"), T_bitwise_xor: T.Buffer((T.int64(9), T.int64(4)), "int32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(T.int64(9), T.int64(4)):
        with T.sblock("T_bitwise_xor"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1])
            T.writes(T_bitwise_xor[v_ax0, v_ax1])
            T_bitwise_xor[v_ax0, v_ax1] = x[v_ax0, v_ax1] ^ y[v_ax0, v_ax1]
'''
    parsed = tir.parse(text)
    lowered = lower("bitwise_xor", [((9, 4), "int32"), ((9, 4), "int32")])
    (a,) = _nodes(parsed, S.BufferStore)
    (b,) = _nodes(lowered, S.BufferStore)
    assert a.value.op == b.value.op == "bitwise_xor"
    info = opinfo.analyze(parsed)
    assert [op.name for op in info.ops] == ["bitwise_xor"]


def test_bool_xor_and_python_literal_folding():
    text = HEADER + '''@T.prim_func
def f(a: T.Buffer((4,), "bool"), b: T.Buffer((4,), "bool"), c: T.Buffer((4,), "bool")):
    for i in range(4):
        c[i] = a[i] ^ b[i] & (i < (6 ^ 3))
'''
    func, _ = _round_trip(text)
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    np.testing.assert_array_equal(tir.run(func, a, b), a ^ (b & (np.arange(4) < 5)))


@pytest.mark.parametrize("source, fragment", [
    ("c[i] = a[i] ^ 1.5", "bitwise operator on float32"),
    ("c[i] = ~a[i]", "'~' on a float32"),
])
def test_bitwise_on_floats_is_refused_with_a_position(source, fragment):
    text = HEADER + f'''@T.prim_func
def f(a: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
    for i in range(4):
        {source}
'''
    with pytest.raises(tir.ParseError, match=r"^8:16: " + fragment):
        tir.parse(text)


# ---------------------------------------------------------------------------- T.Div

DIVISION = HEADER + '''@T.prim_func
def div(a: T.Buffer((8,), "int32"), b: T.Buffer((8,), "int32"), out: T.Buffer((4, 8), "int32")):
    for i in range(8):
        out[0, i] = T.Div(a[i], b[i])
        out[1, i] = T.truncmod(a[i], b[i])
        out[2, i] = a[i] // b[i]
        out[3, i] = a[i] % b[i]
'''


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_t_div_truncates_towards_zero(engine):
    func, printed = _round_trip(DIVISION)
    assert len(_nodes(func, Div)) == 1
    assert "T.Div(a[i], b[i])" in printed and "T.truncmod(a[i], b[i])" in printed
    a = np.array([7, -7, 7, -7, 9, -9, 0, -1], "int32")
    b = np.array([2, 2, -2, -2, 4, 4, 3, 5], "int32")
    got = tir.run(func, a, b, engine=engine)
    trunc = np.trunc(a / b).astype("int32")
    np.testing.assert_array_equal(got[0], trunc)
    np.testing.assert_array_equal(got[1], a - trunc * b)
    np.testing.assert_array_equal(got[2], a // b)
    np.testing.assert_array_equal(got[3], a % b)


def test_t_div_on_floats_is_true_division():
    text = HEADER + '''@T.prim_func
def f(a: T.Buffer((3,), "float32"), out: T.Buffer((3,), "float32")):
    for i in range(3):
        out[i] = T.Div(a[i], T.float32(4.0))
'''
    func, printed = _round_trip(text)
    assert "a[i] / T.float32(4.0)" in printed
    np.testing.assert_allclose(tir.run(func, np.array([1, -3, 5], "float32")), [0.25, -0.75, 1.25])


# ---------------------------------------------------------------------------- Relax ops left unlowered

UNLOWERED = HEADER + '''@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(x: T.Buffer((T.int64(3), T.int64(5)), "float32"), y: T.Buffer((T.int64(3), T.int64(5)), "float32"), T_add: T.Buffer((T.int64(3), T.int64(5)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(3), T.int64(5)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = x[v_ax0, v_ax1] + y[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((3, 5), dtype="float32"), y: R.Tensor((3, 5), dtype="float32")) -> R.Tensor((3, 2), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, y), out_ty=R.Tensor((3, 5), dtype="float32"))
            lv1: R.Tensor((3, 5), dtype="float32") = R.cumsum(lv, axis=1, dtype=None, exclusive=False)
            lv2: R.Tensor((3, 5), dtype="float32") = R.nn.some_op((lv1, y), [1, -2], R.prim_value(3), R.shape([3, 5]), scale=1.5, mode="same")
            gv: R.Tensor((3, 2), dtype="float32") = R.topk(lv2, k=2, axis=-1, ret_type="values", largest=True, dtype="int32")
            R.output(gv)
        return gv
'''


def test_unlowered_relax_ops_parse_print_back_and_verify():
    mod, printed = _round_trip(UNLOWERED)
    verify(mod)
    assert _body_lines(printed) == _body_lines(UNLOWERED)
    calls = [b.value for b in mod["main"].bindings if isinstance(b.value, rx.OpCall)]
    assert [c.op for c in calls] == ["cumsum", "nn.some_op", "topk"]
    cumsum, some, topk = calls
    assert dict(cumsum.attrs) == {"axis": 1, "dtype": None, "exclusive": False}
    assert isinstance(some.args[0], rx.Tuple) and some.args[1] == (1, -2)
    assert isinstance(some.args[2], rx.PrimValue) and some.args[2].value.value == 3
    assert some.args[3].op == "shape"
    assert topk.attrs["k"] == 2 and topk.attrs["ret_type"] == "values"


def test_prim_funcs_of_a_module_with_unlowered_ops_are_analysed():
    infos = opinfo.analyze_module(tir.parse(UNLOWERED))
    assert [op.name for op in infos["add"].ops] == ["add"]


def test_non_finite_numbers_of_an_unlowered_op_round_trip_as_numbers():
    text = UNLOWERED.replace("scale=1.5", 'scale=float("inf"), low=float("-inf"), fill=float("nan")')
    mod, printed = _round_trip(text)
    assert 'scale=float("inf"), low=float("-inf"), fill=float("nan")' in printed
    some = [b.value for b in mod["main"].bindings if isinstance(b.value, rx.OpCall)][1]
    assert some.attrs["scale"] == float("inf") and some.attrs["low"] == float("-inf")
    assert np.isnan(some.attrs["fill"])


def test_running_an_unlowered_op_names_it():
    """R.cumsum runs in the graph (numpy, tir.graph_ops); the unknown op after it is named."""
    mod = tir.parse(UNLOWERED)
    x = np.ones((3, 5), "float32")
    with pytest.raises(InterpError, match=r"R\.nn\.some_op is not lowered to TIR; cannot execute"):
        tir.run(mod, x, x)


def test_call_tir_with_an_empty_r_tuple():
    text = HEADER + '''@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def ones(T_full: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.sblock("T_full"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads()
                T.writes(T_full[v_ax0, v_ax1])
                T_full[v_ax0, v_ax1] = T.float32(1.0)

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.ones, R.tuple(), out_ty=R.Tensor((2, 3), dtype="float32"))
            gv: R.Tensor((2, 3), dtype="float32") = lv
            R.output(gv)
        return gv
'''
    mod, printed = _round_trip(text)
    assert _body_lines(printed) == _body_lines(text)
    np.testing.assert_array_equal(tir.run(mod, np.zeros((2, 3), "float32")), np.ones((2, 3), "float32"))


def test_unsupported_relax_call_names_its_position():
    text = HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        gv = np.cumsum(x)
        return gv
'''
    with pytest.raises(tir.ParseError, match=r"^9:14: unsupported call 'np.cumsum'"):
        tir.parse(text)


# ---------------------------------------------------------------------------- block attrs, T.attr

def test_block_attr_holding_buffers():
    text = HEADER + '''@T.prim_func
def mm(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vj, vk])
            T.writes(C[vi, vj])
            T.sblock_attr({"layout_free_placeholders": [B]})
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
'''
    func, printed = _round_trip(text)
    (realize,) = [r for r in _nodes(func, S.BlockRealize) if r.block.name == "C"]
    assert realize.block.annotations["layout_free_placeholders"] == (func.buffers[1],)
    assert 'T.sblock_attr({"layout_free_placeholders": [B]})' in printed
    a, b = np.random.default_rng(1).random((2, 4, 4), dtype="float32")
    np.testing.assert_allclose(tir.run(func, a, b), a @ b.T, rtol=1e-5)


ATTR = HEADER + '''@T.prim_func(s_tir=True)
def scatter(x: T.Buffer((T.int64(6),), "float32"), idx: T.Buffer((T.int64(3),), "int64"), out: T.Buffer((T.int64(6),), "float32")):
    # with T.sblock("root"):
    with T.sblock("scatter_generic"):
        T.reads()
        T.writes()
        with T.attr({"pragma_unroll": 1}):
            for v in range(T.int64(6)):
                out[v] = x[v]
        T.attr({"pragma_scope": "seq"})
        for v in range(T.int64(3)):
            out[idx[v]] = T.float32(-1.0)
'''


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_t_attr_statements_read_print_and_run(engine):
    func, printed = _round_trip(ATTR)
    assert _body_lines(printed) == _body_lines(ATTR)
    attrs_ = [dict(s.attrs) for s in _nodes(func, S.AttrStmt)]
    assert {"pragma_scope": "seq"} in attrs_ and {"pragma_unroll": 1} in attrs_
    x = np.arange(6, dtype="float32")
    want = x.copy()
    want[[0, 4]] = -1
    np.testing.assert_array_equal(tir.run(func, x, np.array([4, 0, 4], "int64"), engine=engine), want)


def test_t_attr_with_a_node_key_and_value():
    text = HEADER + '''@T.prim_func
def f(a: T.Buffer((4,), "float32")):
    for i in range(4):
        T.attr(a, "storage_alignment", 16)
        a[i] = T.float32(0.0)
'''
    func, printed = _round_trip(text)
    (s,) = _nodes(func, S.AttrStmt)
    assert s.node is func.buffers[0] and dict(s.attrs) == {"storage_alignment": 16}
    assert 'T.attr(a, "storage_alignment", 16)' in printed


def test_t_attr_with_two_arguments_is_refused():
    text = HEADER + '''@T.prim_func
def f(a: T.Buffer((4,), "float32")):
    T.attr(a, "key")
'''
    with pytest.raises(tir.ParseError, match=r"^7:5: T.attr takes"):
        tir.parse(text)


# ---------------------------------------------------------------------------- string dimensions

DYNAMIC = '''# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def pad(x: T.Buffer((n,), "float32"), PadInput: T.Buffer(("n + T.int64(2)",), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0 in range(n + T.int64(2)):
            with T.sblock("PadInput"):
                v_i0 = T.axis.spatial(n + T.int64(2), i0)
                T.reads(x[v_i0 - T.int64(1)])
                T.writes(PadInput[v_i0])
                PadInput[v_i0] = T.if_then_else(T.int64(1) <= v_i0 and v_i0 < n + T.int64(1), x[v_i0 - T.int64(1)], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((n,), dtype="float32")) -> R.Tensor(("n + 2",), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.pad, (x,), out_ty=R.Tensor((n + 2,), dtype="float32"))
            gv: R.Tensor((n + 2,), dtype="float32") = lv
            R.output(gv)
        return gv
'''


def test_dimensions_written_as_string_expressions():
    mod, printed = _round_trip(DYNAMIC)
    assert _body_lines(printed) == _body_lines(DYNAMIC)
    x = np.arange(1, 5, dtype="float32")
    np.testing.assert_array_equal(tir.run(mod, x), np.pad(x, 1))


def test_bad_string_dimension_is_reported_at_the_string():
    text = DYNAMIC.replace('-> R.Tensor(("n + 2",)', '-> R.Tensor(("n +",)')
    with pytest.raises(tir.ParseError, match=r"^21:\d+: 'n \+' is neither a variable name nor an expression"):
        tir.parse(text)
    text = DYNAMIC.replace('-> R.Tensor(("n + 2",)', '-> R.Tensor(("m + 2",)')
    with pytest.raises(tir.ParseError, match=r"^21:\d+: in dimension 'm \+ 2'"):
        tir.parse(text)


# ---------------------------------------------------------------------------- runtime calls (median's argsort)

PACKED = HEADER + '''@T.prim_func(private=True, s_tir=True)
def main(x: T.Buffer((T.int64(5),), "float32"), out_buf: T.Buffer((T.int64(5),), "int64")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    with T.sblock("argsort_cpu"):
        T.reads()
        T.writes()
        T.call_packed("tvm.contrib.sort.argsort", T.tvm_stack_make_array(x.data, T.tvm_stack_make_shape(T.int64(5)), 0, 1, T.float32(0.0), T.int64(0)), T.tvm_stack_make_array(out_buf.data, T.tvm_stack_make_shape(T.int64(5)), 0, 1, T.int64(0), T.int64(0)), -1, T.bool(True))
'''


def test_packed_runtime_calls_read_print_back_and_are_opaque():
    func, printed = _round_trip(PACKED)
    assert _body_lines(printed) == _body_lines(PACKED)
    calls = []
    post_order_visit(func.body, lambda n: calls.append(n.op) if isinstance(n, Call) else None)
    assert calls.count("tvm_stack_make_array") == 2 and "call_packed" in calls
    info = opinfo.analyze(func)
    assert info.kind == "opaque" and info.ops == ()
    # TVM's argsort is the one runtime function the interpreter runs itself (tir/interp_packed.py)
    x = np.array([3.0, 1.0, 2.0, 1.0, 0.0], "float32")
    np.testing.assert_array_equal(tir.run(func, x), [4, 1, 3, 2, 0])
    other = tir.parse(PACKED.replace("tvm.contrib.sort.argsort", "tvm.contrib.sort.sort"))
    with pytest.raises(InterpError, match=r"T\.call_packed\('tvm\.contrib\.sort\.sort'\) calls a function of the TVM runtime"):
        tir.run(other, np.ones(5, "float32"))


def test_data_of_a_name_that_is_not_a_buffer_is_refused():
    bad = PACKED.replace("T.tvm_stack_make_array(x.data", "T.tvm_stack_make_array(T.int64.data")
    with pytest.raises(tir.ParseError, match="unexpected 'T.int64.data'"):
        tir.parse(bad)


def test_buffer_named_only_by_an_annotation():
    """TVM declares ``T_reshape = T.Buffer(...)`` inside a block whose
    ``layout_free_placeholders`` names a buffer inlined away; it reads and prints back."""
    text = '''
@T.prim_func(private=True)
def f(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
    for i in range(T.int64(4)):
        with T.sblock("copy"):
            v_i = T.axis.spatial(T.int64(4), i)
            T.reads(x[v_i])
            T.writes(y[v_i])
            T_reshape = T.Buffer((T.int64(2), T.int64(2)))
            T.sblock_attr({"layout_free_placeholders": [T_reshape]})
            y[v_i] = x[v_i]
'''
    func = tir.parse(text)
    printed = tir.to_script(func)
    assert 'T_reshape = T.Buffer((T.int64(2), T.int64(2)), "float32")' in printed
    assert tir.to_script(tir.parse(printed)) == printed

"""tir.to_script: print -> parse round trips (corpus, built IR, random expressions) and TVM's look."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import dtype as dt
from corpus_util import CORPUS, corpus_files


def _roundtrip(node, dialect="tirx"):
    text = tir.to_script(node, dialect)
    again = tir.parse(text)
    tir.assert_structural_equal(node, again)
    return text


@pytest.mark.parametrize("dialect", ["tirx", "tir"])
def test_every_corpus_file_round_trips(dialect):
    files = corpus_files()
    if not files:
        pytest.skip(f"corpus not found at {CORPUS}")
    for path in files:
        _roundtrip(tir.parse(path.read_text()), dialect)


def test_printing_a_corpus_file_reproduces_tvm_text():
    path = CORPUS / "ops" / "nn_conv1d_transpose_1_1.py"
    if not path.exists():
        pytest.skip("corpus not found")
    src = path.read_text()
    out = tir.to_script(tir.parse(src), "tirx")
    expected = [line for line in src.strip().splitlines() if "tvm.tirx.layout" not in line]
    assert out.strip().splitlines() == expected


def _copy_func():
    A = tir.decl_buffer((4, 8), "float32", "A")
    C = tir.decl_buffer((4, 8), "float32", "C")
    i, j = tir.Var("i", dt.int64), tir.Var("j", dt.int64)
    zero, four, eight = tir.const(0, "int64"), tir.const(4, "int64"), tir.const(8, "int64")
    store = tir.BufferStore(C, A[i, j] * 2.0, (i, j))
    body = tir.For(i, zero, four, tir.ForKind.SERIAL, tir.For(j, zero, eight, tir.ForKind.PARALLEL, store))
    return tir.prim_func([A, C], body)


@pytest.mark.parametrize("dialect", ["tirx", "tir"])
def test_built_function_round_trips(dialect):
    text = _roundtrip(_copy_func(), dialect)
    assert "T.parallel(T.int64(8))" in text


def test_loops_with_offsets_annotations_and_branches_round_trip():
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i", dt.int64)
    n = tir.SizeVar("n", dt.int64)
    store = tir.BufferStore(A, tir.const(1.0, "float32"), (i,))
    cond = tir.IfThenElse(tir.logical_and(i < n, tir.ne(i, 3)), store, tir.Evaluate(tir.const(0)))
    loop = tir.For(i, tir.const(2, "int64"), n, tir.ForKind.SERIAL, cond, annotations={"pragma_unroll": 4})
    f = tir.prim_func([A], loop)
    text = _roundtrip(f)
    assert "n = T.int64(is_size_var=True)" in text and "annotations=" in text


def test_clashing_names_are_deduplicated():
    A = tir.decl_buffer((4,), "float32", "x")
    B = tir.decl_buffer((4,), "float32", "x")
    i = tir.Var("x", dt.int64)
    store = tir.BufferStore(B, A[i], (i,))
    f = tir.prim_func([A, B], tir.For(i, tir.const(0, "int64"), tir.const(4, "int64"), tir.ForKind.SERIAL, store))
    text = _roundtrip(f)
    assert "x_1" in text and "x_2" in text


def test_graph_module_with_tuple_outputs_round_trips():
    A = tir.decl_buffer((4,), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    C = tir.decl_buffer((4,), "float32", "C")
    i = tir.Var("i", dt.int64)
    body = tir.For(i, tir.const(0, "int64"), tir.const(4, "int64"), tir.ForKind.SERIAL,
                   tir.seq(tir.BufferStore(B, A[i], (i,)), tir.BufferStore(C, A[i], (i,))))
    split = tir.prim_func([A, B, C], body)
    rx = tir.relax
    t = rx.TensorType((4,), dt.float32)
    x = rx.RVar("x", t)
    lv, a, b = rx.RVar("lv"), rx.RVar("a", t), rx.RVar("b")
    block = rx.DataflowBlock((
        rx.Binding(lv, rx.CallTIR(rx.GlobalVar("split"), (x,), rx.TupleType((t, t)))),
        rx.Binding(a, rx.TupleGetItem(lv, 0)),
        rx.Binding(b, rx.Tuple((a, rx.TupleGetItem(lv, 1)))),
    ), (b,))
    main = rx.Function((x,), (block,), b, None, {"global_symbol": "main"})
    mod = tir.IRModule({"split": split, "main": main})
    tir.verify(mod)
    text = _roundtrip(mod)
    assert "out_ty=[R.Tensor((4,)" in text and "lv[0]" in text


# ---------------------------------------------------------------------------- random expressions

_I = [tir.Var("i", dt.int64), tir.Var("j", dt.int64)]
_F = tir.decl_buffer((8, 8), "float32", "F")


def _int_exprs():
    leaves = st.sampled_from(_I) | st.integers(-5, 9).map(lambda v: tir.const(v, "int64"))
    ops = [tir.Add, tir.Sub, tir.Mul, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max, tir.Div, tir.Mod]
    return st.recursive(leaves, lambda kids: st.builds(lambda op, a, b: op(a, b), st.sampled_from(ops), kids, kids),
                        max_leaves=8)


def _bool_exprs(ints):
    cmp = st.builds(lambda op, a, b: op(a, b), st.sampled_from([tir.LT, tir.LE, tir.EQ, tir.NE, tir.GT, tir.GE]), ints, ints)
    return st.recursive(cmp, lambda kids: st.one_of(
        st.builds(tir.And, kids, kids), st.builds(tir.Or, kids, kids), st.builds(tir.Not, kids)), max_leaves=4)


def _float_exprs(ints):
    leaf = st.one_of(st.builds(lambda a, b: _F[a, b], ints, ints),
                     st.floats(-4, 4, allow_nan=False).map(lambda v: tir.const(v, "float32")))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.builds(lambda op, a, b: op(a, b), st.sampled_from([tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Max]), kids, kids),
        st.builds(lambda a: tir.call("exp", a), kids),
        st.builds(tir.Select, _bool_exprs(ints), kids, kids),
        st.builds(lambda c, a, b: tir.if_then_else(c, a, b), _bool_exprs(ints), kids, kids),
        st.builds(lambda a: tir.Cast(dt.float32, a), ints)), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(value=_float_exprs(_int_exprs()))
def test_random_expressions_round_trip(value):
    O = tir.decl_buffer((1,), "float32", "O")
    i, j = _I
    zero8 = tir.const(0, "int64"), tir.const(8, "int64")
    store = tir.BufferStore(O, value, (tir.const(0, "int64"),))
    body = tir.For(i, *zero8, tir.ForKind.SERIAL, tir.For(j, *zero8, tir.ForKind.SERIAL, store))
    _roundtrip(tir.prim_func([_F, O], body))


def test_decl_buffer_round_trips_and_nodes_print_readably():
    A = tir.decl_buffer((4,), "float32", "A")
    tmp = tir.decl_buffer((4,), "float32", "tmp")
    i = tir.Var("i", dt.int64)
    loop = _loop4(i, tir.seq(tir.BufferStore(tmp, A[i], (i,)), tir.BufferStore(A, tmp[i] + 1.0, (i,))))
    f = tir.prim_func([A], tir.AllocateBuffer(tmp, loop))
    assert "with T.decl_buffer((T.int64(4),), \"float32\") as tmp:" in _roundtrip(f)
    assert str(i * 2) == "i * T.int64(2)"


def _loop4(var, body):
    return tir.For(var, tir.const(0, "int64"), tir.const(4, "int64"), tir.ForKind.SERIAL, body)

"""tril/triu read from the half-plane test, bool xor told apart by its compute tag, gather_nd
with batch_dims, scatter_elements from what its opaque function computes, and a flat
argmin over a symbolic extent. Forms are built the way TVM 0.27 writes them (``Builder``
loop forms, or literal TVMScript as TVM prints it), run against a numpy reference first."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedule_helpers import random_schedule  # noqa: E402

import tir  # noqa: E402
from opinfo.api import analyze  # noqa: E402
from tir.builder import Builder  # noqa: E402
from tir.expr import GE, GT, LE, LT, Select, const  # noqa: E402
from tir.interp import interpret  # noqa: E402
from tir.verifier import verify  # noqa: E402

F32, I64 = "float32", "int64"
RNG = np.random.default_rng(3)
HEADER = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"


def _answer(func) -> list:
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _func(text: str):
    node = tir.parse(HEADER + text)
    funcs = [f for _, f in node.prim_funcs()] if hasattr(node, "prim_funcs") else [node]
    assert len(funcs) == 1
    return funcs[0]


def _names(n):
    return [f"i{d}" for d in range(n)]


def _stable_under_schedule(func, want):
    for seed in (1, 2):
        got = _answer(random_schedule(func, seed))
        assert got in ([], want), got


# ------------------------------------------------------------------ tril / triu
def _half_plane(row, col, k, upper, form):
    """The test TVM's simplifier leaves for ``c - r <= k`` (tril) / ``c - r >= k`` (triu),
    in one of the ways it writes it."""
    kk = lambda v: const(v, I64)
    if not upper:  # col <= row + k
        return [LE(col, row + kk(k)), LT(col, row + kk(k + 1)), GE(row + kk(k), col),
                GT(row + kk(k + 1), col)][form]
    return [LE(row + kk(k), col), LT(row + kk(k - 1), col), GE(col, row + kk(k)),
            GT(col, row + kk(k - 1))][form]


def trilu_form(shape, k, upper, form):
    b = Builder()
    x = b.placeholder(shape, F32, "x")

    def body(*i):
        return Select(_half_plane(i[-2], i[-1], k, upper, form), x[i], const(0.0, F32))

    return b.build([x], [b.compute("trilu", shape, body, names=_names(len(shape)))])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=1), st.integers(1, 5), st.integers(1, 5),
       st.integers(-4, 4), st.booleans(), st.integers(0, 3))
def test_trilu_k_is_read_from_the_test(lead, rows, cols, k, upper, form):
    shape = list(lead) + [rows, cols]
    func = trilu_form(shape, k, upper, form)
    verify(func)
    x = RNG.standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    interpret(func, x, out)
    np.testing.assert_allclose(out, np.triu(x, k) if upper else np.tril(x, k))
    want = [("triu" if upper else "tril", {"k": k})]
    assert _answer(func) == want  # also where every position (or none) is kept
    _stable_under_schedule(func, want)


TRIL_SYMBOLIC = '''n = T.int64()
@T.prim_func(private=True)
def tril(x: T.Buffer((n, T.int64(8), T.int64(2)), "float32"), trilu: T.Buffer((n, T.int64(8), T.int64(2)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1, i2 in T.grid(n, T.int64(8), T.int64(2)):
        with T.block("trilu"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(x[v_i0, v_i1, v_i2])
            T.writes(trilu[v_i0, v_i1, v_i2])
            trilu[v_i0, v_i1, v_i2] = T.Select(v_i1 < v_i2, x[v_i0, v_i1, v_i2], T.float32(0.0))
'''


def test_triu_strict_test_and_symbolic_batch():
    assert _answer(_func(TRIL_SYMBOLIC)) == [("triu", {"k": 1})]


def test_half_plane_with_two_row_terms_is_not_trilu():
    text = TRIL_SYMBOLIC.replace("v_i1 < v_i2", "v_i1 * T.int64(2) < v_i2")
    assert _answer(_func(text)) == []


# ------------------------------------------------------------------ bool xor
XOR = '''@T.prim_func(private=True)
def f(x: T.Buffer((T.int64(3), T.int64(4)), "bool"), y: T.Buffer((T.int64(4),), "bool"), out: T.Buffer((T.int64(3), T.int64(4)), "bool")):
    T.func_attr({"tir.noalias": True})
    for ax0, ax1 in T.grid(T.int64(3), T.int64(4)):
        with T.block("TAG"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x[v_ax0, v_ax1], y[v_ax1])
            T.writes(out[v_ax0, v_ax1])
            out[v_ax0, v_ax1] = x[v_ax0, v_ax1] ^ y[v_ax1]
'''


def test_bool_xor_is_named_by_its_compute_tag():
    x = RNG.integers(0, 2, (3, 4)).astype(bool)
    y = RNG.integers(0, 2, (4,)).astype(bool)
    for tag, op in (("T_logical_xor", "logical_xor"), ("T_bitwise_xor", "bitwise_xor")):
        func = _func(XOR.replace("TAG", tag))
        out = np.zeros((3, 4), bool)
        interpret(func, x, y, out)
        np.testing.assert_array_equal(out, np.logical_xor(x, y))
        info = analyze(func)
        assert [(o.name, [p.buffer for p in o.operands]) for o in info.ops] == [(op, ["x", "y"])]


def test_bool_xor_under_another_tag_abstains():
    # the loops of logical_xor and bitwise_xor on bools are identical: no tag, no name
    assert _answer(_func(XOR.replace("TAG", "T_not_equal"))) == []


def test_int_xor_is_bitwise_xor_whatever_the_tag():
    text = XOR.replace('"bool"', '"int32"').replace("TAG", "compute")
    assert _answer(_func(text)) == [("bitwise_xor", {})]


# ------------------------------------------------------------------ gather_nd
def gather_nd_form(xs, ys, batch_dims):
    """Relax's legalization: ``T_transpose[m, o...] = y[o..., m]``, then
    ``x[o_0..o_b-1, T_transpose[0, o..], .., T_transpose[M-1, o..], rest...]``."""
    b = Builder()
    x = b.placeholder(xs, F32, "x")
    y = b.placeholder(ys, I64, "y")
    K, M = len(ys) - 1, ys[-1]
    t = b.compute("T_transpose", [M] + list(ys[:-1]), lambda m, *o: y[tuple(o) + (m,)],
                  names=_names(K + 1))

    def body(*o):
        gathered = tuple(t[(const(m, I64),) + tuple(o[:K])] for m in range(M))
        return x[tuple(o[:batch_dims]) + gathered + tuple(o[K:])]

    shape = list(ys[:-1]) + list(xs[batch_dims + M:])
    out = b.compute("T_gather_nd", shape, body, names=[f"ax{d}" for d in range(len(shape))])
    return b.build([x, y], [out])


def gather_nd_ref(x, y, batch_dims):
    M = y.shape[-1]
    out = np.zeros(y.shape[:-1] + x.shape[batch_dims + M:], x.dtype)
    for pos in np.ndindex(*y.shape[:-1]):
        out[pos] = x[tuple(pos[:batch_dims]) + tuple(int(v) for v in y[pos])]
    return out


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_gather_nd(data):
    rank = data.draw(st.integers(1, 4))
    xs = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    bd = data.draw(st.integers(0, rank - 1))
    M = data.draw(st.integers(1, rank - bd))
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    ys = xs[:bd] + extra + [M]
    func = gather_nd_form(xs, ys, bd)
    verify(func)
    x = RNG.standard_normal(xs).astype(np.float32)
    y = np.stack([RNG.integers(0, xs[bd + m], ys[:-1]) for m in range(M)], axis=-1).astype(np.int64)
    want = gather_nd_ref(x, y, bd)
    out = np.zeros(want.shape, np.float32)
    interpret(func, x, y, out)
    np.testing.assert_allclose(out, want)
    got = [(o.name, o.to_json()["attrs"], [p.buffer for p in o.operands]) for o in analyze(func).ops]
    assert got == [("gather_nd", {"batch_dims": bd}, ["x", "y"])]


# ------------------------------------------------------------------ scatter_elements
SCATTER = '''@T.prim_func(private=True)
def scatter_elements(x: T.Buffer((T.int64(3), T.int64(4)), "float32"), y1: T.Buffer((T.int64(2), T.int64(4)), "int64"), y2: T.Buffer((T.int64(2), T.int64(4)), "float32"), out_buf: T.Buffer((T.int64(3), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    with T.block("scatter_elements_generic"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for v in T.parallel(T.int64(12)):
            out_buf[v // T.int64(4), v % T.int64(4)] = x[v // T.int64(4), v % T.int64(4)]
        for v in T.parallel(T.int64(4)):
            for v_1 in range(T.int64(2)):
                out_buf[(v + (y1[v_1, v] + T.Cast("int64", y1[v_1, v] < T.int64(0)) * T.int64(3)) * T.int64(4)) // T.int64(4), (v + (y1[v_1, v] + T.Cast("int64", y1[v_1, v] < T.int64(0)) * T.int64(3)) * T.int64(4)) % T.int64(4)] = COMBINE
'''
TARGET = ("out_buf[(v + (y1[v_1, v] + T.Cast(\"int64\", y1[v_1, v] < T.int64(0)) * T.int64(3)) * T.int64(4)) // T.int64(4), "
          "(v + (y1[v_1, v] + T.Cast(\"int64\", y1[v_1, v] < T.int64(0)) * T.int64(3)) * T.int64(4)) % T.int64(4)]")
COMBINES = {"update": "y2[v_1, v]", "add": f"{TARGET} + y2[v_1, v]", "max": f"T.max({TARGET}, y2[v_1, v])",
            "mean": f"({TARGET} + y2[v_1, v]) / T.float32(2.0)"}


def test_scatter_elements_reading():
    for reduction, combine in COMBINES.items():
        func = _func(SCATTER.replace("COMBINE", combine))
        info = analyze(func)
        got = [(o.name, o.to_json()["attrs"], [p.role for p in o.operands]) for o in info.ops]
        assert got == [("scatter_elements", {"axis": 0, "reduction": reduction}, ["data", "indices", "updates"])]


def test_copy_without_scatter_abstains():
    # the second loop writes the updates where they are, not where the indices say
    func = _func(SCATTER.replace("COMBINE", "y2[v_1, v]").replace(TARGET, "out_buf[v_1, v]"))
    assert _answer(func) == []


# ------------------------------------------------------------------ argmin, axis=None
ARGMIN = '''n = T.int64()
@T.prim_func(private=True)
def argmin(x: T.Buffer((n, T.int64(5), T.int64(3)), "float32"), x_red: T.Buffer((), "int64")):
    T.func_attr({"tir.noalias": True})
    x_red_temp_v0 = T.alloc_buffer((), "int64")
    x_red_temp_v1 = T.alloc_buffer(())
    for k0, k1, k2 in T.grid(n, T.int64(5), T.int64(3)):
        with T.block("x_red_temp"):
            v_k0, v_k1, v_k2 = T.axis.remap("RRR", [k0, k1, k2])
            T.reads(x[v_k0, v_k1, v_k2])
            T.writes(x_red_temp_v0[()], x_red_temp_v1[()])
            with T.init():
                x_red_temp_v0[()] = T.int64(-1)
                x_red_temp_v1[()] = T.float32(340282346638528859811704183484516925440.0)
            v_x_red_temp_v0: T.int64 = T.Select(x_red_temp_v1[()] < x[v_k0, v_k1, v_k2] or x_red_temp_v1[()] == x[v_k0, v_k1, v_k2] and x_red_temp_v0[()] < v_k0 * T.int64(15) + v_k1 * T.int64(3) + v_k2, x_red_temp_v0[()], v_k0 * T.int64(15) + v_k1 * T.int64(3) + v_k2)
            v_x_red_temp_v1: T.float32 = T.Select(x_red_temp_v1[()] < x[v_k0, v_k1, v_k2], x_red_temp_v1[()], x[v_k0, v_k1, v_k2])
            x_red_temp_v0[()] = v_x_red_temp_v0
            x_red_temp_v1[()] = v_x_red_temp_v1
    with T.block("x_red"):
        vi = T.axis.spatial(T.int64(1), T.int64(0))
        T.reads(x_red_temp_v0[()])
        T.writes(x_red[()])
        x_red[()] = x_red_temp_v0[()]
'''


def test_flat_argmin_over_a_symbolic_outer_extent():
    func = _func(ARGMIN)
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    out = np.zeros((), np.int64)
    interpret(func, x, out)
    assert int(out) == int(np.argmin(x))
    assert _answer(func) == [("argmin", {"axis": None, "keepdims": False})]


def test_flat_argmin_with_a_wrong_stride_abstains():
    assert _answer(_func(ARGMIN.replace("v_k0 * T.int64(15)", "v_k0 * T.int64(16)"))) == []

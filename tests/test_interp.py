"""The reference interpreter: semantics (init, guards, dtypes, division), errors, vectorisation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir.interp import interpret
from tir.interp_data import InterpError

MATMUL = """
@T.prim_func
def mm(A: T.Buffer((T.int64(6), T.int64(5)), "float32"), B: T.Buffer((T.int64(5), T.int64(4)), "float32"),
       C: T.Buffer((T.int64(6), T.int64(4)), "float32")):
    for i, j, k in T.grid(T.int64(6), T.int64(4), T.int64(5)):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

GUARDED_PAD = """
@T.prim_func
def pad(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(8),), "float32")):
    for i in range(T.int64(8)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(8), i)
            B[vi] = T.if_then_else(T.int64(2) <= vi and vi < T.int64(6), A[vi - T.int64(2)], T.float32(-1.0))
"""

OUT_OF_BOUNDS = """
@T.prim_func
def oob(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(5),), "float32")):
    for i in range(T.int64(5)):
        with T.block("copy"):
            vi = T.axis.spatial(T.int64(5), i)
            B[vi] = A[vi]
"""

INT_DIV = """
@T.prim_func
def divs(A: T.Buffer((T.int64(6),), "int32"), B: T.Buffer((T.int64(6),), "int32"), C: T.Buffer((T.int64(4), T.int64(6)), "int32")):
    for i in range(T.int64(6)):
        with T.block("C"):
            vi = T.axis.spatial(T.int64(6), i)
            C[T.int64(0), vi] = T.truncdiv(A[vi], B[vi])
            C[T.int64(1), vi] = T.truncmod(A[vi], B[vi])
            C[T.int64(2), vi] = A[vi] // B[vi]
            C[T.int64(3), vi] = A[vi] % B[vi]
"""

ARGMAX = """
@T.prim_func
def argmax(x: T.Buffer((T.int64(7), T.int64(3)), "float32"), out: T.Buffer((T.int64(3),), "int64")):
    v0 = T.alloc_buffer((T.int64(3),), "int64")
    v1 = T.alloc_buffer((T.int64(3),), "float32")
    for j, k in T.grid(T.int64(3), T.int64(7)):
        with T.block("red"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                v0[vj] = T.int64(-1)
                v1[vj] = T.float32(-3.4028234663852886e38)
            a: T.int64 = T.Select(v1[vj] >= x[vk, vj], v0[vj], vk)
            b: T.float32 = T.Select(v1[vj] >= x[vk, vj], v1[vj], x[vk, vj])
            v0[vj] = a
            v1[vj] = b
    for j in range(T.int64(3)):
        with T.block("out"):
            vj = T.axis.spatial(T.int64(3), j)
            out[vj] = v0[vj]
"""

SYMBOLIC = """
@T.prim_func
def rowsum(var_A: T.handle, var_B: T.handle):
    n = T.int64()
    A = T.match_buffer(var_A, (n, T.int64(3)), "float32")
    B = T.match_buffer(var_B, (n,), "float32")
    for i, k in T.grid(n, T.int64(3)):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + T.exp(A[vi, vk])
"""


def parse(text):
    return tir.parse(text)


@pytest.mark.parametrize("vectorize", [True, False])
def test_matmul_matches_numpy(vectorize):
    f = parse(MATMUL)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 5), dtype=np.float32), rng.standard_normal((5, 4), dtype=np.float32)
    c = np.full((6, 4), 99, dtype=np.float32)
    interpret(f, a, b, c, vectorize=vectorize)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert c.dtype == np.float32


@pytest.mark.parametrize("vectorize", [True, False])
def test_guarded_load_is_not_read_when_not_taken(vectorize):
    a = np.arange(4, dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    interpret(parse(GUARDED_PAD), a, out, vectorize=vectorize)
    assert out.tolist() == [-1, -1, 0, 1, 2, 3, -1, -1]


@pytest.mark.parametrize("vectorize", [True, False])
def test_out_of_bounds_names_buffer_index_and_block(vectorize):
    with pytest.raises(InterpError) as err:
        interpret(parse(OUT_OF_BOUNDS), np.zeros(4, np.float32), np.zeros(5, np.float32), vectorize=vectorize)
    text = str(err.value)
    assert "'A'" in text and "(4,)" in text and "'copy'" in text


def test_wrong_argument_shape_and_dtype():
    f = parse(MATMUL)
    with pytest.raises(InterpError, match="'A'.*shape"):
        interpret(f, np.zeros((5, 5), np.float32), np.zeros((5, 4), np.float32), np.zeros((6, 4), np.float32))
    with pytest.raises(InterpError, match="'B'.*float32.*float64"):
        interpret(f, np.zeros((6, 5), np.float32), np.zeros((5, 4)), np.zeros((6, 4), np.float32))


@pytest.mark.parametrize("vectorize", [True, False])
def test_trunc_and_floor_division(vectorize):
    a = np.array([7, -7, 7, -7, 0, -1], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 4], dtype=np.int32)
    c = np.zeros((4, 6), np.int32)
    interpret(parse(INT_DIV), a, b, c, vectorize=vectorize)
    assert c[0].tolist() == [3, -3, -3, 3, 0, 0]
    assert c[1].tolist() == [1, -1, 1, -1, 0, -1]
    assert c[2].tolist() == (a // b).tolist()
    assert c[3].tolist() == (a % b).tolist()


@pytest.mark.parametrize("vectorize", [True, False])
def test_argmax_ordered_reduction(vectorize):
    x = np.array([[1, 5, 2], [3, 5, 2], [3, 0, 9], [0, 0, 0], [3, 1, 9], [2, 2, 2], [-1, 5, 1]], np.float32)
    out = np.zeros(3, np.int64)
    interpret(parse(ARGMAX), x, out, vectorize=vectorize)
    assert out.tolist() == [1, 0, 2]


def test_symbolic_extent_bound_from_shape():
    a = np.random.default_rng(1).standard_normal((7, 3)).astype(np.float32)
    out = tir.run(parse(SYMBOLIC), a)
    assert out.shape == (7,) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.exp(a).sum(1), rtol=1e-5)


def test_float32_stays_float32():
    f = tir.topi.lower("divide", [((4,), "float32"), ((4,), "float32")])
    a = np.full(4, 1, np.float32)
    b = np.full(4, 3, np.float32)
    out = tir.run(f, a, b)
    assert out.dtype == np.float32 and out[0] == np.float32(1) / np.float32(3)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 4), hw=st.integers(3, 7), o=st.integers(1, 4),
       k=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 1))
def test_conv2d_vectorised_equals_scalar_walk(n, c, hw, o, k, stride, pad):
    f = tir.topi.lower("nn.conv2d", [((n, c, hw, hw), "float32"), ((o, c, k, k), "float32")],
                       strides=[stride, stride], padding=[pad] * 4)
    rng = np.random.default_rng(n * 100 + c)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c, k, k)).astype(np.float32)
    fast = tir.run(f, x, w)
    out = np.zeros_like(fast)
    interpret(f, x, w, out, vectorize=False)
    np.testing.assert_allclose(fast, out, rtol=1e-4, atol=1e-4)

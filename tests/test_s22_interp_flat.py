"""The interpreter runs loop nests without blocks (TIR after TVM's lowering passes) as lanes:
the loops the written elements depend on at once, the inner loops step by step in order
(tir.interp_flat). A lowered conv2d_transpose walked 3.9 million iterations one at a time
(215 s); as lanes it takes well under a second. Nests whose lanes could meet (another index
of a written buffer, two lanes on one element, a view of a written buffer) are walked."""
from __future__ import annotations

import shutil

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tests.fixture_util import FIXTURES
from tir.interp import interpret


def _out_like(func, i=-1):
    b = func.buffers[i]
    return np.zeros([int(d.value) for d in b.shape], dtype=str(b.dtype))


def test_lowered_conv2d_transpose_runs_as_lanes_and_gives_the_op():
    (_, func), = tir.parse((FIXTURES / "s22_lowered_conv2d_transpose.py").read_text()).prim_funcs()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 16, 12, 16)).astype("float32")
    w = rng.standard_normal((16, 8, 3, 3)).astype("float32")
    out = _out_like(func)
    interpret(func, x, w, out, max_steps=20_000)  # a walk of the nests would stop at the limit
    want = tir.run(tir.topi.lower("nn.conv2d_transpose", [((1, 16, 12, 16), "float32"), ((16, 8, 3, 3), "float32")],
                                  strides=[3, 2], dilation=[2, 2], padding=[0, 0, 1, 2], kernel_layout="IOHW"), x, w)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    if shutil.which("gcc"):
        np.testing.assert_array_equal(out, tir.run(func, x, w, engine="c"))


def _nest(n, m, k, store, load):
    return tir.parse(f'''
# from tvm.script import tirx as T
@T.prim_func
def f(x: T.Buffer(({n * m * k},), "float32"), o: T.Buffer(({n * m},), "float32")):
    for i, j, r in T.grid({n}, {m}, {k}):
        c: T.let[T.int32] = {store}
        if r == 0:
            o[c] = T.float32(0.0)
        o[c] = o[c] + x[{load}]
''')


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 6), st.booleans())
def test_blockless_reduction_as_lanes_equals_the_walk(n, m, k, transposed):
    """Lanes over (i, j), r stepped in order: the same numbers as walking every iteration
    (vectorize=False), bit for bit; a store index that folds lanes together (c % 2) is walked."""
    store = f"j * {n} + i" if transposed else f"i * {m} + j"
    for store_index in (store, f"({store}) % 2"):
        func = _nest(n, m, k, store_index, f"(i * {m} + j) * {k} + r")
        x = np.random.default_rng(n * 100 + m * 10 + k).standard_normal(n * m * k).astype("float32")
        fast, walked = np.full(n * m, np.nan, "float32"), np.full(n * m, np.nan, "float32")
        interpret(func, x, fast)
        interpret(func, x, walked, vectorize=False)
        np.testing.assert_array_equal(fast, walked)


def test_a_view_of_a_written_buffer_is_walked():
    """o_1 views o's storage: reading it while writing o could meet another lane's element."""
    func = tir.parse('''
# from tvm.script import tirx as T
@T.prim_func
def f(x: T.Buffer((6,), "float32"), o: T.Buffer((6,), "float32")):
    o_1 = o.view(6)
    for i in range(6):
        o[i] = x[i] + o_1[5 - i]
''')
    x = np.arange(6, dtype="float32")
    fast, walked = np.ones(6, "float32"), np.ones(6, "float32")
    interpret(func, x, fast)
    interpret(func, x, walked, vectorize=False)
    np.testing.assert_array_equal(fast, walked)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.booleans())
def test_a_nest_with_an_inner_loop_runs_as_lanes_like_the_walk(n, k, guarded):
    """``for i: o[i] = 0; for r: o[i] += x[i, r]`` (the init outside the inner loop, as TVM's
    lowering leaves a reduction): lanes over i, r stepped; an inner loop under a condition
    that differs per lane is walked."""
    inner = f"for r in range({k}):\n            o[i] = o[i] + x[i * {k} + r]"
    if guarded:
        inner = f"if i % 2 == 0:\n            {inner.replace(chr(10), chr(10) + '    ')}"
    func = tir.parse(f'''
# from tvm.script import tirx as T
@T.prim_func
def f(x: T.Buffer(({n * k},), "float32"), o: T.Buffer(({n},), "float32")):
    for i in range({n}):
        o[i] = T.float32(1.0)
        {inner}
''')
    x = np.random.default_rng(n * 10 + k).standard_normal(n * k).astype("float32")
    fast, walked = np.zeros(n, "float32"), np.zeros(n, "float32")
    interpret(func, x, fast)
    interpret(func, x, walked, vectorize=False)
    np.testing.assert_array_equal(fast, walked)

"""A reduction whose init stores at its update's indices permuted among block variables of
extent 1 (TVM's ``transform_layout`` of a full reduction's unit intermediate rewrites the
init's indices alone): the same element, so the init is aligned with the update
(:func:`opinfo.unit_axes.align_unit_inits`) and the op is read. A permutation among variables
that take several values stores elsewhere and stays unread."""
from __future__ import annotations

import numpy as np

import opinfo
import tir

_MEAN = """
# from tvm.script import tirx as T

@T.prim_func(private=True, s_tir=True)
def mean(x: T.Buffer((T.int64(6), T.int64(8)), "float32"), T_divide: T.Buffer((), "float32")):
    T.func_attr({"tirx.noalias": True})
    x_red = T.sblock_alloc_buffer((T.int64(1), T.int64(1)))
    for ax0, ax1, k0_0, k0_1, k1 in T.grid(T.int64(1), T.int64(1), T.int64(3), T.int64(2), T.int64(8)):
        with T.sblock("x_red"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(1), T.int64(0))
            v_k0 = T.axis.reduce(T.int64(6), k0_0 * T.int64(2) + k0_1)
            v_k1 = T.axis.reduce(T.int64(8), k1)
            T.reads(x[v_k0, v_k1])
            T.writes(x_red[v_ax0, v_ax1])
            with T.init():
                x_red[v_ax1, v_ax0] = T.float32(0.0)
            x_red[v_ax0, v_ax1] = x_red[v_ax0, v_ax1] + x[v_k0, v_k1]
    with T.sblock("T_divide"):
        vi = T.axis.spatial(T.int64(1), T.int64(0))
        T.reads(x_red[T.int64(0), T.int64(0)])
        T.writes(T_divide[()])
        T_divide[()] = x_red[T.int64(0), T.int64(0)] / T.float32(48.0)
"""

_SQUARE = """
# from tvm.script import tirx as T

@T.prim_func(private=True, s_tir=True)
def mean(x: T.Buffer((T.int64(2), T.int64(2), T.int64(8)), "float32"), T_divide: T.Buffer((T.int64(2), T.int64(2)), "float32")):
    T.func_attr({"tirx.noalias": True})
    x_red = T.sblock_alloc_buffer((T.int64(2), T.int64(2)))
    for ax0, ax1, k in T.grid(T.int64(2), T.int64(2), T.int64(8)):
        with T.sblock("x_red"):
            v_ax0, v_ax1, v_k = T.axis.remap("SSR", [ax0, ax1, k])
            T.reads(x[v_ax0, v_ax1, v_k])
            T.writes(x_red[v_ax0, v_ax1])
            with T.init():
                x_red[v_ax1, v_ax0] = T.float32(0.0)
            x_red[v_ax0, v_ax1] = x_red[v_ax0, v_ax1] + x[v_ax0, v_ax1, v_k]
    for ax0, ax1 in T.grid(T.int64(2), T.int64(2)):
        with T.sblock("T_divide"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x_red[v_ax0, v_ax1])
            T.writes(T_divide[v_ax0, v_ax1])
            T_divide[v_ax0, v_ax1] = x_red[v_ax0, v_ax1] / T.float32(8.0)
"""


def test_init_permuted_among_unit_variables_is_the_reduction():
    func = tir.parse(_MEAN)
    x = np.random.default_rng(0).standard_normal((6, 8)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), x.mean(), rtol=1e-5)
    (op,) = opinfo.analyze(func).ops
    assert (op.name, dict(op.attrs)) == ("mean", {"axis": (0, 1), "keepdims": False})


def test_init_permuted_among_variables_with_several_values_is_not_read():
    # the init of (0, 1) stores at (1, 0): (0, 1) accumulates onto what storage held
    func = tir.parse(_SQUARE)
    assert opinfo.analyze(func).ops == ()


"""An agreement of two runs whose outputs all overflowed confirms nothing
(:func:`opinfo.verify.saturated`). Case: TVM 0.27's float16 ``prod`` of an (n, 9) tensor
under dlight, as printed below. With the update's thread predicate widened to two threads
the function multiplies every term in twice (prod squared); on verify's inputs (normal
draws times 3) the product of 45 terms is inf either way, and inf == inf passed for a
confirmation. Such a draw is now retried with inputs near 1."""
from __future__ import annotations

import numpy as np

import tir
from opinfo import analyze, verify_op
from opinfo.verify import saturated

TEXT = '# from typing import TypeVar\n# from tvm.script import ir as I\n# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n# from tvm.script import relax as R\n\nn = TypeVar("n")\n@I.ir_module\nclass Module:\n    @T.prim_func(private=True, s_tir=True)\n    def prod(x: T.Buffer((n, T.int64(9)), "float16"), x_red: T.Buffer((), "float16")):\n        T.func_attr({"tirx.is_scheduled": True, "tirx.noalias": True})\n        # with T.sblock("root"):\n        for ax0_fused_0 in T.thread_binding(T.int64(1), thread="blockIdx.x"):\n            for ax0_fused_1 in T.thread_binding(T.int64(1024), thread="threadIdx.x"):\n                with T.sblock("x_red_init"):\n                    v0 = T.axis.spatial(T.int64(1), T.int64(0))\n                    T.where(ax0_fused_0 * T.int64(1024) + ax0_fused_1 < T.int64(1))\n                    T.reads()\n                    T.writes(x_red[()])\n                    x_red[()] = T.float16(1.0)\n                for ax1, ax2 in T.grid(n, T.int64(9)):\n                    with T.sblock("x_red_update"):\n                        v0 = T.axis.spatial(T.int64(1), T.int64(0))\n                        v1, v2 = T.axis.remap("RR", [ax1, ax2])\n                        T.where(ax0_fused_0 * T.int64(1024) + ax0_fused_1 < T.int64(1))\n                        T.reads(x_red[()], x[v1, v2])\n                        T.writes(x_red[()])\n                        x_red[()] = x_red[()] * x[v1, v2]\n\n    @R.function\n    def main(x: R.Tensor((n, 9), dtype="float16")) -> R.Tensor((), dtype="float16"):\n        cls = Module\n        with R.dataflow():\n            lv = R.call_tir(cls.prod, (x,), out_ty=R.Tensor((), dtype="float16"))\n            gv: R.Tensor((), dtype="float16") = lv\n            R.output(gv)\n        return gv'

ONE_THREAD = "ax0_fused_1 < T.int64(1))\n                        T.reads(x_red[()], x[v1, v2])"
TWO_THREADS = "ax0_fused_1 < T.int64(2))\n                        T.reads(x_red[()], x[v1, v2])"


def _prod(text: str):
    return dict(tir.parse(text).prim_funcs())["prod"]


def test_saturated_outputs():
    assert saturated([np.full((3,), np.inf, dtype="float16")])
    assert saturated([np.array([np.inf, -np.inf, np.nan], dtype="float32")])
    assert not saturated([np.array([np.inf, 1.0], dtype="float16")])
    assert not saturated([np.zeros((2,), dtype="float32")])
    assert not saturated([np.full((2,), 7, dtype="int32")])
    assert not saturated([])


def test_float16_prod_named():
    (op,) = analyze(_prod(TEXT)).ops
    assert op.name == "prod" and tuple(op.attrs["axis"]) == (0, 1)


def test_product_taken_twice_is_refused():
    assert TEXT.count(ONE_THREAD) == 1
    func = _prod(TEXT.replace(ONE_THREAD, TWO_THREADS))
    info = analyze(func)
    assert not info.ops and info.refused is not None
    op = analyze(_prod(TEXT)).ops[0]
    assert verify_op(func, op) is not True


LOG_SUM = """
@T.prim_func
def fused_log_sum(x: T.Buffer((4, 8), "float32"), red: T.Buffer((4, 1), "float32")):
    inter = T.alloc_buffer((4, 8))
    for i0, i1 in T.grid(4, 8):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            inter[v_i0, v_i1] = T.log(x[v_i0, v_i1]){extra}
    for ax0, ax1, k1 in T.grid(4, 1, 8):
        with T.block("red"):
            v_ax0, v_ax1, v_k1 = T.axis.remap("SSR", [ax0, ax1, k1])
            with T.init():
                red[v_ax0, v_ax1] = T.float32(0.0)
            red[v_ax0, v_ax1] = red[v_ax0, v_ax1] + inter[v_ax0, v_k1]
"""


def test_fused_op_whose_values_all_overflow_is_checked_near_one():
    # a row of normal draws holds a negative value: every sum of logs is NaN, which two
    # runs agree on whatever they computed; the sum is checked again on positive values
    from opinfo.verify import verify_fused

    func = tir.parse(LOG_SUM.format(extra=""))
    ops = analyze(func).ops
    assert [op.name for op in ops] == ["log", "sum"]
    assert verify_fused(func, ops) == [True, True]
    # the intermediate is log(x) + 1, not log(x): refuted; the sum of it is still a sum
    other = tir.parse(LOG_SUM.format(extra=" + T.float32(1.0)"))
    assert verify_fused(other, ops) == [False, True]

"""reverse_sequence recognised by running the PrimFunc TVM 0.27 legalizes it to."""
from __future__ import annotations

import opinfo
import tir

REVSEQ = '''# from tvm.script import tir as T
@T.prim_func(private=True)
def reverse_sequence(x: T.Buffer((T.int64(3), T.int64(5), T.int64(2)), "float32"), y: T.Buffer((T.int64(3),), "int64"), T_reverse_sequence: T.Buffer((T.int64(3), T.int64(5), T.int64(2)), "float32")):
    T.func_attr({"tir.noalias": True})
    for ax0, ax1, ax2 in T.grid(T.int64(3), T.int64(5), T.int64(2)):
        with T.block("T_reverse_sequence"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(x[v_ax0, T.int64(0):T.int64(5), v_ax2], y[v_ax0])
            T.writes(T_reverse_sequence[v_ax0, v_ax1, v_ax2])
            T_reverse_sequence[v_ax0, v_ax1, v_ax2] = x[v_ax0, T.if_then_else(y[v_ax0] <= T.int64(1) or y[v_ax0] <= v_ax1, v_ax1, T.if_then_else(T.int64(5) < y[v_ax0], T.int64(4) - v_ax1, y[v_ax0] - v_ax1 - T.int64(1))), v_ax2]
'''


def test_reverse_sequence_axes():
    (op,) = opinfo.analyze(tir.parse(REVSEQ)).ops
    assert op.name == "reverse_sequence" and dict(op.attrs) == {"seq_axis": 1, "batch_axis": 0}
    assert [(o.role, o.param) for o in op.operands] == [("data", 0), ("seq_lengths", 1)]


def test_lengths_past_the_axis_not_clamped_is_not_reverse_sequence():
    # without TVM's clamp to the axis length, lengths of 6 and more read out of order
    text = REVSEQ.replace("T.int64(4) - v_ax1", "y[v_ax0] - v_ax1 - T.int64(1)")
    assert opinfo.analyze(tir.parse(text)).ops == ()


def test_a_plain_copy_is_not_reverse_sequence():
    text = REVSEQ.replace(
        "x[v_ax0, T.if_then_else(y[v_ax0] <= T.int64(1) or y[v_ax0] <= v_ax1, v_ax1, T.if_then_else(T.int64(5) < y[v_ax0], T.int64(4) - v_ax1, y[v_ax0] - v_ax1 - T.int64(1))), v_ax2]",
        "x[v_ax0, v_ax1, v_ax2] + T.Cast(\"float32\", y[v_ax0])")
    assert all(op.name != "reverse_sequence" for op in opinfo.analyze(tir.parse(text)).ops)

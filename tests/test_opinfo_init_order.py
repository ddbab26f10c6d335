"""Decomposed reduction inits are merged back only where they run before every update of
their element (opinfo.init_order)."""
from __future__ import annotations

import tir
import opinfo

# an init nest of its own before the update's, loops permuted (transform_block_layout),
# as TVM prints a decomposed matmul in the h47_fri corpus
OWN_NEST = '''
@T.prim_func(private=True)
def matmul(x: T.Buffer((T.int64(2), T.int64(3), T.int64(5)), "float32"), y: T.Buffer((T.int64(2), T.int64(5), T.int64(4)), "float32"), matmul: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    for ax0, ax1, ax2 in T.grid(T.int64(3), T.int64(4), T.int64(2)):
        with T.block("matmul_init"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads()
            T.writes(matmul[v2, v0, v1])
            matmul[v2, v0, v1] = T.float32(0.0)
    for i0, i1, i2, k in T.grid(T.int64(2), T.int64(3), T.int64(4), T.int64(5)):
        with T.block("matmul_update"):
            v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
            T.reads(matmul[v_i0, v_i1, v_i2], x[v_i0, v_i1, v_k], y[v_i0, v_k, v_i2])
            T.writes(matmul[v_i0, v_i1, v_i2])
            matmul[v_i0, v_i1, v_i2] = matmul[v_i0, v_i1, v_i2] + x[v_i0, v_i1, v_k] * y[v_i0, v_k, v_i2]
'''

HEADER = "from tvm.script import tir as T\n"


def _names(text: str) -> list:
    func = tir.parse(HEADER + text)
    return [op.name for op in opinfo.analyze(func).ops]


def test_init_nest_of_its_own_in_any_loop_order_is_merged():
    assert _names(OWN_NEST) == ["matmul"]


def test_init_nest_cut_short_abstains():
    # the init's loop over 3 rows runs 2: row 2 keeps whatever the buffer held
    short = OWN_NEST.replace("for ax0, ax1, ax2 in T.grid(T.int64(3),", "for ax0, ax1, ax2 in T.grid(T.int64(2),")
    assert short != OWN_NEST
    assert _names(short) == []


def test_init_nest_after_a_guard_abstains():
    guarded = OWN_NEST.replace('            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])\n',
                               '            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])\n'
                               '            T.where(ax1 < T.int64(3))\n')
    assert guarded != OWN_NEST
    assert _names(guarded) == []

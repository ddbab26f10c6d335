"""A chain of cache copies (``cache_read`` into shared, then ``reindex`` of that cache, as
TVM prints it after thread binding): every copy is dropped, not only the first, so the
reduction is read alone -- the second copy used to be left over and read as an identity
``broadcast_to`` fused before the ``sum``."""
from __future__ import annotations

import numpy as np

import tir
from opinfo import analyze
from opinfo.normalize import normalize

CHAIN = '''
# from tvm.script import tir as T
@T.prim_func
def main(x: T.Buffer((T.int64(9), T.int64(6), T.int64(9)), "float32"), x_red: T.Buffer((T.int64(1), T.int64(6), T.int64(1)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    x_shared = T.alloc_buffer((T.int64(9), T.int64(6), T.int64(9)), scope="shared")
    x_shared_reindex = T.alloc_buffer((T.int64(9), T.int64(6), T.int64(9)), scope="shared")
    for ax0_ax1_0_fused_ax1_1_ax2_fused_0 in T.thread_binding(T.int64(122), thread="blockIdx.x"):
        for ax0_ax1_0_fused_ax1_1_ax2_fused_1 in T.thread_binding(T.int64(4), thread="threadIdx.x"):
            with T.block("x_shared"):
                v0 = T.axis.spatial(T.int64(9), (ax0_ax1_0_fused_ax1_1_ax2_fused_0 * T.int64(4) + ax0_ax1_0_fused_ax1_1_ax2_fused_1) // T.int64(54))
                v1 = T.axis.spatial(T.int64(6), (ax0_ax1_0_fused_ax1_1_ax2_fused_0 * T.int64(4) + ax0_ax1_0_fused_ax1_1_ax2_fused_1) % T.int64(54) // T.int64(9))
                v2 = T.axis.spatial(T.int64(9), (ax0_ax1_0_fused_ax1_1_ax2_fused_0 * T.int64(4) + ax0_ax1_0_fused_ax1_1_ax2_fused_1) % T.int64(9))
                T.where(ax0_ax1_0_fused_ax1_1_ax2_fused_0 * T.int64(4) + ax0_ax1_0_fused_ax1_1_ax2_fused_1 < T.int64(486))
                T.reads(x[v0, v1, v2])
                T.writes(x_shared_reindex[v0, v1, v2])
                x_shared_reindex[v0, v1, v2] = x[v0, v1, v2]
    for ax0, ax1, ax2 in T.grid(T.int64(9), T.int64(6), T.int64(9)):
        with T.block("x_shared_reindex"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(x_shared_reindex[v0, v1, v2])
            T.writes(x_shared[v0, v1, v2])
            x_shared[v0, v1, v2] = x_shared_reindex[v0, v1, v2]
    for ax0_ax1_0_ax1_1_fused_0 in T.thread_binding(T.int64(1), thread="blockIdx.x"):
        for ax0_ax1_0_ax1_1_fused_1 in T.thread_binding(T.int64(32), thread="threadIdx.x"):
            for ax2, k0 in T.grid(T.int64(1), T.int64(9)):
                with T.block("x_red_o"):
                    v_ax0_o = T.axis.spatial(T.int64(1), T.int64(0))
                    v_ax1_o = T.axis.spatial(T.int64(6), ax0_ax1_0_ax1_1_fused_0 * T.int64(32) + ax0_ax1_0_ax1_1_fused_1)
                    v_ax2_o, v_k0_o = T.axis.remap("SR", [ax2, k0])
                    v_k2_o = T.axis.reduce(T.int64(1), T.int64(0))
                    T.where(ax0_ax1_0_ax1_1_fused_0 * T.int64(32) + ax0_ax1_0_ax1_1_fused_1 < T.int64(6))
                    T.reads(x_shared[v_k0_o, v_ax1_o, T.int64(0):T.int64(9)])
                    T.writes(x_red[v_ax0_o, v_ax1_o, v_ax2_o])
                    with T.init():
                        with T.block("x_red_init"):
                            T.reads()
                            T.writes(x_red[v_ax0_o, v_ax1_o, v_ax2_o])
                            x_red[v_ax0_o, v_ax1_o, v_ax2_o] = T.float32(0.0)
                    for k2 in range(T.int64(9)):
                        with T.block("x_red"):
                            v_k2_i = T.axis.reduce(T.int64(9), k2)
                            T.reads(x_red[v_ax0_o, v_ax1_o, v_ax2_o], x_shared[v_k0_o, v_ax1_o, v_k2_i])
                            T.writes(x_red[v_ax0_o, v_ax1_o, v_ax2_o])
                            x_red[v_ax0_o, v_ax1_o, v_ax2_o] = x_red[v_ax0_o, v_ax1_o, v_ax2_o] + x_shared[v_k0_o, v_ax1_o, v_k2_i]

'''


def _func():
    return tir.parse(CHAIN)


def test_every_copy_of_a_cache_chain_is_dropped():
    func = _func()
    names = [b.name for b in normalize(func).blocks()]
    assert "x_shared" not in names and "x_shared_reindex" not in names
    assert "x_red" in names


def test_cache_chain_reads_as_one_sum():
    # keepdims: collapse_sum_to has the same loops, so the name is the importers' convention
    assert analyze(_func()).ops == ()
    ops = analyze(_func(), conventions=True).ops
    assert [op.name for op in ops] == ["sum"] and ops[0].assumed == ("op",)
    assert ops[0].to_json()["attrs"] == {"axis": [0, 2], "keepdims": True}
    assert ops[0].operands[0].buffer == "x"


def test_cache_chain_computes_the_sum():
    x = np.random.default_rng(0).standard_normal((9, 6, 9)).astype("float32")
    got = tir.run(_func(), x)
    np.testing.assert_allclose(got, x.sum(axis=(0, 2), keepdims=True), rtol=1e-5)

"""Loop transformations of TVM 0.27's ``s_tir.Schedule`` first met in the s10 corpora:
``pad_einsum`` (producer/op/consumer put back), out-of-bounds stores (abstain), ..."""
from tir.parser import parse

from opinfo.api import analyze
from opinfo.coverage import out_of_bounds_writes


def _func(src: str):
    return parse(src)


def _ops(src: str):
    return [(op.name, dict(op.attrs)) for op in analyze(_func(src)).ops]


# TVM 0.27's pad_einsum of cos over (7, 6, 8) with padding (1, 8, 16), then merge of the
# three outer loops (as printed)
PAD_EINSUM_COS = '''
@T.prim_func(private=True)
def tir_cos(x: T.Buffer((T.int64(7), T.int64(6), T.int64(8)), "float32"), compute: T.Buffer((T.int64(7), T.int64(6), T.int64(8)), "float32")):
    T.func_attr({"tir.noalias": True})
    x_pad = T.alloc_buffer((T.int64(7), T.int64(8), T.int64(16)))
    compute_pad = T.alloc_buffer((T.int64(7), T.int64(8), T.int64(16)))
    for i0_m_m in range(T.int64(7)):
        for i1, i2 in T.grid(T.int64(8), T.int64(16)):
            with T.block("x_pad"):
                v0, v1, v2 = T.axis.remap("SSS", [i0_m_m, i1, i2])
                T.reads(x[v0, v1, v2])
                T.writes(x_pad[v0, v1, v2])
                x_pad[v0, v1, v2] = T.if_then_else(v1 < T.int64(6) and v2 < T.int64(8), x[v0, v1, v2], T.float32(0.0))
        for i1, i2_0, i2_1 in T.grid(T.int64(8), T.int64(2), T.int64(4)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0_m_m, i1])
                v_i2 = T.axis.spatial(T.int64(16), i2_0 * T.int64(4) + i2_1)
                T.reads(x_pad[v_i0, v_i1, v_i2])
                T.writes(compute_pad[v_i0, v_i1, v_i2])
                compute_pad[v_i0, v_i1, v_i2] = T.cos(x_pad[v_i0, v_i1, v_i2])
        for i1, i2 in T.grid(T.int64(6), T.int64(8)):
            with T.block("compute_pad"):
                v0, v1, v2 = T.axis.remap("SSS", [i0_m_m, i1, i2])
                T.reads(compute_pad[v0, v1, v2])
                T.writes(compute[v0, v1, v2])
                compute[v0, v1, v2] = compute_pad[v0, v1, v2]
'''


def test_pad_einsum_of_an_elementwise_op_is_the_op():
    assert _ops(PAD_EINSUM_COS) == [("cos", {})]


def test_pad_einsum_reading_a_padded_point_is_not_undone():
    # the op reads x_pad one column further: a padded zero reaches the output, no cos of x
    src = PAD_EINSUM_COS.replace("T.cos(x_pad[v_i0, v_i1, v_i2])", "T.cos(x_pad[v_i0, v_i1, T.int64(15) - v_i2])")
    assert _ops(src) != [("cos", {})]


# pad_einsum of a sum as TVM 0.27 prints it: the reduction's spatial domain padded to 8, its
# output (8, 3) not -- the block stores past the buffer
PAD_EINSUM_SUM = '''
@T.prim_func(private=True)
def sum(x: T.Buffer((T.int64(8), T.int64(3), T.int64(2)), "float32"), x_red: T.Buffer((T.int64(8), T.int64(3)), "float32")):
    T.func_attr({"tir.noalias": True})
    x_pad = T.alloc_buffer((T.int64(8), T.int64(8), T.int64(4)))
    for i0, i1, i2 in T.grid(T.int64(8), T.int64(8), T.int64(4)):
        with T.block("x_pad"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            x_pad[v0, v1, v2] = T.if_then_else(v1 < T.int64(3) and v2 < T.int64(2), x[v0, v1, v2], T.float32(0.0))
    for ax0, ax1, k2 in T.grid(T.int64(8), T.int64(8), T.int64(4)):
        with T.block("x_red"):
            v_ax0, v_ax1, v_k2 = T.axis.remap("SSR", [ax0, ax1, k2])
            with T.init():
                x_red[v_ax0, v_ax1] = T.float32(0.0)
            x_red[v_ax0, v_ax1] = x_red[v_ax0, v_ax1] + x_pad[v_ax0, v_ax1, v_k2]
'''


def test_store_past_the_buffer_abstains():
    assert out_of_bounds_writes(_func(PAD_EINSUM_SUM))
    assert _ops(PAD_EINSUM_SUM) == []
    assert not out_of_bounds_writes(_func(PAD_EINSUM_COS))

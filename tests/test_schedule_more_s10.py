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


# loop_partition(i0, [7, None]) of abs over (9, 4), as TVM 0.27 prints it
PARTITIONED_ABS = '''
@T.prim_func(private=True)
def tir_abs(x: T.Buffer((T.int64(9), T.int64(4)), "float32"), compute: T.Buffer((T.int64(9), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        with T.block("compute_i0_common"):
            T.reads()
            T.writes()
            with T.block("compute_i00_partition"):
                T.reads()
                T.writes()
                for i00, i1 in T.grid(T.int64(7), T.int64(4)):
                    with T.block("compute_i00"):
                        v_i0, v_i1 = T.axis.remap("SS", [i00, i1])
                        T.reads(x[T.int64(0):T.int64(7), T.int64(0):T.int64(4)])
                        T.writes(compute[T.int64(0):T.int64(7), T.int64(0):T.int64(4)])
                        compute[v_i0, v_i1] = T.fabs(x[v_i0, v_i1])
            with T.block("compute_i01_partition"):
                T.reads()
                T.writes()
                for i01 in range(T.int64(7), T.int64(9)):
                    for i1 in range(T.int64(4)):
                        with T.block("compute_i01"):
                            v_i0, v_i1 = T.axis.remap("SS", [i01, i1])
                            T.reads(x[T.int64(7):T.int64(9), T.int64(0):T.int64(4), T.int64(0):T.int64(1)])
                            T.writes(compute[T.int64(7):T.int64(9), T.int64(0):T.int64(4)])
                            compute[v_i0, v_i1] = T.fabs(x[v_i0, v_i1])
'''


def test_loop_partition_copies_merge_back():
    # (the second copy's read region has a dimension too many, as TVM prints some: parsed)
    from opinfo.loop_partition import merge_partitions

    merged = merge_partitions(_func(PARTITIONED_ABS))
    assert [b.name for b in merged.blocks()] == ["compute"]
    assert _ops(PARTITIONED_ABS) == [("abs", {})]


def test_loop_partition_copies_with_a_gap_are_not_merged():
    src = PARTITIONED_ABS.replace("range(T.int64(7), T.int64(9))", "range(T.int64(8), T.int64(10))")
    src = src.replace("(T.int64(9), T.int64(4))", "(T.int64(10), T.int64(4))")
    assert _ops(src) == []  # row 7 is never written


def test_loop_partition_copies_computing_differently_are_not_merged():
    head, tail = PARTITIONED_ABS.rsplit("T.fabs(x[v_i0, v_i1])", 1)
    src = head + "x[v_i0, v_i1]" + tail  # the second copy copies
    assert _ops(src) == []


def test_cache_index_unit_stride_of_a_rank_2_buffer_parses():
    src = PARTITIONED_ABS.replace('    with T.block("root"):\n        T.reads()\n        T.writes()\n',
                                  '    with T.block("root"):\n        T.reads()\n        T.writes()\n'
                                  '        idx = T.alloc_buffer((T.int64(9), T.int64(4)), "bool", strides=(1,), elem_offset=0)\n')
    assert _ops(src) == [("abs", {})]

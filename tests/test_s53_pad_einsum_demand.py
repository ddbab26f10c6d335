"""Session 53: ``pad_einsum`` followed by ``compute_at``/``decompose_reduction``, read a second
time with pad_einsum's blocks cut to what the outputs need.

``compute_at`` after ``pad_einsum`` can move an op into its consumer's loops so that the
consumer reads the padded result (``compute_pad``) directly, the crop then storing to a buffer
nothing reads, and the op runs over part of its padded domain only: no pad/op/crop triple is
left for ``unpad_einsum``. When the first reading understands nothing, ``recognize_ops``
normalizes once more with :func:`opinfo.demand.restrict_pads` first (blocks storing to
pad_einsum's buffers cut to the iterations the outputs need): the pads are then read only
where they copy, and read through.

Fixtures (TVM 0.27, ``tools/tvm_oracle`` with OPINFO_SCHEDULE=pad_einsum,cache,inline,
compute_at,fuse,decompose,reverse_inline): ``silu`` whose sigmoid is computed at the multiply's
rows, a ``max_pool2d`` over a symbolic batch whose init (decomposed) covers more of the padded
accumulator than its update, ``variance`` whose mean and squared-difference sum are padded;
with OPINFO_SCHEDULE=pad_einsum,cache_index,read_at,write_at,hide_access,annotate,compute_at:
``selu`` whose exp reads its padded input through a ``read_at`` copy (read through, the copy no
longer fills the padding the exp still runs over: the normalized function is cut and
normalized again), ``silu`` over a symbolic batch writing its padded product to a local cache
(``T_multiply_pad_local``: a cache of a pad_einsum buffer is one of them too).
"""
from __future__ import annotations

import opinfo
from opinfo.demand import restrict_pads
from opinfo.normalize import as_lowered, pads_cut_readings
from tests.fixture_util import assert_same_values, fixture_func, fixture_ops
from tir import topi

SILU = "s53_pad_einsum_compute_at_silu"
POOL = "s53_pad_einsum_decomposed_max_pool2d_symbolic"
VARIANCE = "s53_pad_einsum_variance"
SELU = "s53_pad_einsum_read_at_selu"
SILU_LOCAL = "s53_pad_einsum_local_cache_silu_symbolic"


def test_consumer_reading_the_padded_result_named():
    assert fixture_ops(SILU) == [("nn.silu", {})]


def test_silu_fixture_computes_the_op():
    plain = topi.lower("nn.silu", [((2, 2), "float32")])
    assert_same_values(fixture_func(SILU), plain)


def test_cut_function_computes_what_the_fixture_does():
    func = fixture_func(SILU)
    cut = restrict_pads(as_lowered(func))
    assert cut is not as_lowered(func)
    assert_same_values(func, cut)


def test_consumer_reading_padding_is_not_named():
    # the multiply reads the padded input one column on: half its reads are the padding's zeros
    old = "T_multiply[v_ax0, v_ax1] = x_pad[v_ax0, v_ax1] * compute_pad[v_ax0, v_ax1]"
    new = "T_multiply[v_ax0, v_ax1] = x_pad[v_ax0, v_ax1 + T.int64(1)] * compute_pad[v_ax0, v_ax1]"
    assert fixture_ops(SILU, old, new) == []


def test_init_covering_more_than_the_update_named():
    ops = fixture_ops(POOL)
    assert [name for name, _ in ops] == ["nn.max_pool2d"]
    got = ops[0][1]
    assert (tuple(got["pool_size"]), tuple(got["strides"]), tuple(got["padding"]), got["layout"]) == \
        ((2, 1), (2, 2), (1, 0, 1, 0), "NHWC")


def test_padded_statistics_named():
    ops = fixture_ops(VARIANCE)
    assert [(name, {k: list(v) if isinstance(v, tuple) else v for k, v in a.items()}) for name, a in ops] == \
        [("variance", {"axis": [0], "keepdims": True})]


def test_nothing_to_cut_is_no_second_reading():
    # a plain lowering holds no pad_einsum buffer: no second reading is made
    func = topi.lower("nn.silu", [((2, 2), "float32")])
    assert list(pads_cut_readings(func)) == []
    assert restrict_pads(func) is func


def test_analyze_reports_the_fixture():
    info = opinfo.analyze(fixture_func(SILU))
    assert (info.kind, [op.name for op in info.ops]) == ("elemwise", ["nn.silu"])


def test_normalized_function_cut_again_named():
    assert fixture_ops(SELU) == [("nn.selu", {})]


def test_selu_fixture_computes_the_op():
    plain = topi.lower("nn.selu", [((4,), "float32")])
    assert_same_values(fixture_func(SELU), plain)


def test_reading_past_what_the_exp_wrote_is_not_named():
    # the subtract reads the exp's results four elements on: never written
    old = "T_subtract[v_ax0] = compute_pad[v_ax0] - T.float32(1.0)"
    new = "T_subtract[v_ax0] = compute_pad[v_ax0 + T.int64(4)] - T.float32(1.0)"
    assert fixture_ops(SELU, old, new) == []


def test_cache_of_a_padded_result_cut_named():
    assert fixture_ops(SILU_LOCAL) == [("nn.silu", {})]


def test_padded_cache_is_a_pad_artefact():
    # normalized, the crop reads the local cache of the padded product (its copy read through)
    from opinfo.demand import _pad_artefacts
    from opinfo.normalize import normalize
    func = normalize(fixture_func(SILU_LOCAL))
    found = {b.name for b in func.root_block.alloc_buffers if id(b) in _pad_artefacts(func)}
    assert {"T_multiply_pad_local", "compute_pad_pad"} <= found
    assert "compute" not in found

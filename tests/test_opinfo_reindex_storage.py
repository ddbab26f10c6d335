"""Functions scheduled with TVM's reindex, set_scope and storage_align (fixtures printed by
TVM 0.27): the reindex copy (a global intermediate copied out whole) is removed by
:func:`opinfo.normalize.drop_cache_copies`, its block's compute tag read through the
``_reindex`` suffix; a shared/local scope and a ``buffer_dim_align`` annotation change
nothing recognised."""
from __future__ import annotations

import pytest
import tir
from tir.verifier import verify

import opinfo
from opinfo.normalize import normalize
from opinfo.tags import tag
from fixture_util import assert_same_values, fixture_func

CASES = [
    # fixture, op, attrs; what the schedule left
    ("reindex_reshape", "reshape", {"shape": [1, 36, 36]}),  # tirx; copy into the output, tag T_reshape_reindex
    ("reindex_index_tensor_symbolic", "index_tensor", {}),  # tir; was named take (the copy hid the tag)
    ("reindex_batch_norm", "nn.batch_norm", {"axis": 1, "epsilon": 0.001}),  # copies between global intermediates
    ("reindex_repeat", "repeat", {"repeats": 3, "axis": None}),  # tir; two reindex copies
    ("storage_avg_pool3d", "nn.avg_pool3d", {"pool_size": [3, 3, 3], "strides": [1, 2, 1],
                                             "padding": [0, 0, 1, 1, 0, 0], "dilation": [1, 2, 2]}),  # local/shared, dim_align
    ("storage_conv2d_symbolic", "nn.conv2d", {"strides": [1, 2], "dilation": [2, 2],
                                              "data_layout": "NHWC", "kernel_layout": "HWIO"}),  # shared pad_temp
]


def _reindex_copies(func) -> int:
    return sum(1 for b in func.blocks() if b.name.endswith("_reindex"))


@pytest.mark.parametrize("name, op, attrs", CASES)
def test_scheduled_op_recognised(name, op, attrs):
    func = fixture_func(name)
    flat = normalize(func)
    verify(flat)
    assert _reindex_copies(flat) == 0
    assert len(list(flat.blocks())) <= len(list(func.blocks())) - _reindex_copies(func)
    (got, *_) = opinfo.analyze(func).ops
    assert got.name == op
    j = got.to_json()["attrs"]
    assert {k: j[k] for k in attrs} == attrs


@pytest.mark.parametrize("name", ["reindex_reshape", "reindex_repeat", "storage_avg_pool3d"])
def test_normalized_values(name):
    func = fixture_func(name)
    assert_same_values(func, normalize(func))


def test_reindex_copy_normalizes_to_the_unscheduled_blocks():
    """argmin's reduction reindexed (it writes two buffers): every copy goes -- the reindex
    copies and then argmin's own copy of the index out of its temporary, which the
    unscheduled argmin loses too -- and the reduction is left, as in the unscheduled form."""
    flat = normalize(fixture_func("reindex_argmin_symbolic"))
    plain = normalize(fixture_func("arg_argmin_plain"))
    assert [b.name for b in flat.blocks()] == [b.name for b in plain.blocks()] == ["x_red_temp"]


def test_reindex_tag():
    assert tag("T_reshape_reindex") == "T_reshape"
    assert tag("T_transpose_reindex_1") == "T_transpose"


COPY_READ_TWICE = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((3, 5), "float32"), z: T.Buffer((3, 5), "float32"), w: T.Buffer((3, 5), "float32")):
    t = T.alloc_buffer((3, 5))
    for i, j in T.grid(3, 5):
        with T.block("T_exp"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            t[v_i, v_j] = T.exp(x[v_i, v_j])
    for i, j in T.grid(3, 5):
        with T.block("T_exp_reindex"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            z[v_i, v_j] = t[v_i, v_j]
    for i, j in T.grid(3, 5):
        with T.block("T_add"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            w[v_i, v_j] = t[v_i, v_j] + T.float32(1)
"""


def test_copy_of_an_intermediate_read_elsewhere_stays():
    """The intermediate is read by another block too: the copy is not only a reindex's."""
    func = tir.parse(COPY_READ_TWICE)
    assert len(list(normalize(func).blocks())) == 3

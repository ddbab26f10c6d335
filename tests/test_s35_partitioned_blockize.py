"""``loop_partition`` of a loop above a blockized block (TVM 0.27).

Each copy of the nest gives the inner block's variable the partition's range as its
domain -- ``T.axis.spatial(5, ax1_1)`` in the first copy, ``T.axis.spatial((5, 8), ax1_1)``
in the second -- while its binding runs the same tile, ``range(2)``, in both. The copies do
not partition that variable: a copy whose binding leaves its declared domain shows it, and
the merged block variable is what the binding runs (a spatial domain is only a
declaration; TVM's code substitutes the binding). Merged that way, the blockized add and
matmul (whose init block carries the quirk) are read; copies whose bindings run different
ranges outside their domains are not merged.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.loop_partition import merge_partitions
from tests.fixture_util import fixture_func, replaced
from tir.interp import interpret

ADD = "s35_blockized_add_partitioned"
MATMUL = "s35_blockized_matmul_partitioned"


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _inner_domains(func) -> list:
    return [(int(iv.dom.min.value), int(iv.dom.extent.value))
            for b in func.blocks() for iv in b.iter_vars if iv.var.name.startswith(("v_ax1_i", "v_i1_i"))]


def test_partitioned_blockized_ops_are_read():
    assert _ops(fixture_func(ADD)) == [("add", {})]
    (matmul,) = _ops(fixture_func(MATMUL))
    assert matmul[0] == "matmul"
    assert opinfo.analyze(fixture_func(ADD)).kind == "opaque"  # TVM's answer for nested blocks


def test_merged_inner_variable_runs_its_tile():
    assert _inner_domains(merge_partitions(fixture_func(ADD))) == [(0, 2)]
    assert sorted(set(_inner_domains(merge_partitions(fixture_func(MATMUL))))) == [(0, 2)]


def test_fixtures_compute_their_op():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)).astype("float32"), rng.standard_normal((8, 6)).astype("float32")
    out = np.zeros((8, 6), "float32")
    interpret(fixture_func(ADD), x, y, out)
    np.testing.assert_allclose(out, x + y)
    a, b = rng.standard_normal((8, 4)).astype("float32"), rng.standard_normal((4, 6)).astype("float32")
    out = np.zeros((8, 6), "float32")
    interpret(fixture_func(MATMUL), a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_copies_running_different_ranges_are_not_merged():
    # the outer block's row variable leaves each copy's declared domain (bound one past the
    # partitioned loop) and runs a different range in each copy: no one range stands for it
    text = replaced(ADD, "v_ax0_o = T.axis.spatial(T.int64(8), ax00)", "v_ax0_o = T.axis.spatial(T.int64(5), ax00 + T.int64(1))")
    text = text.replace("v_ax0_o = T.axis.spatial(T.int64(8), ax01)",
                        "v_ax0_o = T.axis.spatial((T.int64(5), T.int64(8)), ax01 - T.int64(1))")
    (_, func), = tir.parse(text).prim_funcs()
    assert merge_partitions(func) is func  # nothing merged
    assert _ops(func) == []

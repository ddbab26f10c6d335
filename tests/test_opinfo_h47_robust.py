"""Robustness fixes found on fresh TVM 0.27 corpora (seeds 9801-9804).

* ``rfactor`` whose partial block was then ``reindex``-ed writes a reindex buffer that a
  copy block hands to the final block: the copy is removed first, the rfactor pair is then
  merged (before, the partial copy stayed and was named an identity ``broadcast_to`` in
  front of the reduction: two ops for one).
* The interpreter analyses the text of a nest that is entered once per iteration of an
  outer loop (a blockized partial block under its outer block) only once.
"""
from __future__ import annotations

import numpy as np
import pytest

import tir
import tir.interp_nest as interp_nest
from tir.interp import interpret

import opinfo
from opinfo.normalize import normalize
from fixture_util import assert_same_values, fixture_func


@pytest.mark.parametrize("name, axis", [
    ("rfactor_reindex_max", [0]),  # (8,) -> (): the final block also writes a reindex copy
    ("rfactor_reindex_max_symbolic", [0]),  # (n, 6) -> (6,), partial block bound to threads
])
def test_rfactor_partial_through_reindex_copy(name, axis):
    func = fixture_func(name)
    (got,) = opinfo.analyze(func).ops
    assert got.name == "max"
    assert got.to_json()["attrs"] == {"axis": axis, "keepdims": False}
    merged = normalize(func)
    assert [b.name for b in merged.blocks() if b.name != "root"] == ["x_red"]


def test_rfactor_reindex_merge_keeps_values():
    func = fixture_func("rfactor_reindex_max")
    assert_same_values(func, normalize(func))


def test_fused_copy_into_reindexed_reduction_stays_two_ops():
    """Without rfactor's ``_rf`` name the copy in front of the reduction is an op of a fused
    kernel: the merge must not happen after the reindex copy is gone either."""
    func = fixture_func("rfactor_reindex_max", lambda t: t.replace('T.sblock("x_red_rf")', 'T.sblock("compute")'))
    assert len([b for b in normalize(func).blocks() if b.name != "root"]) == 2
    assert len(opinfo.analyze(func).ops) != 1


INNER_NESTS = """
@T.prim_func
def f(A: T.Buffer((T.int64(8), T.int64(4)), "float32"), C: T.Buffer((T.int64(8), T.int64(4)), "float32")):
    B = T.alloc_buffer((T.int64(8), T.int64(4)))
    for i in range(T.int64(8)):
        for j in range(T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
        for j in range(T.int64(4)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2.0)
"""


def test_inner_nest_text_analysed_once(monkeypatch):
    calls = []
    real = interp_nest.reads_only_own_elements
    monkeypatch.setattr(interp_nest, "reads_only_own_elements", lambda b: calls.append(b.name) or real(b))
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    c = np.zeros((8, 4), np.float32)
    interpret(tir.parse(INNER_NESTS), a, c)
    np.testing.assert_allclose(c, (a + 1) * 2)
    assert sorted(calls) == ["B", "C"]  # once per nest, not once per outer iteration (16)


# --------------------------------------------------------------------------- blockize
# A blockized rfactor partial block (``<tag>_rf_o``) carries an init that loops over a block
# ``<tag>_rf_init`` with a spatial variable of its own (the rfactor axis); the pair is
# merged with that init as the inner block's own. ``blockize`` also leaves ``o % c`` of an
# outer variable over [0, c) in the inner indices, which hid the split from the merge.

from opinfo.blockize import unblockize  # noqa: E402


def _blocks(func):
    return [b.name for b in func.blocks() if b.name != "root"]


def test_looped_rf_init_is_merged():
    func = fixture_func("blockize_rf_init_loop_prod")
    flat = unblockize(func)
    assert "x_red_rf_o" not in _blocks(flat) and "x_red_rf_init" not in _blocks(flat)
    assert_same_values(func, flat)
    (got,) = opinfo.analyze(func).ops
    assert got.name == "prod"
    assert got.to_json()["attrs"] == {"axis": [0, 1], "keepdims": True}


def test_looped_rf_init_at_other_elements_stays():
    """An init that sets other elements than the inner block updates is not the inner
    block's init: the pair stays."""
    func = fixture_func("blockize_rf_init_loop_prod", lambda t: t.replace(
        "x_red_rf_shared[vk1_i_init, v_ax0_o, v_ax1_o] = T.float32(1.0)",
        "x_red_rf_shared[T.int64(2) - vk1_i_init, v_ax0_o, v_ax1_o] = T.float32(1.0)"))
    assert "x_red_rf_o" in _blocks(unblockize(func))


def test_looped_rf_init_over_part_of_its_axis_stays():
    func = fixture_func("blockize_rf_init_loop_prod", lambda t: t.replace(
        "for k1 in range(T.int64(3)):\n                        with T.sblock(\"x_red_rf_init\")",
        "for k1 in range(T.int64(2)):\n                        with T.sblock(\"x_red_rf_init\")"))
    assert "x_red_rf_o" in _blocks(unblockize(func))


SUM_RF_OFFSET = """
@T.prim_func
def f(x: T.Buffer((T.int64(4), T.int64(5), T.int64(6)), "float32"), out: T.Buffer((T.int64(4),), "float32")):
    rf = T.alloc_buffer((T.int64(6), T.int64(4)))
    for i, k1, k2_0 in T.grid(T.int64(4), T.int64(5), T.int64(2)):
        with T.block("x_red_rf_o"):
            vk2_o = T.axis.spatial(T.int64(2), k2_0)
            v_i = T.axis.spatial(T.int64(4), i)
            v_k1 = T.axis.reduce(T.int64(5), k1)
            with T.init():
                for k2_1 in range(T.int64(3)):
                    with T.block("x_red_rf_init"):
                        vk2_i_init = T.axis.spatial(T.int64(3), k2_1)
                        rf[vk2_o * T.int64(3) + vk2_i_init, v_i] = T.float32(0.0)
            for k2_1 in range(T.int64(3)):
                with T.block("x_red_rf"):
                    vk2_i = T.axis.spatial(T.int64(3), k2_1)
                    rf[vk2_o * T.int64(3) + vk2_i, v_i] = rf[vk2_o * T.int64(3) + vk2_i, v_i] + x[v_i, v_k1, vk2_o * T.int64(3) + vk2_i]
    for i, k2 in T.grid(T.int64(4), T.int64(6)):
        with T.block("x_red"):
            v_i, vk2 = T.axis.remap("SR", [i, k2])
            with T.init():
                out[v_i] = T.float32(0.0)
            out[v_i] = out[v_i] + rf[vk2, v_i]
"""


def test_looped_rf_init_with_split_index():
    """The init's variable inside a split index (``o * 3 + i_init``) pairs with the inner
    variable at the same place."""
    func = tir.parse(SUM_RF_OFFSET)
    flat = unblockize(func)
    assert "x_red_rf_o" not in _blocks(flat)
    assert_same_values(func, flat)
    (got,) = opinfo.analyze(func).ops
    assert got.name == "sum"
    assert got.to_json()["attrs"] == {"axis": [1, 2], "keepdims": False}


def test_outer_modulo_over_its_range_lets_the_split_fuse():
    func = fixture_func("blockize_mod_outer_flatten")
    flat = unblockize(func)
    assert _blocks(flat) == ["T_reshape"]
    (blk,) = [b for b in flat.blocks() if b.name == "T_reshape"]
    assert len(blk.iter_vars) == 1
    assert_same_values(func, flat)
    (got,) = opinfo.analyze(func).ops
    assert got.name == "reshape" and got.to_json()["attrs"] == {"shape": [12]}


# --------------------------------------------------------------------------- repeat
# repeat with axis None flattens first (a T_reshape block); compute_inline leaves one block
# reading x[unravel(v // r)] (TVM 0.27: x[v % 108 // 18, v % 18 // 3] for (6, 6), r = 3).


def test_repeat_with_inlined_flattening():
    (got,) = opinfo.analyze(fixture_func("repeat_flat_inlined")).ops
    assert got.name == "repeat" and got.to_json()["attrs"] == {"repeats": 3, "axis": None}


def test_repeat_with_inlined_flattening_other_order_abstains():
    """Column-major reading (the two indices swapped) is no repeat."""
    func = fixture_func("repeat_flat_inlined", lambda t: t.replace(
        "x_shared[v_ax0 % T.int64(108) // T.int64(18), v_ax0 % T.int64(18) // T.int64(3)]",
        "x_shared[v_ax0 % T.int64(18) // T.int64(3), v_ax0 % T.int64(108) // T.int64(18)]"))
    assert opinfo.analyze(func).ops == ()


def test_repeat_1d_with_inlined_flattening_abstains():
    """On 1-D data the inlined axis-None form computes what repeat along axis 0 does."""
    assert opinfo.analyze(fixture_func("repeat_flat_inlined_1d")).ops == ()


# --------------------------------------------------------------------------- interpreter
# A loop above a nest that feeds a reduction variable and a spatial one (rfactor's fused
# loop over the bins and one reduction axis) enters the nest once per value of that
# reduction variable: the init may only run on the entry where it is at its minimum. The
# grid runner ran it on every entry (each entry wiped the sums before), so a function that
# recognizers run (roi_align, scheduled with rfactor) computed other numbers than TVM's.

import shutil  # noqa: E402

OUTER_REDUCE = """
@T.prim_func
def f(x: T.Buffer((T.int64(4), T.int64(3), T.int64(5)), "float32"), out: T.Buffer((T.int64(4), T.int64(5)), "float32")):
    for fused in range(T.int64(12)):
        for j in range(T.int64(5)):
            with T.block("s"):
                vi = T.axis.spatial(T.int64(4), fused // T.int64(3))
                vk = T.axis.reduce(T.int64(3), fused % T.int64(3))
                vj = T.axis.spatial(T.int64(5), j)
                with T.init():
                    out[vi, vj] = T.float32(0.0)
                out[vi, vj] = out[vi, vj] + x[vi, vk, vj]
"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_init_under_an_outer_reduction_loop(vectorize):
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    out = np.full((4, 5), 7.0, np.float32)
    interpret(tir.parse(OUTER_REDUCE), x, out, vectorize=vectorize)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_init_under_an_outer_reduction_loop_c_engine():
    x = np.random.default_rng(1).standard_normal((4, 3, 5)).astype(np.float32)
    out = tir.run(tir.parse(OUTER_REDUCE), x, engine="c")
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


DIVS = """
@T.prim_func
def f(a: T.Buffer((T.int64(4),), "int32"), b: T.Buffer((T.int64(4),), "int32"), c: T.Buffer((T.int64(4),), "int32")):
    for i in range(T.int64(4)):
        with T.block("c"):
            vi = T.axis.spatial(T.int64(4), i)
            c[vi] = T.floordiv(a[vi], 3) + T.floormod(a[vi], b[vi])
"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_constant_divisor_skips_check_variable_divisor_keeps_it(vectorize):
    """A nonzero constant divisor is not checked per lane; a zero read divisor still
    stops the run."""
    from tir.interp_data import InterpError

    a = np.array([7, -7, 5, 0], np.int32)
    c = np.zeros(4, np.int32)
    interpret(tir.parse(DIVS), a, np.array([2, 3, 4, 5], np.int32), c, vectorize=vectorize)
    assert c.tolist() == (np.floor_divide(a, 3) + np.mod(a, [2, 3, 4, 5])).tolist()
    with pytest.raises(InterpError, match="division by zero"):
        interpret(tir.parse(DIVS), a, np.array([2, 0, 4, 5], np.int32), c, vectorize=vectorize)


# --------------------------------------------------------------------------- leakyrelu
# leakyrelu(alpha=0) prints Select(0 < x, x, 0) (x * 0 folded): relu's values, not relu's
# max form; named leakyrelu with alpha 0 from exactly that select.

LEAKY0 = """
@T.prim_func
def f(x: T.Buffer((T.int64(3), T.int64(6)), "float32"), compute: T.Buffer((T.int64(3), T.int64(6)), "float32")):
    for i0, i1 in T.grid(T.int64(3), T.int64(6)):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            compute[v_i0, v_i1] = T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))
"""


def test_leakyrelu_alpha_zero_select():
    (got,) = opinfo.analyze(tir.parse(LEAKY0)).ops
    assert got.name == "nn.leakyrelu" and got.to_json()["attrs"] == {"alpha": 0.0}


@pytest.mark.parametrize("old, new, names", [
    ("T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0)",
     "T.float32(0.0) <= x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0)", []),  # same values, other form
    ("T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))",
     "T.max(x[v_i0, v_i1], T.float32(0.0))", ["nn.relu"]),  # relu's own form stays relu
])
def test_other_relu_forms(old, new, names):
    ops = opinfo.analyze(tir.parse(LEAKY0.replace(old, new))).ops
    assert [op.name for op in ops] == names


# --------------------------------------------------------------------------- compute tags
# TVM names logical_not's and bitwise_not's blocks T_logical_not / T_bitwise_not; an
# elementwise op is checked against the tags of its form in the lowering library
# (opinfo/ew_tags.py), which must therefore carry the same names.

@pytest.mark.parametrize("fixture, op", [("h47_logical_not_tagged", "logical_not"),
                                         ("h47_bitwise_not_tagged", "bitwise_not")])
def test_tagged_not_ops_are_named(fixture, op):
    (got,) = opinfo.analyze(fixture_func(fixture)).ops
    assert got.name == op


@pytest.mark.parametrize("op, dtype, tag", [("logical_not", "bool", "T_logical_not"),
                                            ("bitwise_not", "int32", "T_bitwise_not")])
def test_lowering_library_uses_tvm_tags(op, dtype, tag):
    func = tir.topi.lower(op, [((2, 3), dtype)])
    assert [b.name for b in func.blocks() if b.name != "root"] == [tag]

"""Session 64: two renamings of block coordinates in :func:`opinfo.normalize.normalize`
(TVM 0.27 fixtures from generated corpora).

* ``reindex`` of group_norm's normalising block makes it store at the output's indices while
  it still reads gamma's (groups, 1) reshape at ``[g, v]`` for a unit variable ``v`` no store
  index binds: :func:`opinfo.unit_axes.pin_unstored_unit_vars` writes such a variable as its
  one value.
* ``cache_write`` + ``bind`` leaves the write-back of a cache storing at the digits of the fused
  thread coordinates (``out[c // 27, c % 27 // 3, c % 3, j] = cache[c // 27, j, c % 27 // 3,
  c % 3]``): :func:`opinfo.reduce_fuse.split_fused_copies` gives it one variable per axis,
  a transposing copy the cache passes read through.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import opinfo
import tir
from opinfo.normalize import normalize
from opinfo.reduce_fuse import split_fused_copies
from opinfo.unit_axes import pin_unstored_unit_vars
from tir.functor import pre_order_stmts
from tir.stmt import For
from tests.fixture_util import assert_same_values, fixture_func

GROUP_NORM = "s64_group_norm_reindexed_unit_gamma_var"
ADD = "s64_add_cache_written_back_at_fused_threads"


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _func(text: str):
    return tir.parse(text)


def _block(func, name: str):
    return next(b for b in func.blocks() if b.name == name)


def test_group_norm_reading_gamma_at_an_unbound_unit_variable_is_named():
    assert _ops(fixture_func(GROUP_NORM)) == [("nn.group_norm", {
        "num_groups": 2, "channel_axis": 1, "axes": (2, 3), "epsilon": 0.001, "center": True, "scale": True})]


def test_pinning_drops_only_the_unit_variable_no_store_uses_and_keeps_the_values():
    func = normalize(fixture_func(GROUP_NORM))
    assert func is not None
    norm = _block(func, "T_group_norm")
    assert [iv.var.name for iv in norm.iter_vars] == ["v_ax1", "v_ax4", "v_ax3", "v_ax0"]
    # the reduction keeps its unit reduction variable (only init-less blocks are pinned)
    assert "v_k2" in [iv.var.name for iv in _block(func, "x_red_temp").iter_vars]
    assert_same_values(pin_unstored_unit_vars(fixture_func(GROUP_NORM)), fixture_func(GROUP_NORM))


UNIT_COPY = '''
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(4), T.int64(1)), "float32"), y: T.Buffer((T.int64(4), T.int64(1)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(T.int64(4), T.int64(1)):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = x[vi, vj] * T.float32(2.0)
'''


def test_a_unit_variable_a_store_uses_is_kept():
    func = _func(UNIT_COPY)
    assert pin_unstored_unit_vars(func) is func


def test_a_block_of_unit_variables_only_is_left_alone():
    text = UNIT_COPY.replace("y: T.Buffer((T.int64(4), T.int64(1))", "y: T.Buffer((T.int64(1),)").replace(
        "for i, j in T.grid(T.int64(4), T.int64(1)):", "for i, j in T.grid(T.int64(1), T.int64(1)):").replace(
        'vi, vj = T.axis.remap("SS", [i, j])', 'vi = T.axis.spatial(T.int64(1), i)\n'
        '            vj = T.axis.spatial(T.int64(1), j)').replace(
        "y[vi, vj] = x[vi, vj]", "y[T.int64(0)] = x[vi, vj]")
    func = _func(text)
    assert pin_unstored_unit_vars(func) is func


def test_add_written_back_through_fused_thread_digits_is_named():
    assert _ops(fixture_func(ADD)) == [("add", {})]


def test_the_normalized_add_stores_at_one_variable_per_axis():
    func = normalize(fixture_func(ADD))
    assert func is not None
    (block,) = [b for b in func.blocks() if b.iter_vars]
    assert all(isinstance(i, tir.Var) for i in block.body.indices)


RESHAPE = '''
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(12),), "float32"), y: T.Buffer((T.int64(3), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    for c in range(T.int64(12)):
        with T.block("copy"):
            vc = T.axis.spatial(T.int64(12), c)
            y[vc // T.int64(4), vc % T.int64(4)] = x[vc]
'''


def test_a_copy_reading_the_fused_variable_whole_is_not_split():
    # a reshape: the variable is read as itself, not only through its digits
    func = _func(RESHAPE)
    assert split_fused_copies(func) is func


def _fused_copy(extents: list, at: int, order=None) -> str:
    """``y[digits of c..., j] = x[the digits in ``order`` with j put at position ``at``]`` over
    one fused variable ``c``."""
    order = list(range(len(extents))) if order is None else order
    total = int(np.prod(extents))
    digits, d = [], total
    for e in extents:
        d //= e
        term = f"vc // T.int64({d})" if d > 1 else "vc"
        digits.append(f"{term} % T.int64({e})" if d * e != total else term)
    out_shape = ", ".join(f"T.int64({e})" for e in extents + [2])
    src_axes = [digits[k] for k in order]
    src_ext = [f"T.int64({extents[k]})" for k in order]
    src_axes.insert(at, "vj")
    src_ext.insert(at, "T.int64(2)")
    return f'''
@T.prim_func(private=True)
def main(x: T.Buffer(({", ".join(src_ext)}), "float32"), y: T.Buffer(({out_shape}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for c, j in T.grid(T.int64({total}), T.int64(2)):
        with T.block("copy"):
            vc, vj = T.axis.remap("SS", [c, j])
            y[{", ".join(digits + ["vj"])}] = x[{", ".join(src_axes)}]
'''


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(2, 4), min_size=2, max_size=3).flatmap(
    lambda ext: st.tuples(st.just(ext), st.integers(0, len(ext)))))
def test_splitting_a_fused_copy_keeps_every_value(case):
    extents, at = case
    func = _func(_fused_copy(extents, at))
    split = split_fused_copies(func)
    assert split is not func
    (block,) = [b for b in split.blocks() if b.iter_vars]
    assert all(isinstance(i, tir.Var) for i in block.body.indices)
    assert [int(iv.dom.extent.value) for iv in block.iter_vars] == extents + [2]
    assert_same_values(split, func)


def test_digits_read_out_of_order_keep_the_fused_form():
    # as for a fused reduction: digits on several axes are split only in their order (a
    # packed layout's channel keeps TVM's form)
    func = _func(_fused_copy([2, 3], 0, order=[1, 0]))
    assert split_fused_copies(func) is func


# ---------------------------------------------------------------- specialized extents
# A ceil_mode pool over a symbolic width declares its output length
# ``if_then_else(w % 2 == 0, w // 2, w // 2 + 1)``; bound to a length (opinfo.specialize),
# that is a constant only once the condition is folded and the branch chosen.

MAX_POOL_CEIL = "s64_max_pool1d_ceil_symbolic_width"


def test_a_ceil_mode_pool_over_a_symbolic_width_is_named():
    assert _ops(fixture_func(MAX_POOL_CEIL)) == [("nn.max_pool1d", {
        "pool_size": (1,), "strides": (2,), "dilation": (1,), "padding": (0, 0), "ceil_mode": True,
        "count_include_pad": False, "layout": "NWC", "out_layout": "NWC"})]


def test_binding_folds_comparisons_and_chooses_branches():
    from opinfo.specialize import bind
    func = fixture_func(MAX_POOL_CEIL)
    (w,) = [v for v in func.buffers[0].shape if isinstance(v, tir.Var)]
    for n, out in ((6, 3), (7, 4)):
        bound = bind(func, {w: tir.IntImm(w.dtype, n)})
        assert [int(e.value) for e in bound.buffers[1].shape] == [2, out, 3]
        extents = []
        pre_order_stmts(bound.body, lambda s: extents.append(s.extent) or True if isinstance(s, For) else True)
        assert len(extents) == 7 and all(isinstance(e, tir.IntImm) for e in extents)
        assert out in [e.value for e in extents]


def test_the_work_of_a_bound_function_counts_each_blocks_iterations():
    from opinfo.specialize import CHECK_WORK, _work, bind
    func = fixture_func(MAX_POOL_CEIL)
    (w,) = [v for v in func.buffers[0].shape if isinstance(v, tir.Var)]
    bound = bind(func, {w: tir.IntImm(w.dtype, 7)})
    # the root block once; pad_temp: 2 x (7 + 1) x 3; pool_max: 2 x 4 x 3 x 1
    assert _work(bound) == 1 + 2 * 8 * 3 + 2 * 4 * 3
    assert _work(func) == CHECK_WORK + 1  # a symbolic extent: too large to say


# ---------------------------------------------------------------- tile read as broadcast_to
# TVM simplifies ``v % 8`` to ``v`` where a tile repeats an axis once: a tile that only adds
# leading axes has broadcast_to's loops, told apart by its tag (T_tile).

TILE = "s64_tile_adding_an_axis"


def test_a_tile_adding_an_axis_is_named_with_one_repeat_per_output_axis():
    assert _ops(fixture_func(TILE)) == [("tile", {"repeats": (2, 1)})]


def test_the_same_loops_tagged_broadcast_to_are_broadcast_to():
    func = fixture_func(TILE, lambda t: t.replace('T.sblock("T_tile")', 'T.sblock("T_broadcast_to")'))
    assert _ops(func) == [("broadcast_to", {"shape": (2, 8)})]


def test_a_tile_adding_no_axis_is_not_named_from_broadcast_loops():
    # x (2, 1) tiled to (2, 4): repeats (1, 4) or (4,) lower alike
    text = '''
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(2), T.int64(1)), "float32"), T_tile: T.Buffer((T.int64(2), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    for ax0, ax1 in T.grid(T.int64(2), T.int64(4)):
        with T.block("T_tile"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_tile[v_ax0, v_ax1] = x[v_ax0, T.int64(0)]
'''
    assert _ops(_func(text)) == []

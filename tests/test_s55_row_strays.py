"""Stores past the last row of a buffer (:mod:`opinfo.row_strays`).

``blockize`` of a loop split by a factor that does not divide it gives the outer block the
whole last tile (``T.axis.spatial(6, ...)`` over an axis of 5) and keeps the tail's guard
on the outer loops only: the inner block stores ``out[5, j]`` of a ``(5, 9)`` output, past
all of its row-major storage. Every element inside is what the op computes, so the
function is named (with a warning); a store that may pass an inner axis (flattened, it
lands on the next row), a block with more than its store, and loops that do not keep to
the rows of the store's other axes are still refused.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import opinfo
import tir
from opinfo.row_strays import clip_row_strays

OPS = {"add": ("T_add", "+", np.add), "subtract": ("T_subtract", "-", np.subtract),
       "multiply": ("T_multiply", "*", np.multiply)}


def _text(op: str, rows: int, cols: int, tile_rows: int, threads: int = 4, cols_var: str = "") -> str:
    """A blockized binary op as TVM 0.27 prints it: the outer block over ``tile_rows``
    (>= ``rows``) rows, guarded below ``tile_rows`` only. ``cols_var``: a symbolic column
    extent instead of ``cols``."""
    tag, sym, _ = OPS[op]
    c = cols_var or f"T.int64({cols})"
    blocks = -(-tile_rows // threads)
    return f'''
# from tvm.script import tir as T
@T.prim_func(private=True)
def {op}(x: T.Buffer((T.int64({rows}), {c}), "float32"), y: T.Buffer((T.int64({rows}), {c}), "float32"), out: T.Buffer((T.int64({rows}), {c}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    {f"{cols_var} = T.int64(is_size_var=True)" if cols_var else ""}
    for f0 in T.thread_binding(T.int64({blocks}), thread="blockIdx.x"):
        for f1 in T.thread_binding(T.int64({threads}), thread="threadIdx.x"):
            with T.block("{tag}_o"):
                v_ax0_o = T.axis.spatial(T.int64({tile_rows}), f0 * T.int64({threads}) + f1)
                v_ax1_o = T.axis.spatial(T.int64(1), T.int64(0))
                T.where(f0 * T.int64({threads}) + f1 < T.int64({tile_rows}))
                T.reads(x[v_ax0_o, T.int64(0):{c}], y[v_ax0_o, T.int64(0):{c}])
                T.writes(out[v_ax0_o, T.int64(0):{c}])
                for ax1 in range({c}):
                    with T.block("{tag}"):
                        v_ax1_i = T.axis.spatial({c}, ax1)
                        T.reads(x[v_ax0_o, v_ax1_i], y[v_ax0_o, v_ax1_i])
                        T.writes(out[v_ax0_o, v_ax1_i])
                        out[v_ax0_o, v_ax1_i] = x[v_ax0_o, v_ax1_i] {sym} y[v_ax0_o, v_ax1_i]
'''


def _func(text: str):
    parsed = tir.parse(text)
    return parsed if isinstance(parsed, tir.PrimFunc) else parsed.prim_funcs()[0][1]


def _names(info) -> list:
    return [op.name for op in info.ops]


def test_blockized_tail_past_the_last_row_is_named_with_a_warning():
    func = _func(_text("subtract", 5, 9, 6))
    info = opinfo.analyze(func)
    assert _names(info) == ["subtract"]
    assert [(o.role, o.buffer) for o in info.ops[0].operands] == [("lhs", "x"), ("rhs", "y")]
    assert len(info.warnings) == 1 and "past the end of an axis of out" in info.warnings[0]
    # the interpreter refuses the stray row; restricted to the rows inside, it runs the op
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 5, 9)).astype("float32")
    with pytest.raises(Exception):
        tir.run(func, x, y)
    moved = opinfo.api.unblockize(opinfo.api.move_block_loops(func))
    np.testing.assert_allclose(tir.run(clip_row_strays(moved), x, y), x - y, rtol=1e-6)


def test_rows_inside_need_no_clipping():
    # tile_rows == rows: nothing past the end, no warning
    info = opinfo.analyze(_func(_text("add", 8, 3, 8)))
    assert _names(info) == ["add"] and info.warnings == ()


def test_symbolic_columns_kept_by_their_loop():
    info = opinfo.analyze(_func(_text("multiply", 5, 0, 7, cols_var="n")))
    assert _names(info) == ["multiply"]
    assert any("past the end of an axis" in w for w in info.warnings)


def _past_columns(rows: int, cols: int, tile_rows: int) -> str:
    """The inner loop runs one column past each row: ``out[i, cols]`` is ``out[i + 1, 0]``."""
    text = _text("add", rows, cols, tile_rows)
    text = text.replace(f"for ax1 in range(T.int64({cols}))", f"for ax1 in range(T.int64({cols + 1}))")
    return text.replace(f"v_ax1_i = T.axis.spatial(T.int64({cols}), ax1)",
                        f"v_ax1_i = T.axis.spatial(T.int64({cols + 1}), ax1)")


@pytest.mark.parametrize("tile_rows", [5, 6])
def test_store_past_an_inner_axis_rewritten_later_is_dropped(tile_rows):
    # flattened, out[i, 9] is out[i + 1, 0], which row i + 1 stores afterwards; the last
    # row's (and a tail row's) strays land past the storage
    func = _func(_past_columns(5, 9, tile_rows))
    info = opinfo.analyze(func)
    assert _names(info) == ["add"] and info.warnings
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 5, 9)).astype("float32")
    clipped = clip_row_strays(opinfo.api.unblockize(opinfo.api.move_block_loops(func)))
    np.testing.assert_allclose(tir.run(clipped, x, y), x + y, rtol=1e-6)


def test_reduction_past_the_last_row_is_not_clipped():
    # a block with an init (an accumulation) is more than its store: left to the gates
    text = '''
# from tvm.script import tir as T
@T.prim_func(private=True)
def sum(x: T.Buffer((T.int64(5), T.int64(4)), "float32"), x_red: T.Buffer((T.int64(5),), "float32")):
    T.func_attr({"tir.noalias": True})
    for f0, k in T.grid(T.int64(6), T.int64(4)):
        with T.block("x_red"):
            v0 = T.axis.spatial(T.int64(6), f0)
            vk = T.axis.reduce(T.int64(4), k)
            T.reads(x[v0, vk])
            T.writes(x_red[v0])
            with T.init():
                x_red[v0] = T.float32(0.0)
            x_red[v0] = x_red[v0] + x[v0, vk]
'''
    func = _func(text)
    assert clip_row_strays(func) is func
    assert opinfo.analyze(func).ops == ()


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), rows=st.integers(1, 9), cols=st.integers(1, 6),
       extra=st.integers(0, 3), threads=st.sampled_from([1, 2, 4, 8]))
def test_blockized_binary_ops_named_and_computed(op, rows, cols, extra, threads):
    func = _func(_text(op, rows, cols, rows + extra, threads))
    info = opinfo.analyze(func)
    assert _names(info) == [op]
    assert bool(info.warnings) == (extra > 0)
    rng = np.random.default_rng(rows * 31 + cols)
    x, y = rng.standard_normal((2, rows, cols)).astype("float32")
    clipped = clip_row_strays(opinfo.api.unblockize(opinfo.api.move_block_loops(func)))
    np.testing.assert_allclose(tir.run(clipped, x, y), OPS[op][2](x, y), rtol=1e-6)


def _outer_text(rows: int, cols: int, reverse: bool = False) -> str:
    """``outer`` blockized over rows with the inner loop running one column past the row
    (TVM's blockize of a split inner loop): ``outer[i, cols]`` lands on ``outer[i + 1, 0]``.
    ``reverse``: the rows run last to first, so the stray lands on a row already written."""
    row = f"T.int64({rows - 1}) - i" if reverse else "i"
    return f'''
# from tvm.script import tir as T
@T.prim_func(private=True)
def outer(x: T.Buffer((T.int64({rows}),), "float32"), y: T.Buffer((T.int64({cols}),), "float32"), out: T.Buffer((T.int64({rows}), T.int64({cols})), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i in range(T.int64({rows})):
        with T.block("outer_o"):
            v_i_o = T.axis.spatial(T.int64({rows}), {row})
            v_j_o = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(x[v_i_o], y[T.int64(0):T.int64({cols + 1})])
            T.writes(out[v_i_o, T.int64(0):T.int64({cols + 1})])
            for j in range(T.int64({cols + 1})):
                with T.block("outer"):
                    v_j_i = T.axis.spatial(T.int64({cols + 1}), j)
                    T.reads(x[v_i_o], y[v_j_i])
                    T.writes(out[v_i_o, v_j_i])
                    out[v_i_o, v_j_i] = x[v_i_o] * y[v_j_i]
'''


@pytest.mark.parametrize("rows, cols", [(4, 5), (1, 3), (3, 1)])
def test_stray_column_overwritten_by_the_next_row_is_dropped(rows, cols):
    func = _func(_outer_text(rows, cols))
    info = opinfo.analyze(func)
    assert _names(info) == ["outer"] and info.warnings
    x = np.arange(1, rows + 1, dtype="float32")
    y = np.arange(1, cols + 1, dtype="float32") * 0.5
    clipped = clip_row_strays(opinfo.api.unblockize(opinfo.api.move_block_loops(func)))
    np.testing.assert_allclose(tir.run(clipped, x, y), np.outer(x, y))


def test_stray_column_landing_on_a_row_already_written_is_refused():
    # rows last to first: outer[i, 5] overwrites outer[i + 1, 0], which nothing rewrites
    func = _func(_outer_text(4, 5, reverse=True))
    moved = opinfo.api.unblockize(opinfo.api.move_block_loops(func))
    assert clip_row_strays(moved) is moved
    info = opinfo.analyze(func)
    assert info.ops == () and info.warnings == ()

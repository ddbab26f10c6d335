"""Confident wrongs found in session 11 (tools/fuzz_soundness.py mutants of real TVM output,
and an attribute whose value the loops do not decide); fixtures are copies of /work/gen files."""
from __future__ import annotations

import tir
import opinfo

from tests.fixture_util import FIXTURES, replaced


def _ops(name: str, old: str = "", new: str = "", conventions: bool = False) -> list:
    """(name, attrs) of the ops of every PrimFunc of fixture ``name`` with ``old`` made ``new``."""
    mod = tir.parse(replaced(name, old, new))
    return [[(op.name, dict(op.attrs)) for op in opinfo.analyze(f, conventions=conventions).ops]
            for _, f in mod.prim_funcs()]


def test_std_whose_mean_reads_another_row_abstains():
    assert _ops("s11_std") == [[("std", {"axis": (0, 2), "keepdims": False})]]
    # the mean's sum reads x[k0, 0, k2] for every row: the deviation subtracts the wrong mean
    old = "x_red[v_ax0, v_ax1, v_ax2] + x[v_k0, v_ax1, v_k2]"
    assert _ops("s11_std", old, old.replace("x[v_k0, v_ax1, v_k2]", "x[v_k0, T.int64(0), v_k2]")) == [[]]


def test_take_backward_accumulating_from_another_slot_abstains():
    """With two indices the trials drew one position only (repeated indices accumulate);
    reading out[idx[0]] to write out[idx[1]] shows only with distinct indices."""
    assert _ops("s11_take_backward") == [[("grad.take_backward", {"axis": 0, "mode": ""})]]
    old = "out_buf[v * T.int64(6) + y2[v_1]] = out_buf[v * T.int64(6) + y2[v_1]] + x"
    new = "out_buf[v * T.int64(6) + y2[v_1]] = out_buf[v * T.int64(6) + y2[T.int64(0)]] + x"
    assert _ops("s11_take_backward", old, new) == [[]]


def test_adaptive_pool_to_the_input_size_is_a_convention():
    """output_size equal to the input's size lowers exactly as Relax's output_size=None:
    the value is assumed, so the function alone abstains and a network names it."""
    assert _ops("s11_adaptive_identity") == [[]]
    (ops,) = _ops("s11_adaptive_identity", conventions=True)
    assert [n for n, _ in ops] == ["nn.adaptive_avg_pool2d"]
    assert list(ops[0][1]["output_size"]) == [7, 12]


def test_reduction_under_a_loop_of_no_iteration_abstains():
    """A loop of extent 0 around the only writer of the output: nothing is written."""
    assert _ops("s11_sum") == [[("sum", {"axis": (1,), "keepdims": False})]]
    old = "T.grid(T.int64(1), T.int64(3), T.int64(4))"
    assert _ops("s11_sum", old, "T.grid(T.int64(0), T.int64(3), T.int64(4))") == [[]]


def test_an_output_read_before_it_is_written_abstains():
    """In destination-passing style an output holds nothing until the function writes it:
    ``out[i] = sqrt(out[i])`` (no init, no earlier writer) reads garbage."""
    assert _ops("s11_sqrt") == [[("sqrt", {})]]
    assert _ops("s11_sqrt", "T.sqrt(x[v_i0])", "T.sqrt(compute[v_i0])") == [[]]


def test_an_output_fed_back_under_a_data_dependent_index_or_guard_abstains():
    """The load's index (take) or branch (where) depends on data, so the enumeration of
    uninitialised reads cannot judge it; an op whose operand is the function's own output
    is refused instead."""
    assert _ops("s11_take") == [[("take", {"axis": 1})]]
    assert _ops("s11_take", "= x[v_ax0, x1[v_ax1]]", "= T_take[v_ax0, x1[v_ax1]]") == [[]]
    assert _ops("s11_where") == [[("where", {})]]
    assert _ops("s11_where", "x[v_ax0]), x1[v_ax0], x2[v_ax0])", "x[v_ax0]), T_where[v_ax0], x2[v_ax0])") == [[]]


def test_reduction_storing_at_a_reduction_variable_abstains():
    """An output row bound as a reduction variable ("SRSRR"): the init runs only at its
    first value and the other rows accumulate from nothing (TVM's reduction blocks index
    their output with spatial variables only)."""
    (ops,) = _ops("s11_conv1d")
    assert [n for n, _ in ops] == ["nn.conv1d"]
    old = 'T.axis.remap("SSSRR", [nn, yy, ff, ry, rc])'
    assert _ops("s11_conv1d", old, old.replace("SSSRR", "SRSRR")) == [[]]


def test_decomposed_padding_whose_interior_copy_is_cut_short_abstains():
    """decompose_padding's fill + interior copy are merged back into one pad block only when
    the copy's loops run its whole domain: bound as i2_0 * 1 + i2_1 (for * 2) it copies rows
    0..5 of 10 and the rest keeps the fill."""
    (ops,) = _ops("s11_conv3d_decomposed_pad")
    assert [n for n, _ in ops] == ["nn.conv3d"]
    text = (FIXTURES / "s11_conv3d_decomposed_pad.py").read_text()
    old = "v_i2 = T.axis.spatial(T.int64(10), i2_0 * T.int64(2) + i2_1)"
    second = text.index(old, text.index(old) + 1)  # the interior copy (the first is the fill)
    mod = tir.parse(text[:second] + old.replace("T.int64(2) +", "T.int64(1) +") + text[second + len(old):])
    assert [list(opinfo.analyze(f).ops) for _, f in mod.prim_funcs()] == [[]]


def test_roi_align_whose_init_writes_another_row_abstains():
    """Run-based recognizers run into a NaN-filled output: the init zeroing row v_ph (always
    0) instead of v_i leaves rows 1 and 2 accumulating from nothing."""
    assert [[n for n, _ in ops] for ops in _ops("s11_roi_align")] == [["vision.roi_align"]]
    old = "compute[v_i, v_c, v_ph, v_pw] = T.float32(0.0)"
    assert _ops("s11_roi_align", old, old.replace("[v_i,", "[v_ph,")) == [[]]


def test_producer_whose_loops_skip_part_of_its_domain_is_not_inlined():
    """T_add's binding ax0_0 * 1 + ax0_1 (for * 2) writes 6 of its 10 elements; the chain
    read through it sits under a guard computed from intermediates, which the enumeration of
    uninitialised reads cannot evaluate. The inliner refuses a producer whose own loops
    provably leave part of its domain out."""
    assert [[n for n, _ in ops] for ops in _ops("s11_slice_scatter")] == [["slice_scatter"]]
    text = (FIXTURES / "s11_slice_scatter.py").read_text()
    old = "v_ax0 = T.axis.spatial(T.int64(10), ax0_0 * T.int64(2) + ax0_1)"
    at = [i for i in range(len(text)) if text.startswith(old, i)][6]  # the T_add block
    mod = tir.parse(text[:at] + old.replace("T.int64(2) +", "T.int64(1) +") + text[at + len(old):])
    assert [list(opinfo.analyze(f).ops) for _, f in mod.prim_funcs()] == [[]]


def test_reverse_sequence_tried_on_every_length():
    """``y <= 2`` for ``y <= 1``: only a sequence of length 2 shows it; the runs now draw
    every length from 0 to past the axis."""
    assert [[n for n, _ in ops] for ops in _ops("s11_reverse_sequence")] == [["reverse_sequence"]]
    assert _ops("s11_reverse_sequence", "y[v_ax0] <= T.int64(1) or", "y[v_ax0] <= T.int64(2) or") == [[]]


def test_symbolic_split_loops_that_run_nothing_or_too_little_abstain():
    """Splits of a symbolic axis: ``(n - 24) // 25`` iterations for ``(n + 24) // 25`` run
    nothing at the shape values tried (it was skipped as "not sensible"); ``(n + 3) % 4`` for
    ``// 4`` agreed with it at n = 7 and 12 (now 5 and 29 too)."""
    assert [[n for n, _ in ops] for ops in _ops("s11_sym_sigmoid")] == [["sigmoid"]]
    old = "(n + T.int64(24)) // T.int64(25)"
    assert _ops("s11_sym_sigmoid", old, "(n - T.int64(24)) // T.int64(25)") == [[]]
    assert [[n for n, _ in ops] for ops in _ops("s11_sym_isinf")] == [["isinf"]]
    old = "(n + T.int64(3)) // T.int64(4), T.int64(3), T.int64(2)):"
    assert _ops("s11_sym_isinf", old, old.replace("// T.int64(4)", "% T.int64(4)")) == [[]]


def test_output_writer_too_large_to_enumerate_is_judged_on_its_spatial_loops():
    """A conv3d over a symbolic batch: all its loops together pass the enumeration limit, but
    the output rows (bound yy_0 * 1 + yy_1 for * 2: 6 of 10) need only their own loops."""
    assert [[n for n, _ in ops] for ops in _ops("s11_sym_conv3d")] == [["nn.conv3d"]]
    old = "v_yy = T.axis.spatial(T.int64(10), yy_0 * T.int64(2) + yy_1)"
    assert _ops("s11_sym_conv3d", old, old.replace("T.int64(2) +", "T.int64(1) +")) == [[]]


def test_batch_norm_side_outputs_must_copy_the_moving_statistics_in_order():
    """batch_norm's second and third outputs return its moving mean and variance unchanged;
    returning the mean twice (y3 for y4) is another function."""
    assert [[n for n, _ in ops] for ops in _ops("s11_batch_norm")] == [["nn.batch_norm"]]
    assert _ops("s11_batch_norm", "T_multiply_1[v_ax0] = y4[v_ax0]", "T_multiply_1[v_ax0] = y3[v_ax0]") == [[]]


def test_a_refused_function_says_why():
    """The soundness gates that refuse a function outright give their reason (FuncInfo.refused,
    JSON "refused"); a function no recognizer reads has none."""
    def info(name, old, new):
        (func,) = [f for _, f in tir.parse(replaced(name, old, new)).prim_funcs()]
        return opinfo.analyze(func)

    read_early = info("s11_sqrt", "T.sqrt(x[v_i0])", "T.sqrt(compute[v_i0])")
    assert read_early.ops == () and "read before anything writes it" in read_early.to_json()["refused"]
    idle = info("s11_sum", "T.grid(T.int64(1), T.int64(3), T.int64(4))", "T.grid(T.int64(0), T.int64(3), T.int64(4))")
    assert "written only in part" in idle.refused
    wrong_mean = info("s11_std", "x_red[v_ax0, v_ax1, v_ax2] + x[v_k0, v_ax1, v_k2]",
                      "x_red[v_ax0, v_ax1, v_ax2] + x[v_k0, T.int64(0), v_k2]")
    assert wrong_mean.ops == () and wrong_mean.refused is None and "refused" not in wrong_mean.to_json()
    assert info("s11_sum", "", "").refused is None

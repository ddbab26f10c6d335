"""The uninitialised-read check at small shape values (:data:`opinfo.intermediate_check.
SMALL_SHAPE_VALUES`). TVM 0.27's decompose_padding + compute_at of a conv3d_transpose over a
symbolic batch (fixture s43_*, a generated case) fills rows 1..25 of the padded input and never
its pad row 0, which the convolution reads where the kernel is not zero: the function computes
from storage nothing wrote. At n = 7 its reduction runs 1.4 million iterations, past what the
check enumerates, and it was named; a function must be right at every n, and at n = 2 and 1 the
nest is small enough: refused."""
from __future__ import annotations

import tir
from opinfo.api import analyze
from opinfo.intermediate_check import MAX_POINTS, uninitialised_reads

from tests.fixture_util import fixture_func


def test_unfilled_pad_row_is_found_at_small_batches():
    func = fixture_func("s43_conv3d_transpose_unfilled_pad")
    points_at_7 = 7 * 12 * 17 * 24 * 19 * 3
    assert points_at_7 > MAX_POINTS
    assert uninitialised_reads(func)
    info = analyze(func)
    assert info.ops == () and "storage is read before anything writes it" in info.refused


def test_filling_the_pad_row_passes():
    # the same function with the pad copy started at row 0 (its guard then fills it with 0)
    def edit(text):
        old = "v_i3 = T.axis.spatial(T.int64(26), T.int64(1) + ax3)"
        assert text.count(old) == 1
        text = text.replace(old, "v_i3 = T.axis.spatial(T.int64(26), ax3)")
        text = text.replace("for ax1_1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(25), T.int64(19)):",
                            "for ax1_1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(26), T.int64(19)):")
        old = "v3 = T.axis.spatial(T.int64(26), T.int64(1) + ax3)"
        text = text.replace(old, "v3 = T.axis.spatial(T.int64(26), ax3)")
        return text.replace("for ax0_2, ax1_1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(1), T.int64(25), T.int64(19)):",
                            "for ax0_2, ax1_1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(1), T.int64(26), T.int64(19)):")
    func = fixture_func("s43_conv3d_transpose_unfilled_pad", edit)
    assert not uninitialised_reads(func)
    assert tir.to_script(func)  # still a well-formed function


def test_reduction_left_short_under_a_symbolic_predicate():
    """A fuzz mutant of a TVM-scheduled instance_norm (fixture s43_instance_norm_compute_at):
    its statistics block, compute_at'd under loops no binding reads (13.9 million iterations
    even at n = 1), had its reduction axis's guard `< 7` made `< 6`. realize_check judges
    such a block group by group; a conjunct over the batch `n` used to make it give up on
    every group, so the sum over six of seven rows was named instance_norm. Shape variables
    take their value in each environment now: refused, and the function itself still named."""
    from tests.fixture_util import fixture_ops, replaced

    old = "T.where(ax2_0 * T.int64(4) + ax2_1 < T.int64(7) and"
    assert [name for name, _ in fixture_ops("s43_instance_norm_compute_at")] == ["nn.instance_norm"]
    (_, mutant), = tir.parse(replaced("s43_instance_norm_compute_at", old,
                                      old.replace("T.int64(7)", "T.int64(6)"))).prim_funcs()
    info = analyze(mutant)
    assert info.ops == () and info.refused == "a block's loops do not run the iteration domain it declares"

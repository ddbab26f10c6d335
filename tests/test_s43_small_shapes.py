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

"""Confident wrong answers the mutation fuzzer (tools/fuzz_soundness.py) found, now refused."""
from __future__ import annotations

from tests.fixture_util import fixture_ops


def test_roi_align_whose_before_the_image_test_reads_the_channel_abstains():
    # a fuzzer's mutant of a TVM roi_align: the test "sample x < -1" reads the channel
    # instead of the bin (v_c_1 for v_pw_1); regions starting well before the image show it
    assert fixture_ops("s28_roi_align_mutant_channel_bounds_check") == []

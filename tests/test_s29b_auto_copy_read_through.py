"""``read_at``/``write_at`` tile copies (blocks annotated ``auto_copy``) read through even
when undoing a cache chain renamed their destination to a global buffer, and cache chains
longer than four copies undone to the end: the readers then load the source directly
(:mod:`opinfo.partial_copy` still checks, by enumeration, that every element a reader loads
is one the copy stores). A tile copy that leaves out an element its reader loads stays, and
the function is not named."""
from __future__ import annotations

from tests.fixture_util import fixture_ops

CONV1D = "s29b_conv1d_auto_copy_symbolic"
CONV1D_T = "s29b_conv1d_transpose_auto_copy_chain"
CONV2D_T = "s29b_conv2d_transpose_auto_copy"


def test_conv1d_with_symbolic_batch_tile_copy():
    assert fixture_ops(CONV1D) == [("nn.conv1d", {
        "strides": (2,), "padding": (0, 0), "dilation": (1,), "groups": 2,
        "data_layout": "NCW", "kernel_layout": "OIW", "out_layout": "NCW"})]


def test_conv1d_transpose_with_long_copy_chain():
    assert fixture_ops(CONV1D_T) == [("nn.conv1d_transpose", {
        "strides": (1,), "padding": (0, 0), "output_padding": (0,), "dilation": (1,), "groups": 1,
        "data_layout": "NCW", "kernel_layout": "IOW", "out_layout": "NCW"})]


def test_conv2d_transpose_with_global_tile_copy():
    assert fixture_ops(CONV2D_T) == [("nn.conv2d_transpose", {
        "strides": (2, 1), "padding": (2, 1, 2, 0), "output_padding": (0, 0), "dilation": (1, 1),
        "groups": 2, "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW"})]


def test_tile_copy_missing_a_column_is_not_read_through():
    # the copy's last axis cut from 9 to 8 columns: the reader loads one never copied
    assert fixture_ops(CONV2D_T, "T.grid(1, 4, 18, 9)", "T.grid(1, 4, 18, 8)") == []

"""Packed buffers with several readings (TVM's transform_layout of a single block of channels
beside other unit dimensions) and pools whose every window was folded away.

Fixtures are TVM 0.27 output (OPINFO_WIDE_LAYOUT=1 tools/tvm_oracle/gen_variants.py).
"""
from fixture_util import fixture_func

from opinfo.api import analyze
from opinfo.packed_ops import _usual
from opinfo.info import OpInfo
from opinfo.unpack import packed_readings


def _one(func, **kw):
    ops = analyze(func, **kw).ops
    assert len(ops) == 1
    return ops[0].name, ops[0].to_json()["attrs"]


def test_kernel_with_single_blocks_of_both_channel_axes():
    # IOHW4i4o kernel of 4 input and 4 output channels and kw = 1: (1, 1, 3, 1, 4, 4) read
    # x1[0, 0, 2 - h, 0, i, o] -- no c // 4 pair; four unit dimensions could hold the blocks
    f = fixture_func("layout_conv2d_transpose_single_blocks")
    readings, shown = packed_readings(f)
    x1 = [{b.name: s for b, s in r.items()}["x1"] for r in readings]
    assert len(x1) > 2 and any(len(s) == 2 for s in x1)
    name, attrs = _one(f)
    assert name == "nn.conv2d_transpose"
    assert attrs["kernel_layout"] == "IOHW4i4o" and attrs["data_layout"] == "NCHW4c"
    assert attrs["out_layout"] == "NCHW4c"
    assert attrs["strides"] == [1, 1] and attrs["dilation"] == [1, 2] and attrs["padding"] == [1, 0, 0, 0]


def test_kernel_width_one_beside_a_single_block_of_input_channels():
    # (1, 2, 2, 1, 8, 8): the unit dimension 0 (8 input channels) or 3 (kw = 1) pairs with the
    # free sub-axis; only the first reading gives the layout TVM lowers transposes with
    f = fixture_func("layout_conv2d_transpose_unit_kw")
    name, attrs = _one(f)
    assert name == "nn.conv2d_transpose"
    assert attrs["kernel_layout"] == "IOHW8i8o"
    assert attrs["strides"] == [1, 2] and attrs["dilation"] == [1, 2] and attrs["padding"] == [0, 0, 0, 0]


def test_usual_layouts_per_op():
    def op(name, **attrs):
        return OpInfo(name, attrs, (), None)
    assert _usual(op("nn.conv2d", data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW4c"))
    assert _usual(op("nn.conv2d", data_layout="NHWC8c", kernel_layout="HWIO8i8o", out_layout="NHWC8c"))
    assert not _usual(op("nn.conv2d", data_layout="NCHW4c", kernel_layout="IOHW4o4i", out_layout="NCHW4c"))
    assert not _usual(op("nn.conv2d", data_layout="NCHW4c", kernel_layout="WOHI4i4o", out_layout="NCHW4c"))
    assert _usual(op("nn.conv2d_transpose", data_layout="NCHW4c", kernel_layout="IOHW4i4o", out_layout="NCHW4c"))
    assert not _usual(op("nn.conv2d_transpose", data_layout="NCHW4c", kernel_layout="OIHW4i4o",
                         out_layout="NCHW4c"))
    assert not _usual(op("nn.max_pool2d", layout="HNCW4c", out_layout="HNCW4c"))


def test_pool_with_no_window_in_sight_assumes_its_dilation():
    # pool_size (1, 1) on NCHW8c: transform_layout folded both window variables away
    # (x[n, 0, oh * 2, ow * 2, c]); TVM generated it with dilation (2, 1), which nothing shows
    f = fixture_func("layout_max_pool2d_all_kernel1")
    assert analyze(f).ops == ()
    (op,) = analyze(f, conventions=True).ops
    assert op.name == "nn.max_pool2d" and "dilation" in op.assumed
    assert op.to_json()["attrs"]["pool_size"] == [1, 1] and op.to_json()["attrs"]["strides"] == [2, 2]

"""Session 65: convolutions whose kernel taps of extent 1 a simplifier took out of the data's
indices (``pad_temp[n, c, y * 2, x + rx]`` beside ``w[o, c, ry, rx]``, ``ry`` in [0, 1)), as
TVM prints them after ``transform_layout`` packs the buffers (NCHW4c / OIHW4i4o with a single
block of channels): :func:`opinfo.recognize.conv._with_unit_taps` gives the taps back.
The dilation of such an axis went with its tap (every dilation reads the same element through
a kernel axis of extent 1): the reading marks it assumed, so the function on its own abstains
and keeps the reading as undecided; under conventions (networks) it is reported with 1.
"""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

import opinfo
import tir
import tir.topi
from tests.fixture_util import fixture_func


def _without_unit_taps(func):
    """``func`` (a lowered convolution) printed and read back with the ``+ v_r..`` term of
    every reduction variable of extent 1 dropped from the padded data's indices; the names
    of those variables."""
    text = tir.to_script(func)
    (block,) = [b for b in func.blocks() if b.init is not None]
    unit = [iv.var.name for iv in block.iter_vars if iv.kind == tir.IterKind.REDUCE and iv.dom.extent.value == 1]
    for name in unit:
        text = re.sub(rf"(pad_temp\[[^\]]*?) \+ {name}\b( \* T\.int64\(\d+\))?", r"\1", text)
    return tir.parse(text), unit


@settings(max_examples=40, deadline=None)
@given(kh=st.sampled_from([1, 3]), kw=st.sampled_from([1, 2]), sh=st.integers(1, 2), sw=st.integers(1, 2),
       layout=st.sampled_from([("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")]),
       pad=st.sampled_from([(0, 0, 0, 0), (1, 0, 1, 0), (0, 1, 1, 2)]))
def test_conv_read_with_unit_taps_dropped_from_the_data_index(kh, kw, sh, sw, layout, pad):
    data_layout, kernel_layout = layout
    extent = {"N": 2, "C": 4, "H": 7, "W": 6, "O": 3, "I": 4}
    want = {"strides": (sh, sw), "data_layout": data_layout, "kernel_layout": kernel_layout, "padding": pad}
    kernel = {**extent, "H": kh, "W": kw}
    func = tir.topi.lower("nn.conv2d", [(tuple(extent[c] for c in data_layout), "float32"),
                                        (tuple(kernel[c] for c in kernel_layout), "float32")], **want)
    dropped, unit = _without_unit_taps(func)
    assert (tir.to_script(dropped) != tir.to_script(func)) == bool(unit)
    if not unit:
        (op,) = opinfo.analyze(dropped).ops
    else:
        alone = opinfo.analyze(dropped)
        assert not alone.ops and [op.name for op in alone.undecided] == ["nn.conv2d"]
        assert "dilation" in alone.undecided[0].assumed
        (op,) = opinfo.analyze(dropped, conventions=True).ops
    assert op.name == "nn.conv2d"
    assert {k: op.attrs[k] for k in want} == want
    assert op.attrs["dilation"] == (1, 1) and op.attrs["groups"] == 1


@pytest.mark.parametrize("dilation", [(2, 1), (1, 3), (2, 2)])
def test_the_dilation_of_a_dropped_tap_is_left_open(dilation):
    # a 1 x 1 kernel dilated or not: once the taps are out of the index the loops are the same
    data, weight = ((2, 4, 7, 6), "float32"), ((3, 4, 1, 1), "float32")
    plain, _ = _without_unit_taps(tir.topi.lower("nn.conv2d", [data, weight]))
    dilated, _ = _without_unit_taps(tir.topi.lower("nn.conv2d", [data, weight], dilation=dilation))
    assert tir.to_script(dilated) == tir.to_script(plain)
    info = opinfo.analyze(dilated)
    assert not info.ops and "dilation" in info.undecided[0].assumed


@pytest.mark.parametrize("name, data, weight, given", [
    ("nn.conv3d", (1, 4, 5, 6, 7), (3, 4, 1, 3, 1), dict(strides=(1, 2, 1), padding=(1, 0, 0, 0, 1, 1))),
    ("nn.conv1d", (2, 4, 9), (5, 4, 1), dict(strides=(2,), padding=(1, 1))),
    ("nn.conv2d", (2, 4, 7, 6), (4, 1, 1, 1), dict(groups=4, padding=(1, 1, 0, 0))),
    ("nn.conv2d", (2, 7, 6, 4), (1, 2, 4, 3), dict(padding=(1, 0, 1, 0), data_layout="NHWC", kernel_layout="HWIO")),
])
def test_padded_conv_with_unit_taps_dropped_reads_as_the_plain_one(name, data, weight, given):
    # the taps go back into the pad guard too (it tests the padded index they were taken from)
    func = tir.topi.lower(name, [(data, "float32"), (weight, "float32")], **given)
    dropped, unit = _without_unit_taps(func)
    assert unit
    want = [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]
    assert want and [(op.name, dict(op.attrs)) for op in opinfo.analyze(dropped, conventions=True).ops] == want
    assert not opinfo.analyze(dropped).ops  # the dropped taps' dilation is open


def test_packed_conv_with_one_channel_block_and_unit_kernel():
    # NCHW4c data of 4 channels (its outer channel axis read at 0), an OIHW4i4o kernel 1 x 1
    func = fixture_func("s65_packed_conv_unit_taps")
    assert not opinfo.analyze(func).ops
    (op,) = opinfo.analyze(func, conventions=True).ops
    assert op.name == "nn.conv2d"
    assert dict(op.attrs) == {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
                              "data_layout": "NCHW4c", "kernel_layout": "OIHW4i4o", "out_layout": "NCHW4c"}


def test_a_batch_read_at_0_is_not_taken_for_a_spatial_axis():
    # the batch of one printed as 0: the first data axis reading an output variable alone is
    # then a spatial one, and no tap is given back (the function abstains, it is not misread)
    func = tir.topi.lower("nn.conv2d", [((1, 4, 7, 6), "float32"), ((3, 4, 1, 2), "float32")])
    dropped, _ = _without_unit_taps(func)
    text = re.sub(r"pad_temp\[v_nn, ", "pad_temp[T.int64(0), ", tir.to_script(dropped))
    text = re.sub(r"conv2d_nchw\[v_nn, ", "conv2d_nchw[T.int64(0), ", text)
    ops = opinfo.analyze(tir.parse(text)).ops
    assert all(op.attrs.get("data_layout") in (None, "NCHW") for op in ops)


def test_an_output_axis_no_operand_reads_gets_no_tap():
    # one output row: transform_layout simplified ``y * 2 + ry * 3`` to 0, stride and dilation
    # with it; the unit channel-block axis restore_unit_vars gave a variable is no spatial axis
    # to give the tap to (it read as an NHCW4c conv of stride 1)
    func = fixture_func("s66_packed_conv_output_row_folded")
    info = opinfo.analyze(func)
    assert not info.ops and not info.undecided
    assert not opinfo.analyze(func, conventions=True).ops

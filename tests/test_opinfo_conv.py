"""Convolution recognition: packed layouts (three forms) and transposed convolutions."""
import numpy as np
import pytest

import tir
from opinfo.api import analyze
from pad_inline import inline_pads
from schedule_helpers import random_schedule


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _relayout(func, layouts, reindex):
    from layout.layout import Layout
    from layout.transform import transform_layout

    for k, (src, dst) in enumerate(layouts):
        func = transform_layout(func, k, Layout.parse(src).index_map_to(dst), reindex)
    return func


PACKED = {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i4o", "out_layout": "NCHW4c"}


def test_native_nchwc_conv():
    f = tir.topi.lower("nn.conv2d", [((1, 2, 7, 7, 4), "float32"), ((4, 2, 3, 3, 4, 4), "float32")],
                       padding=[1, 0, 1, 1], strides=[2, 1], data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    (name, got), = _ops(f)
    assert name == "nn.conv2d" and {k: got[k] for k in PACKED} == PACKED
    assert got["padding"] == [1, 0, 1, 1] and got["strides"] == [2, 1]


@pytest.mark.parametrize("cin,cout,reindex", [(8, 16, False), (8, 16, True), (4, 4, False), (4, 4, True), (8, 4, True)])
def test_relaid_out_conv(cin, cout, reindex):
    f = tir.topi.lower("nn.conv2d", [((1, cin, 7, 7), "float32"), ((cout, cin, 3, 3), "float32")],
                       padding=[1, 0, 1, 1], strides=[2, 1], dilation=[1, 2])
    g = _relayout(f, [("NCHW", "NCHW4c"), ("OIHW", "OIHW4i4o"), ("NCHW", "NCHW4c")], reindex)
    (name, got), = _ops(g)
    assert {k: got[k] for k in PACKED} == PACKED
    assert got["padding"] == [1, 0, 1, 1] and got["dilation"] == [1, 2] and got["groups"] == 1


def test_relaid_out_nhwc_conv():
    f = tir.topi.lower("nn.conv2d", [((1, 8, 6, 6), "float32"), ((8, 8, 3, 3), "float32")], padding=[1, 1, 1, 1])
    g = _relayout(f, [("NCHW", "NHWC"), ("OIHW", "OHWI"), ("NCHW", "NHWC")], False)
    (name, got), = _ops(g)
    assert (got["data_layout"], got["kernel_layout"], got["out_layout"]) == ("NHWC", "OHWI", "NHWC")


TRANSPOSE = [
    ("nn.conv2d_transpose", (1, 8, 5, 5), (8, 3, 3, 3),
     dict(strides=[2, 2], padding=[1, 1, 1, 1], groups=2, dilation=[2, 1])),
    ("nn.conv1d_transpose", (2, 4, 7), (4, 6, 3), dict(strides=[1], padding=[1, 2])),
    ("nn.conv1d_transpose", (2, 4, 7), (4, 6, 3), dict(strides=[3], padding=[0, 0])),
    ("nn.conv2d_transpose", (1, 4, 5, 6), (4, 2, 2, 3), dict(strides=[1, 1], padding=[0, 2, 1, 0])),
]


@pytest.mark.parametrize("op,dshape,wshape,attrs", TRANSPOSE)
def test_conv_transpose_round_trip(op, dshape, wshape, attrs):
    f = tir.topi.lower(op, [(dshape, "float32"), (wshape, "float32")], **attrs)
    for g in (f, inline_pads(random_schedule(f, 5))):
        (name, got), = _ops(g)
        assert name == op and all(got[k] == v for k, v in attrs.items())
        assert got["output_padding"] == [0] * len(attrs["strides"])


def test_output_padding_ambiguity_reports_the_default_output_padding():
    # padding [1,1] + output_padding 1 loops exactly like padding [1,0] + output_padding 0:
    # the reading with Relax's default output_padding (0) is reported, and it computes the same
    dshape, wshape = (1, 4, 5), (4, 4, 3)
    f = tir.topi.lower("nn.conv1d_transpose", [(dshape, "float32"), (wshape, "float32")],
                       strides=[2], padding=[1, 1], output_padding=[1])
    (name, got), = _ops(f)
    assert name == "nn.conv1d_transpose"
    assert list(got["padding"]) == [1, 0] and list(got["output_padding"]) == [0]
    g = tir.topi.lower(name, [(dshape, "float32"), (wshape, "float32")], **got)
    assert tir.structural_equal(f, g)


def test_conv_transpose_with_a_wrong_flip_is_refused():
    f = tir.topi.lower("nn.conv1d_transpose", [((1, 4, 5), "float32"), ((4, 4, 3), "float32")], strides=[1])

    def unflip(n):  # kernel read at 1 - w instead of 2 - w: not a transposed convolution
        if isinstance(n, tir.Sub) and tir.expr.as_int(n.a) == 2:
            return tir.Sub(tir.IntImm(n.a.dtype, 1), n.b)
        return None
    assert _ops(tir.transform(f, unflip)) == []


def test_conv_transpose_attrs_recompute_the_function():
    op, dshape, wshape, attrs = TRANSPOSE[0]
    f = tir.topi.lower(op, [(dshape, "float32"), (wshape, "float32")], **attrs)
    (name, got), = _ops(f)
    g = tir.topi.lower(name, [(dshape, "float32"), (wshape, "float32")], **got)
    rng = np.random.default_rng(0)
    x, w = rng.random(dshape, dtype=np.float32), rng.random(wshape, dtype=np.float32)
    np.testing.assert_allclose(tir.run(g, x, w), tir.run(f, x, w), rtol=1e-5)

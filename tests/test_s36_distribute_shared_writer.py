"""decompose_padding, then compute_at of the producer under the interior copy's outer loop
(TVM 0.27; fixture printed by it): the copy shares its nest with the producer and the pad
buffer has two writers, the fill before and the copy. distribute moves the copy to a nest
of its own when it stores exactly its whole domain there (the fill's values elsewhere stay
as they were), then merge_padding puts fill and copy back together; a copy whose loops
leave part of the interior out is not moved (the fill's zeros would be overwritten)."""
import numpy as np

import opinfo
from opinfo.distribute import distribute
from fixture_util import fixture_func

NAME = "decomposed_pad_conv1d_transpose_compute_at"
COPY_LOOPS = "for i1_0, i1_1, i2, u in T.grid(T.int64(2), T.int64(2), T.int64(6), 1):"


def test_the_copy_is_moved_and_the_convolution_named():
    func = fixture_func(NAME)
    assert len(list(distribute(func).blocks())) == len(list(func.blocks()))
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv1d_transpose"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in ("strides", "padding", "groups", "kernel_layout")} == \
        {"strides": [1], "padding": [0, 0], "groups": 2, "kernel_layout": "IOW"}


def test_a_copy_leaving_interior_out_keeps_the_op_abstaining():
    text_func = fixture_func(NAME, lambda t: t.replace(COPY_LOOPS, COPY_LOOPS.replace("T.int64(6), 1", "T.int64(5), 1")))
    import tir

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 4, 6)).astype("float32"), rng.normal(size=(4, 3, 2)).astype("float32")
    # the last interior column keeps the fill's zero: another function than the convolution
    assert not np.allclose(tir.run(text_func, x, w), tir.run(fixture_func(NAME), x, w))
    assert all(op.name != "nn.conv1d_transpose" for op in opinfo.analyze(text_func).ops)

"""A ``read_at`` tile copy that shares a loop with its reader, the reader's loops skipping
part of its domain (TVM 0.27 ``nn.conv3d``, seed 2902): ``pad_temp_reindex`` stores only
rows ``0..8`` and the even columns of ``pad_temp``, which the conv reads, but a second tile
copy (``pad_temp_local``) first copies whole windows of ``pad_temp`` -- columns nothing
stored among them -- so :mod:`opinfo.distribute` may not give the copy and its reader nests
of their own (a reader of the skipped elements would stop reading garbage). Once the conv
reads ``pad_temp`` through that copy, nothing loads a skipped element: ``normalize`` tries
``distribute`` again between its copy passes, and the chain of copies goes.

Negative cases: the conv made to read a column (or a depth row) that ``pad_temp_reindex``
never stores reads garbage, and nothing is named."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import FIXTURES, fixture_func, fixture_ops
from tir.topi import lower
from opinfo.normalize import normalize

CASE = "s29d_conv3d_read_at_shared_tile"
ATTRS = {"strides": (2, 2, 2), "padding": (2, 0, 1, 1, 1, 2), "dilation": (1, 2, 1), "groups": 1,
         "data_layout": "NCDHW", "kernel_layout": "OIDHW", "out_layout": "NCDHW"}
CONV_H = "v_xx * T.int64(2) + v_rx * T.int64(2)"
CONV_D = "v_yy * T.int64(2) + v_ry"


def _edited(old: str, new: str):
    text = (FIXTURES / f"{CASE}.py").read_text()
    assert text.count(old) == 2, old  # the conv's read region and its load
    (_, func), = tir.parse(text.replace(old, new)).prim_funcs()
    return func


def _ops(func) -> list:
    import opinfo

    with np.errstate(all="ignore"):
        return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_fixture_computes_the_conv():
    func = fixture_func(CASE)
    ref = lower("nn.conv3d", [((1, 2, 7, 9, 6), "float32"), ((3, 2, 3, 2, 3), "float32")],
                strides=(2, 2, 2), padding=(2, 0, 1, 1, 1, 2), dilation=(1, 2, 1))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 7, 9, 6)).astype("float32")
    w = rng.standard_normal((3, 2, 3, 2, 3)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, w), tir.run(ref, x, w), rtol=1e-4, atol=1e-4)


def test_conv3d_with_shared_loop_tile_copy_is_recognized():
    assert fixture_ops(CASE) == [("nn.conv3d", ATTRS)]


def test_normalized_conv_reads_the_pad_block():
    func = normalize(fixture_func(CASE))
    assert func is not None
    names = [b.name for b in func.blocks() if b is not func.root_block]
    assert names == ["pad_temp", "conv3d_ncdhw"]


def test_conv_reading_unstored_columns_abstains():
    # odd columns of pad_temp: no block stores them
    assert _ops(_edited(CONV_H, "v_xx * T.int64(2) + v_rx")) == []


def test_conv_reading_unstored_depth_row_abstains():
    # depth row 9 of pad_temp: pad_temp_reindex's loops stop at 8
    assert _ops(_edited(CONV_D, "v_yy * T.int64(2) + v_ry + T.int64(1)")) == []

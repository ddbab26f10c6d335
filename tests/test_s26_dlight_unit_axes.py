"""Functions a TVM scheduler rebuilt (dlight, TVM 0.27, target cuda; ``tirx.is_scheduled``):
a unit axis loses its block variable, and what that looks like must not be read as a
packed layout.

* max_pool2d with a window of 2 x 1, fused with exp: the pool reads ``x[n, c, h * 2 + r, w]``,
  the window's unit axis gone; a 1-D pool in layout ``NCW10c`` computes the same, and was
  named (a confident wrong). A pool's packed reading needs a function whose blocks are the
  legalization's (:func:`opinfo.unit_axes.scheduled`).
* conv3d with a kernel of 2 x 1 x 2 and a batch of 1: the output stored at ``[0, ...]`` and
  the unit kernel axis read at 0 were taken for single blocks of packed axes, and the
  function named a conv2d in layout ``HCWN9h`` (a confident wrong). In a scheduled function
  where only stores at 0 show a packing, the packed reading must name usual layouts
  (:func:`opinfo.packed_ops._reading`).
"""
from __future__ import annotations

import opinfo
import tir
from opinfo.unit_axes import scheduled
from opinfo.unpack import packed_readings, paired
from tests.fixture_util import FIXTURES



def _func(name: str):
    text = (FIXTURES / f"{name}.py").read_text()
    (func,) = [f for _, f in tir.parse(text).prim_funcs()]
    return func


def test_pool_with_a_lost_unit_window_is_not_read_packed():
    func = _func("s26_dlight_pool_unit_window_exp")
    assert scheduled(func)
    names = [op.name for op in opinfo.analyze(func).ops]
    assert "nn.max_pool1d" not in names and names == []


def test_conv3d_with_a_lost_unit_kernel_axis_is_not_read_packed():
    func = _func("s26_dlight_conv3d_unit_kernel_axis")
    assert packed_readings(func)[1] and not paired(func)  # only stores at 0 show a packing
    info = opinfo.analyze(func)
    assert [op.name for op in info.ops] in ([], ["nn.conv3d"])
    for op in info.ops:
        assert op.attrs["data_layout"] == "NCDHW"


def test_a_single_block_packing_shown_by_stores_still_reads_under_dlight():
    # batch_norm on NCHW8c with 8 channels (one block: c // 8 folded to 0), then dlight: only
    # stores at 0 show the packing, and the reading names usual layouts
    func = _func("s26_dlight_batch_norm_packed_single_block")
    assert scheduled(func) and packed_readings(func)[1] and not paired(func)
    (op,) = opinfo.analyze(func).ops
    assert (op.name, op.attrs["axis"], op.attrs["epsilon"]) == ("nn.batch_norm", 1, 0.001)

"""The uninitialised-read gate enumerates a block under thread loops far longer than its
domain (dlight: ``threadIdx.x`` over 256 under ``T.where(t < 8)``) by the iterations its
predicate keeps (it gave up: 802,816 loop iterations for 25,088 block points)."""
from __future__ import annotations

import opinfo

from fixture_util import fixture_func, replaced

import tir


def test_dlight_instance_norm_read():
    (op,) = opinfo.analyze(fixture_func("s42_dlight_instance_norm_5d")).ops
    assert op.name == "nn.instance_norm" and dict(op.attrs)["axes"] == (2, 3, 4)


def test_consumer_of_another_blocks_statistics_refused():
    # the statistics block of thread block f computes channel f % 7, its consumer reads
    # channel f % 8 (shared memory is per thread block): channel 7 is never computed
    text = replaced("s42_dlight_instance_norm_5d", "ax0_ax1_fused % T.int64(8) + ax1)",
                    "ax0_ax1_fused % T.int64(7) + ax1)")
    (_, func), = [(n, f) for n, f in tir.parse(text).functions.items() if isinstance(f, tir.PrimFunc)]
    info = opinfo.analyze(func)
    assert info.ops == () and "storage is read before" in info.refused

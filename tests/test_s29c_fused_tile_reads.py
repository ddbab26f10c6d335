"""A ``read_at`` tile copy under fused loops, its readers' reads enumerated by distribute.

The fixture is TVM 0.27's schedule of avg_pool3d (pool (3, 2, 3), strides (1, 2, 2),
padding 1, ceil_mode) on (1, 7, 8, 9, 11): a ``read_at`` copy whose tile index is a
floordiv/floormod of fused loops (``(v0 * 8 + v1) % 18 // 3 * 2 + v4``) shares its loops
with the pad block's ``reindex`` copy, which computes only the elements the pool reads.
distribute gives them nests of their own only when every element a block loads is one
that nest stores (:func:`opinfo.distribute._reads_within`), and the pool block runs
423,360 iterations: more than the former limit of 2^18 enumerated iterations.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo import distribute
from tests.fixture_util import FIXTURES

NAME = "s29c_avg_pool3d_fused_tile_copy"
TILE = "for ax0_1, ax1_1, ax2, ax3, ax4 in T.grid(1, 1, 1, 2, 1):"


def _func(old: str = "", new: str = ""):
    text = (FIXTURES / f"{NAME}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (_, func), = tir.parse(text).prim_funcs()
    return func


def _ops(func) -> list:
    with np.errstate(all="ignore"):
        return [(op.name, {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attrs.items()})
                for op in opinfo.analyze(func).ops]


def test_fused_tile_copy_chain_is_read_through():
    assert _ops(_func()) == [("nn.avg_pool3d", {
        "pool_size": [3, 2, 3], "strides": [1, 2, 2], "dilation": [1, 1, 1],
        "padding": [1, 1, 1, 1, 1, 1], "ceil_mode": True, "count_include_pad": True,
        "layout": "NCDHW", "out_layout": "NCDHW"})]


def test_reader_over_the_old_limit_is_enumerated():
    assert distribute.MAX_READ_POINTS >= 60 * 8 * 7 * 7 * 3 * 2 * 3


def test_copy_missing_a_row_the_reader_needs_abstains():
    # the tile copy stores one of the two rows (axis 3) of each tile: the reindex block
    # reads both, so half of what the pool sums was never copied
    func = _func(TILE, TILE.replace("T.grid(1, 1, 1, 2, 1)", "T.grid(1, 1, 1, 1, 1)"))
    assert _ops(func) == []


def test_copy_of_the_wrong_tile_abstains():
    # the tile copy stores the row one past the one the reader loads
    old = "v0 // T.int64(9) * T.int64(2) + T.Cast(\"int64\", ax3), (v0 * T.int64(8) + v1) % T.int64(18) // T.int64(3) * T.int64(2) + v4 + T.Cast(\"int64\", ax4)] = "
    new = old.replace("+ T.Cast(\"int64\", ax3),", "+ T.Cast(\"int64\", ax3) + T.int64(1),")
    assert _ops(_func(old, new)) == []

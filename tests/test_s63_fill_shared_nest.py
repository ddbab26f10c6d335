"""Session 63: ``decompose_padding`` combined with ``reindex`` and a merged batch loop
(TVM 0.27 fixtures).

* A grouped conv2d whose constant fill and interior copy of the pad buffer share the
  batch loop: :func:`opinfo.distribute.distribute` gives each a nest of its own when every
  access of the buffer keeps its order against every conflicting one
  (``distribute._order_kept``); a fill writing the other batch row, which overwrites the
  interior the copy stored one iteration before, does not.
* A grouped conv1d whose fill sets a ``reindex`` buffer (its block variables permuted
  against its store), which a transposing copy moves into the pad buffer:
  ``normalize.forward_fills`` makes the copy the fill, whatever the order of the fill's
  variables.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.distribute import distribute
from tests.fixture_util import fixture_func, replaced
from tir import topi

CONV2D = "s63_conv2d_fill_copy_share_batch"
CONV1D = "s63_conv1d_fill_through_reindex"
FILL_ROW = ("v_i3 = T.axis.spatial(T.int64(9), i3_0 * T.int64(3) + i3_1)\n"
            "                    v_i0 = T.axis.spatial(T.int64(2), i0_m)")


def _func(text: str):
    (_, func), = tir.parse(text).prim_funcs()
    return func


def _lowered(op: str, shapes, **attrs):
    return topi.lower(op, [(s, "float32") for s in shapes], **attrs)


def _args(shapes, seed: int = 63):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") for s in shapes]


CONV2D_ATTRS = {"strides": [2, 3], "padding": [1, 0, 0, 0], "dilation": [1, 2], "groups": 4}
CONV2D_SHAPES = [(2, 4, 10, 9), (4, 1, 2, 2)]


def _fill_and_copy_share_a_nest(func) -> bool:
    from tir.stmt import Block

    for stmt in func.root_block.body.seq:
        names = set()
        tir.post_order_visit(stmt, lambda n: names.add(n.name) if isinstance(n, Block) else None)
        if {"pad_temp_pad_const", "pad_temp"} <= names:
            return True
    return False


def test_conv2d_fill_and_copy_in_one_batch_loop_are_named():
    func = fixture_func(CONV2D)
    assert _fill_and_copy_share_a_nest(func) and not _fill_and_copy_share_a_nest(distribute(func))
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv2d"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in CONV2D_ATTRS} == CONV2D_ATTRS
    assert (got["data_layout"], got["kernel_layout"]) == ("NCHW", "OIHW")
    args = _args(CONV2D_SHAPES)
    np.testing.assert_allclose(tir.run(func, *args), tir.run(_lowered("nn.conv2d", CONV2D_SHAPES, **CONV2D_ATTRS), *args),
                               rtol=1e-5, atol=1e-5)


def test_fill_of_the_other_row_keeps_the_nest():
    """The fill of batch row 1 - i0 runs after the copy of row i0 = 0: row 0 ends as zeros.
    Moving the fill to a nest of its own would restore the interior, so the nest stays and
    nothing is named a convolution."""
    mutant = _func(replaced(CONV2D, FILL_ROW, FILL_ROW.replace("i0_m)", "T.int64(1) - i0_m)")))
    args = _args(CONV2D_SHAPES)
    assert not np.allclose(tir.run(mutant, *args), tir.run(fixture_func(CONV2D), *args))
    assert _fill_and_copy_share_a_nest(distribute(mutant))
    assert all(op.name != "nn.conv2d" for op in opinfo.analyze(mutant).ops)


CONV1D_ATTRS = {"strides": [2], "padding": [2, 1], "dilation": [2], "groups": 4}
CONV1D_SHAPES = [(2, 4, 10), (4, 1, 3)]


def test_conv1d_fill_through_a_transposing_reindex_is_named():
    func = fixture_func(CONV1D)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv1d"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in CONV1D_ATTRS} == CONV1D_ATTRS
    args = _args(CONV1D_SHAPES)
    np.testing.assert_allclose(tir.run(func, *args), tir.run(_lowered("nn.conv1d", CONV1D_SHAPES, **CONV1D_ATTRS), *args),
                               rtol=1e-5, atol=1e-5)


def test_conv1d_padded_with_ones_is_not_the_convolution():
    fill = "pad_temp_reindex_local[v0, v1, v2] = T.float32(0.0)"
    mutant = _func(replaced(CONV1D, fill, fill.replace("0.0", "1.0")))
    args = _args(CONV1D_SHAPES)
    assert not np.allclose(tir.run(mutant, *args), tir.run(fixture_func(CONV1D), *args))
    assert all(op.name != "nn.conv1d" for op in opinfo.analyze(mutant).ops)

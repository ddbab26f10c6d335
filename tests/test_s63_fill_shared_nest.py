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


# A grouped conv3d (one input channel per group): decompose_padding's interior copy
# reindexed (it stores x transposed into ``pad_temp_local_reindex``; a copy of that name
# stores it at shifted indices into the pad buffer), and the schedule's simplifier dropped
# the unit input-channel variable from the data's channel index, keeping it in the weight's.
CONV3D = "s63_conv3d_pad_copy_reindexed"
CONV3D_ATTRS = {"strides": [1, 2, 1], "padding": [2, 0, 3, 1, 2, 4], "dilation": [1, 1, 1], "groups": 4}
CONV3D_SHAPES = [(1, 4, 10, 9, 8), (4, 1, 2, 2, 3)]


def test_conv3d_with_reindexed_interior_copy_is_named():
    func = fixture_func(CONV3D)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv3d"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in CONV3D_ATTRS} == CONV3D_ATTRS
    args = _args(CONV3D_SHAPES)
    np.testing.assert_allclose(tir.run(func, *args), tir.run(_lowered("nn.conv3d", CONV3D_SHAPES, **CONV3D_ATTRS), *args),
                               rtol=1e-4, atol=1e-4)


def test_reindex_copy_composed_into_its_writer():
    from opinfo.reindex_store import compose_reindex_copies

    func = distribute(fixture_func(CONV3D))
    composed = compose_reindex_copies(func)
    names = [b.name for b in composed.blocks()]
    assert "pad_temp_local_reindex" not in names and "pad_temp" in names
    args = _args(CONV3D_SHAPES)
    np.testing.assert_allclose(tir.run(composed, *args), tir.run(func, *args), rtol=1e-6, atol=1e-6)


def test_copy_not_named_as_reindex_is_kept():
    """A copy block named otherwise may be an op of its own: nothing is composed."""
    from opinfo.reindex_store import compose_reindex_copies

    text = replaced(CONV3D, 'T.sblock("pad_temp_local_reindex")', 'T.sblock("pad_temp_local_moved")')
    func = distribute(_func(text))
    assert compose_reindex_copies(func) is func


def test_a_reader_between_keeps_the_copy():
    """A block between the writer and the copy that reads the copy's destination would see
    the copied values early: nothing is composed."""
    from opinfo.reindex_store import _pair
    from opinfo.partial_copy import top_positions
    from opinfo.probe import shape_vars
    import attrs as attrs_
    from tir.expr import BufferLoad
    from tir.stmt import BufferStore

    func = distribute(fixture_func(CONV3D))
    blocks = list(func.blocks())
    copy = next(b for b in blocks if b.name == "pad_temp_local_reindex")
    writer = next(b for b in blocks if b.name == "pad_temp")
    params = {id(b) for b in func.buffers}
    symbols = frozenset(shape_vars(func))
    assert _pair(copy, blocks, top_positions(func), params, symbols)[0] is writer
    # a reader of the destination placed (by position) between the two statements
    dst = copy.body.buffer
    reader = attrs_.evolve(copy, name="peek", body=BufferStore(dst, BufferLoad(dst, copy.body.indices),
                                                                copy.body.indices))
    places = dict(top_positions(func))
    k_c = places[id(copy)][0]
    places[id(reader)] = (k_c, None, ())
    assert _pair(copy, blocks + [reader], places, params, symbols) is None


# variance over the last axis, scheduled with rfactor, cache_read into a transposed shared
# buffer and read_at: once the transposing cache is read through, the read_at tile copy
# stores ``S[c, q, ..] = x[q, c, ..]`` with non-variable index expressions -- the same
# expressions in another order, which partial_copy reads through as well.
VARIANCE = "s63_variance_read_at_transposed"


def test_variance_through_a_transposing_tile_copy_is_named():
    func = fixture_func(VARIANCE)
    (op,) = opinfo.analyze(func).ops
    assert (op.name, op.to_json()["attrs"]) == ("variance", {"axis": [3], "keepdims": True})
    # the fixture's write_at copy stores one tile past the end of its buffer (the
    # interpreter refuses it); what opinfo reads, with that copy restricted to the buffer,
    # computes the variance
    from opinfo.normalize import normalize

    args = _args([(5, 4, 9, 4)])
    np.testing.assert_allclose(tir.run(normalize(func), *args),
                               tir.run(_lowered("variance", [(5, 4, 9, 4)], axis=[3], keepdims=True), *args),
                               rtol=1e-5, atol=1e-5)


def test_permuted_copy_reads_the_source_in_its_order():
    from opinfo.partial_copy import _permuted

    # S[i0, i1, i2] = P[i2, i0, i1]: copy_order is (1, 2, 0)
    assert _permuted(("a", "b", "c"), (1, 2, 0)) == ("c", "a", "b")


# selu under two cache_writes into transposed shared buffers: the copy left between them,
# ``compute_shared`` reading ``compute_shared_shared``, is named after that buffer less one
# scope suffix -- a cache's copy, removed; a transposing copy named like an op stays.
SELU = "s63_selu_cache_of_cache_transposed"


def test_selu_through_a_cache_of_a_cache_is_named():
    func = fixture_func(SELU)
    assert [op.name for op in opinfo.analyze(func).ops] == ["nn.selu"]
    from opinfo.normalize import normalize

    args = _args([(3, 4, 2, 9)])
    bound = normalize(func)
    assert bound is not None
    want = tir.run(_lowered("nn.selu", [(3, 4, 2, 9)]), *args)
    # (the fixture's x_local copy stores past the end of its buffer, which the interpreter
    # refuses; normalize restricts it to the buffer)
    np.testing.assert_allclose(tir.run(bound, *args), want, rtol=1e-5, atol=1e-5)


def test_transposing_copy_named_as_an_op_is_kept():
    text = replaced(SELU, 'T.sblock("compute_shared")', 'T.sblock("T_transpose")')
    assert [op.name for op in opinfo.analyze(_func(text)).ops] != ["nn.selu"]


# A grouped conv3d_transpose with a kernel depth of 1 whose depth tap the schedule's
# simplifier took out of the data's index (``data_pad[v0, c, v8, ..]`` beside
# ``kernel_transform[.., v2, ..]``, ``v2`` in [0, 1)): the one data dimension without a
# tap gets the one unit reduction variable no data index reads.
CONV3D_T = "s63_conv3d_transpose_unit_depth_dropped"
CONV3D_T_ATTRS = {"strides": [1, 1, 1], "padding": [0, 0, 1, 0, 0, 2], "output_padding": [0, 0, 0],
                  "dilation": [1, 1, 1], "groups": 2}


def test_conv3d_transpose_with_a_dropped_unit_tap_is_named():
    func = fixture_func(CONV3D_T)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv3d_transpose"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in CONV3D_T_ATTRS} == CONV3D_T_ATTRS
    assert (got["data_layout"], got["kernel_layout"]) == ("NCDHW", "IODHW")
    shapes = [(2, 4, 9, 8, 6), (4, 3, 1, 2, 3)]
    args = _args(shapes)
    want = tir.run(_lowered("nn.conv3d_transpose", shapes, kernel_layout="IODHW", **CONV3D_T_ATTRS), *args)
    np.testing.assert_allclose(tir.run(func, *args), want, rtol=1e-4, atol=1e-4)


def test_two_untapped_dimensions_are_not_guessed():
    """With the depth tap dropped from the data and a second data dimension reading its
    output variable alone, which one the unit variable belongs to is not settled."""
    from opinfo.affine import affine
    from opinfo.recognize.conv_transpose_dims import _Reader
    from tir.expr import Var

    rd = _Reader.__new__(_Reader)  # only the fields _unit_taps reads
    y1, y2, u = Var("y1", "int64"), Var("y2", "int64"), Var("u", "int64")
    rd.out_vars, rd.red, rd.spatial = [y1, y2], {u: 1}, []
    forms = [affine(y1), affine(y2)]
    assert not rd._unit_taps([(0, forms[0]), (1, forms[1])], forms)
    assert rd._unit_taps([(1, forms[1])], forms) and rd.spatial[0].r is u


# A depthwise conv3d_transpose (groups 4, one input channel per group) whose input-channel
# reduction variable the schedule dropped with its block variable: data_pad[v8, v3, ..]
# beside kernel_transform[0, v3, ..]; the channel gets a unit variable back.
CONV3D_TC = "s63_conv3d_transpose_unit_channel_dropped"
CONV3D_TC_ATTRS = {"strides": [1, 2, 1], "padding": [1, 0, 2, 1, 1, 2], "output_padding": [0, 0, 0],
                   "dilation": [1, 1, 1], "groups": 4}


def test_conv3d_transpose_with_a_dropped_unit_channel_is_named():
    func = fixture_func(CONV3D_TC)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv3d_transpose"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in CONV3D_TC_ATTRS} == CONV3D_TC_ATTRS
    assert (got["data_layout"], got["kernel_layout"]) == ("NCDHW", "IODHW")
    shapes = [(1, 4, 10, 9, 8), (4, 1, 2, 2, 3)]
    args = _args(shapes)
    want = tir.run(_lowered("nn.conv3d_transpose", shapes, kernel_layout="IODHW", **CONV3D_TC_ATTRS), *args)
    np.testing.assert_allclose(tir.run(func, *args), want, rtol=1e-4, atol=1e-4)

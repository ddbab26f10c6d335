"""An element copy past the end of its buffer's outermost axis, reading a buffer of
another (symbolic) extent there: ``reindex_cache_read`` caches the 7 elements of ``x`` (of
``n``) that a dot product with a 7-element ``y`` reads, in the reduction's split loops
without their ``T.where``, so the copy binds ``v_k0`` up to 11. Past the outermost axis a
store lies past all of the buffer's storage: it changes no element of the cache whatever
it reads, so the copy is clipped to the elements inside
(:func:`opinfo.coverage._past_storage`, :func:`opinfo.block_loops.clip_copies`) and the
function reads as the ``cross_entropy_with_logits`` it computes.

Past an inner axis it is no such thing: flattened, ``x_local[a, 21, b]`` of rows of 21 is
``x_local[a + 1, 0, b]``. TVM's ``tile`` whose cache copy runs to 21 there, reading ``x``
inside (``v_ax2 % 7``), overwrites the next row's first element with another value, and
is not read; nor is a block past the end that is not a copy, nor a copy leaving out
elements its reader reads."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import fixture_func, fixture_ops
from opinfo.block_loops import clip_copies
from opinfo.normalize import normalize

CE = "s30a_cross_entropy_copy_past_storage"
TILE = "s30a_tile_copy_past_inner_axis"
COPY = "x_local[v_k0] = x[v_k0]"
COPY_LOOPS = ("for k0_0_1_1_1, k0_0_0, k0_1, k0_0_1_0, k0_0_1_1_0 in T.grid(T.int64(3), T.int64(1), "
              "T.int64(2), T.int64(1), T.int64(2)):\n            with T.sblock(\"x_local\")")


def test_copy_past_storage_is_clipped():
    assert fixture_ops(CE) == [("nn.cross_entropy_with_logits", {})]


def test_clipped_function_computes_the_op():
    assert normalize(fixture_func(CE)) is not None
    func = clip_copies(fixture_func(CE))
    rng = np.random.default_rng(0)
    for n in (7, 12):
        x = rng.standard_normal(n).astype("float32")
        y = rng.standard_normal(7).astype("float32")
        got = tir.run(func, x, y)
        np.testing.assert_allclose(got, -np.sum(x[:7] * y), rtol=1e-5, atol=1e-5)


def test_block_past_storage_that_is_not_a_copy_is_not_read():
    assert fixture_ops(CE, COPY, "x_local[v_k0] = x[v_k0] * T.float32(2)") == []


def test_copy_of_other_elements_is_not_read():
    assert fixture_ops(CE, COPY, "x_local[v_k0] = x[v_k0 + T.int64(1)]") == []


def test_copy_leaving_out_read_elements_is_not_read():
    # the copy's tile loop cut to one tile: elements 6..11 are never copied
    short = COPY_LOOPS.replace("T.int64(1), T.int64(2))", "T.int64(1), T.int64(1))", 1)
    assert fixture_ops(CE, COPY_LOOPS, short) == []


def test_copy_past_an_inner_axis_is_not_read():
    assert fixture_ops(TILE) == []


def test_copy_of_a_shorter_buffer_is_not_read():
    # x of 5 elements: the clipped copy still reads x[5], x[6], past its end
    assert fixture_ops(CE, 'x: T.Buffer((n,), "float32")', 'x: T.Buffer((T.int64(5),), "float32")') == []

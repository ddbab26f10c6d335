"""Element copies whose bindings run past their declared domain: ``reindex_cache_read`` gives
its copy block the consumer's split loops (7 split as 2 x 5, the 5 split again as 3 x 2) but
keeps only the inner split's ``T.where``, so the copy binds ``v_i2`` up to 9 over a domain
(and a buffer axis) of 7. The iterations past the axis copy an element outside both buffers
and change neither, so the copy is clipped to the elements inside
(:func:`opinfo.block_loops.clip_copies`, the values the bindings take enumerated) and the
function reads as the gelu it computes. A copy that leaves out elements its consumer reads,
or a block past the end that is not a copy, is not read."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import fixture_func, fixture_ops
from opinfo.normalize import normalize

GELU = "s30_gelu_copy_past_domain"
COPY_LOOPS = "T.grid(T.int64(3), T.int64(2), T.int64(2), T.int64(3), T.int64(2), T.int64(3), T.int64(2))"
COPY = "T_multiply_local[v_i2, v_i0, v_i1] = T_multiply_1[v_i0, v_i1, v_i2]"


def test_copy_past_its_domain_is_clipped():
    assert fixture_ops(GELU) == [("nn.gelu", {})]


def test_clipped_function_computes_gelu():
    func = normalize(fixture_func(GELU))
    assert func is not None
    x = np.random.default_rng(0).standard_normal((9, 4, 7)).astype("float32")
    from math import erf
    want = x * 0.5 * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    np.testing.assert_allclose(tir.run(func, x), want, rtol=1e-5, atol=1e-5)


def test_copy_leaving_out_read_elements_is_not_read():
    # the copy's outer tile loop cut to one tile: columns 5 and 6 are never copied
    assert fixture_ops(GELU, COPY_LOOPS, COPY_LOOPS.replace("T.int64(3), T.int64(2), T.int64(2)",
                                                             "T.int64(3), T.int64(1), T.int64(2)", 1)) == []


def test_block_past_the_end_that_is_not_a_copy_is_not_read():
    assert fixture_ops(GELU, COPY, COPY.replace("v_i2]", "v_i2] + T.float32(1)")) == []

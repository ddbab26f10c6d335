"""Block domains TVM writes as minima after ``compute_at`` with a symbolic shape:
``T.min(n, T.min((n + 2) // 3, (n + 5) // 6 * 2) * 3)`` is ``n`` for every ``n >= 0``
(:func:`opinfo.affine.equal_extents` proves it), so a ``decompose_padding`` interior copy
over such a domain still copies a whole symbolic dimension and the pair merges back into one
pad block. A minimum that can fall below ``n`` is not taken."""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from tests.fixture_util import fixture_func, fixture_ops
from tir import dtype as dt
from tir.expr import Add, FloorDiv, IntImm, Min, Mul, SizeVar
from opinfo.affine import equal_extents

CONV3D = "s29_conv3d_min_extent_pad"
CONV1D = "s29_conv1d_inlined_pad_ambiguous"
MIN_EXTENT = ("T.min(n, T.min((n + T.int64(2)) // T.int64(3), (n + T.int64(5)) // T.int64(6) * T.int64(2))"
              " * T.int64(3))")


def _conv3d_ref(x, w):
    xp = np.pad(x, [(0, 0), (0, 0), (1, 0), (1, 0), (0, 2)])
    n, o = x.shape[0], w.shape[0]
    out = np.zeros((n, o, 5, 5, 5))
    for d in range(5):
        for h in range(5):
            for ww in range(5):
                patch = xp[:, :, d:d + 5:2, h:h + 3:2, ww * 2:ww * 2 + 3]
                out[:, :, d, h, ww] = np.einsum("ncdhw,ocdhw->no", patch, w)
    return out


def test_conv3d_with_min_domain_pad_copy_is_recognized():
    assert fixture_ops(CONV3D) == [("nn.conv3d", {
        "strides": (1, 1, 2), "padding": (1, 1, 0, 0, 0, 2), "dilation": (2, 2, 1), "groups": 1,
        "data_layout": "NCDHW", "kernel_layout": "OIDHW", "out_layout": "NCDHW"})]


def test_conv3d_fixture_computes_the_conv():
    func = fixture_func(CONV3D)
    rng = np.random.default_rng(0)
    # the interpreter walks this schedule element by element (seconds a batch element): the
    # larger batch, whose loops the predicates cut, runs compiled
    for n, engine in ((1, "interp"), (4, "c")):
        x = rng.standard_normal((n, 3, 8, 6, 10)).astype("float32")
        w = rng.standard_normal((1, 3, 3, 2, 3)).astype("float32")
        np.testing.assert_allclose(tir.run(func, x, w, engine=engine), _conv3d_ref(x, w), rtol=1e-4, atol=1e-4)


def test_a_minimum_below_n_is_not_taken():
    # n // 3 * 3 falls below n: the copy may leave rows of the interior holding the fill
    assert fixture_ops(CONV3D, MIN_EXTENT, "T.min(n, n // T.int64(3) * T.int64(3))") == []


def test_equal_extents_of_minima():
    n = SizeVar("n", dt.int64)
    i = lambda v: IntImm(n.dtype, v)  # noqa: E731
    assert equal_extents(Min(n, Mul(FloorDiv(Add(n, i(1)), i(2)), i(2))), n)
    assert equal_extents(n, Min(Mul(FloorDiv(Add(n, i(3)), i(4)), i(4)), n))
    assert equal_extents(Min(n, Mul(Min(FloorDiv(Add(n, i(2)), i(3)), Mul(FloorDiv(Add(n, i(5)), i(6)), i(2))), i(3))), n)
    assert not equal_extents(Min(n, Mul(FloorDiv(n, i(2)), i(2))), n)  # odd n: n - 1
    assert not equal_extents(Min(n, i(7)), n)
    assert not equal_extents(Min(Add(n, i(1)), i(7)), n)
    assert not equal_extents(Min(Mul(FloorDiv(Add(n, i(1)), i(2)), i(2)), Add(n, i(1))), n)  # never n for even n
    assert equal_extents(Min(Add(n, i(2)), Add(n, i(1))), Add(n, i(1)))


def test_conv1d_with_inlined_pad_leaves_after_padding_open():
    # stride 2: after-padding 2 or 3 gives the same 6 outputs and the same reads; the pad is
    # inlined (its buffer, which would tell, is gone): abstaining is right
    assert fixture_ops(CONV1D) == []
    assert opinfo.analyze(fixture_func(CONV1D), conventions=True).ops == ()

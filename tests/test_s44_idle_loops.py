"""Loops of no iteration (:func:`opinfo.rewrite.drop_idle_loops`). TVM 0.27's
decompose_padding + compute_at of a conv3d_transpose (fixture s44_*, a generated case) fills
the padded input with zeros and then copies the dilated data into its interior. A fuzz mutant
that made one loop around the interior copy run 0 times was still named: normalizing rebuilt
the copy's loops from its block's domain and merged it with the fill into a pad. The function
convolves zeros; the loop is now dropped before anything reads the blocks, and it is refused."""
from __future__ import annotations

import numpy as np

import tir
from opinfo.api import analyze
from opinfo.rewrite import drop_idle_loops

from tests.fixture_util import fixture_func, replaced

NAME = "s44_conv3d_transpose_decomposed_pad"
COPY_NEST = "for ax0, ax1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(2), T.int64(1), T.int64(3)):"
IDLE_NEST = "for ax0, ax1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(1), T.int64(2), T.int64(0), T.int64(3)):"


def _idle() -> "tir.PrimFunc":
    (_, func), = tir.parse(replaced(NAME, COPY_NEST, IDLE_NEST)).prim_funcs()
    return func


def test_the_function_as_tvm_wrote_it_is_named():
    info = analyze(fixture_func(NAME))
    (op,) = info.ops
    assert op.name == "nn.conv3d_transpose"
    attrs = dict(op.attrs)
    assert list(attrs["strides"]) == [1, 1, 2] and list(attrs["padding"]) == [0, 0, 1, 1, 0, 2]


def test_an_idle_interior_copy_is_refused():
    func = _idle()
    assert analyze(func).ops == ()
    # what it computes: a convolution of the zero fill alone
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:-1]]
    assert not np.any(tir.run(func, *args))
    assert np.any(tir.run(fixture_func(NAME), *args))


def test_drop_idle_loops_removes_only_loops_of_no_iteration():
    func = _idle()
    dropped = drop_idle_loops(func)
    assert dropped is not func
    text = tir.to_script(dropped)
    assert 'T.sblock("data_pad")' not in text and 'T.sblock("data_pad_pad_const")' in text
    plain = fixture_func(NAME)
    assert drop_idle_loops(plain) is plain

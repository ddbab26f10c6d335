"""A block storing at a reflection of its variable (``out[n - v0 - 1] = x[v0]``): ``reindex``
of a flip moves the reversal from the load to the store (fixture: TVM 0.27, flip of an
``(n,)`` vector with cache_read + reindex). :func:`opinfo.radix_store.radix_stores` gives
such a block a variable over the output's dimension, so the flip reads as it was lowered.
Only an exact reflection onto the dimension is rewritten."""
from __future__ import annotations

import numpy as np

import tir
from opinfo import analyze, verify_op
from opinfo.radix_store import radix_stores

from tests.fixture_util import fixture_func

STATIC = """
@T.prim_func
def flip_cols(x: T.Buffer((3, 8), "float32"), out: T.Buffer((3, 8), "float32")):
    for i, j in T.grid(3, 8):
        with T.block("T_reverse_sequence_reindex"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, STORE] = x[vi, vj]
"""


def _static(store: str, extent: int = 8):
    text = STATIC.replace("STORE", store).replace("T.grid(3, 8)", f"T.grid(3, {extent})")
    return tir.parse(text)


def test_tvm_flip_with_reindexed_store_is_named_and_verified():
    func = fixture_func("s48_flip_reindex_reflected_store")
    (op,) = analyze(func).ops
    assert op.name == "flip" and dict(op.attrs) == {"axis": 0}
    assert verify_op(func, op) is True


def test_static_reflected_store_keeps_values():
    func = _static("7 - vj")
    got = radix_stores(func)
    assert got is not func
    x = np.arange(24, dtype="float32").reshape(3, 8)
    want = x[:, ::-1]
    for f in (func, got):
        np.testing.assert_array_equal(tir.run(f, x), want)
    (op,) = analyze(func).ops
    assert op.name == "flip" and dict(op.attrs) == {"axis": 1}


def test_inexact_reflections_are_left_alone():
    for func in (_static("8 - vj"),              # one past the dimension's end
                 _static("7 - vj", extent=6)):   # a variable shorter than the dimension
        assert radix_stores(func) is func

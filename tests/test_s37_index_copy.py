"""``cache_index`` whose index buffer ``pad_einsum`` padded (TVM 0.27).

The index expression (``v0 % 2`` for a tile's column) is computed into ``index_var_1_pad``
and a crop copies it to ``index_var_1``, which the op reads. Reading the index block
through puts the expression into the crop: the crop is then an index block itself (it
stores an expression of its variables and loads nothing) and is read through in turn, so
the op reads ``x[v1 % 2, v2 % 2]`` as lowered.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.normalize import normalize
from opinfo.rewrite import stores_in
from tests.fixture_util import fixture_func, replaced
from tir.interp import interpret

NAME = "s37_tile_index_cache_padded"


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_padded_index_buffer_is_read_through():
    func = fixture_func(NAME)
    assert _ops(func) == [("tile", {"repeats": (2, 3, 3)})]
    # what the recognizers read stores to no index buffer: both were read through
    stored_to = {s.buffer.name for b in normalize(func).blocks() for s in stores_in(b.body)}
    assert stored_to == {"T_tile"}


def test_fixture_computes_a_tile():
    x = np.random.default_rng(5).standard_normal((2, 2)).astype("float32")
    out = np.zeros((2, 6, 6), "float32")
    interpret(fixture_func(NAME), x, out)
    np.testing.assert_array_equal(out, np.tile(x, (2, 3, 3)))


def test_other_index_expression_is_not_a_tile():
    tir_text = replaced(NAME)
    text = tir_text.replace("index_var_1_pad[v0] = v0 % T.int64(2)",
                            "index_var_1_pad[v0] = (v0 + T.int64(1)) % T.int64(2)")
    assert text != tir_text
    (_, func), = tir.parse(text).prim_funcs()
    assert all(name != "tile" for name, _ in _ops(func))


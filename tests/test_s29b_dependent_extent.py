"""Predicates over loops whose extent uses an outer loop: ``compute_at`` of a producer under
a consumer's thread loop with a symbolic shape, where TVM could not make the region
rectangular, leaves ``for ax1 in range(T.max(f * 4 // n * 3, ..) + 1 - T.min(f * 4 // n * 3,
..))`` beside a predicate ``T.min(..) + ax1 < 4``. Such a loop runs, at each iteration of
the loops around it, exactly the range it evaluates to there; enumerating it that way (as a
rectangular loop with the extent as one more conjunct) decides whether the predicate drops
an element (:func:`opinfo.predicate_enum.covers_exactly`). A range that leaves out a column
is still refused."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import fixture_func, fixture_ops, replaced
from opinfo.normalize import normalize

STD = "s29b_std_dependent_extent"
EXTENT_END = "+ T.int64(1) - T.min("


def _std(x):
    return np.std(x, axis=(0, 1), keepdims=True)


def test_std_with_dependent_loop_extent_is_recognized():
    assert fixture_ops(STD) == [("std", {"axis": (0, 1), "keepdims": True})]


def test_fixture_computes_std():
    func = fixture_func(STD)
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 8, 13):
        x = rng.standard_normal((n, 4)).astype("float32")
        np.testing.assert_allclose(tir.run(func, x), _std(x), rtol=1e-4, atol=1e-5)


def test_a_range_one_short_is_refused():
    # one element fewer per thread: column 2 is never computed once n >= 4
    (_, func), = tir.parse(replaced(STD, EXTENT_END, "- T.min(")).prim_funcs()
    assert normalize(func) is None
    assert fixture_ops(STD, EXTENT_END, "- T.min(") == []

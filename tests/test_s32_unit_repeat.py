"""A confident wrong answer found on a unit-dimension corpus (session 32, gen_unitdims seed
3211): TVM lowers ``repeat(x, 2, axis=None)`` of a (1, 1, 1) tensor to a reshape to (1,) and
a repeat, which read together ``x[0, 0, 0]`` at both points of the (2,) output. That was named
``broadcast_to(shape=[2])``, which does not exist for a rank-3 input: broadcast_to never lowers
the rank. It now reads as the repeat it is (flattening is the only way to lose those axes)."""
from __future__ import annotations

import tir
from opinfo import analyze
from tests.fixture_util import fixture_ops

REPEAT = "s32_repeat_flattened_unit_tensor"


def test_flattening_repeat_of_a_unit_tensor_is_no_broadcast():
    assert fixture_ops(REPEAT) == [("repeat", {"repeats": 2, "axis": None})]


def test_broadcast_to_that_grows_the_rank_is_still_read():
    func = tir.topi.lower("broadcast_to", [((1, 1), "float32")], shape=(3, 1, 2))
    assert [(op.name, dict(op.attrs)) for op in analyze(func).ops] == [("broadcast_to", {"shape": (3, 1, 2)})]

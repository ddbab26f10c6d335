"""A confident wrong answer found on a unit-dimension corpus (session 32, gen_unitdims seed
3211): TVM lowers ``repeat(x, 2, axis=None)`` of a (1, 1, 1) tensor to a reshape to (1,) and
a repeat, which read together ``x[0, 0, 0]`` at both points of the (2,) output. That was named
``broadcast_to(shape=[2])``, which does not exist for a rank-3 input: broadcast_to never lowers
the rank. It now reads as the repeat it is (flattening is the only way to lose those axes).

A second one (seed 3216, scheduled): ``repeat(x, 3, axis=1)`` of an (n, 1) tensor reads
``x[i, 0]`` at every point of the (n, 3) output, TVM having simplified ``j // 3`` to 0: the
loops of ``broadcast_to`` (and of ``tile`` by (1, 3)). The compute tag ``T_repeat`` now
counts among those that name a copy's op, so the broadcast reading is contradicted and the
function abstains."""
from __future__ import annotations

import tir
from opinfo import analyze
from tests.fixture_util import fixture_ops

REPEAT = "s32_repeat_flattened_unit_tensor"
UNIT_AXIS = "s32_repeat_unit_axis_scheduled"


def test_flattening_repeat_of_a_unit_tensor_is_no_broadcast():
    assert fixture_ops(REPEAT) == [("repeat", {"repeats": 2, "axis": None})]


def test_broadcast_to_that_grows_the_rank_is_still_read():
    func = tir.topi.lower("broadcast_to", [((1, 1), "float32")], shape=(3, 1, 2))
    assert [(op.name, dict(op.attrs)) for op in analyze(func).ops] == [("broadcast_to", {"shape": (3, 1, 2)})]


def test_repeat_of_a_unit_axis_reads_like_broadcast_to_and_abstains():
    assert fixture_ops(UNIT_AXIS) == []
    # the same loops under broadcast_to's tag are broadcast_to's
    assert fixture_ops(UNIT_AXIS, 'with T.block("T_repeat"):', 'with T.block("T_broadcast_to"):') == [
        ("broadcast_to", {"shape": ("n", 3)})]


def test_broadcast_reading_needs_broadcast_tos_own_tag():
    # the same loops under a tag the table does not know (another op's degenerate form)
    assert fixture_ops(UNIT_AXIS, 'with T.block("T_repeat"):', 'with T.block("T_unknown_op"):') == []

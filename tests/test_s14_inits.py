"""Decomposed reduction inits met on fresh TVM corpora (fixtures ``s14_*`` copied from real
TVM output):

- ``decompose_reduction`` then ``reindex``: the init sets the reindex buffer and a copy
  moves it into the buffer the update accumulates in (:func:`opinfo.normalize.forward_fills`);
- the update's spatial loop split again after the init was made, and a cache copy plus the
  consumer computed at the same loops: the order of init and update is shown by enumerating
  both blocks' iterations (:func:`opinfo.init_order._enumerated_first`), then the nest is
  distributed;
- TVM's own output where the update reads a reindex buffer that nothing initialises (the
  init went to the output): no op, and no endless inlining of the self-reading stage.
"""
from __future__ import annotations

import opinfo
import tir
from opinfo.normalize import normalize

from tests.fixture_util import FIXTURES

STD_INIT_V2 = "% T.int64(2) * T.int64(4) + i2_1_init)"


def _ops(name: str, old: str = "", new: str = "") -> list:
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (_, func), = tir.parse(text).prim_funcs()
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_init_copied_through_a_reindex_buffer():
    assert _ops("s14_reindex_init_max") == [("max", {"axis": (0,), "keepdims": True})]
    assert _ops("s14_reindex_init_layer_norm") == [
        ("nn.layer_norm", {"axes": (1,), "epsilon": 1e-06, "center": True, "scale": True})]


def test_init_copied_through_a_reindex_buffer_with_another_value_is_no_max():
    assert _ops("s14_reindex_init_max", "T.float32(-340282346638528859811704183484516925440.0)",
                "T.float32(0.0)") == []


def test_init_before_a_resplit_update_is_merged():
    assert _ops("s14_split_init_std") == [("std", {"axis": (0,), "keepdims": True})]
    # the init's own loop permuted: still every element set once before its updates
    assert _ops("s14_split_init_std", STD_INIT_V2,
                "% T.int64(2) * T.int64(4) + (i2_1_init + T.int64(1)) % T.int64(4))") == [
        ("std", {"axis": (0,), "keepdims": True})]


def test_init_setting_an_element_twice_or_after_its_updates_abstains():
    # elements 0, 0, 2, 2 of each group of four: the others never set
    assert _ops("s14_split_init_std", STD_INIT_V2,
                "% T.int64(2) * T.int64(4) + i2_1_init // T.int64(2) * T.int64(2))") == []
    # each row's first half is set one iteration of the shared loop after its updates ran
    fused = "i1_i2_0_fused_0_i1_i2_0_fused_1_fused"
    old = f"T.int64(8), {fused} {STD_INIT_V2}"
    late = f"T.int64(8), ({fused} % T.int64(2) + T.int64(1)) % T.int64(2) * T.int64(4) + i2_1_init)"
    assert _ops("s14_split_init_std", old, late) == []
    # the init is not merged into the update (the accumulator is then read before it is set)
    (_, func), = tir.parse((FIXTURES / "s14_split_init_std.py").read_text().replace(old, late)).prim_funcs()
    assert "T_multiply_red_init" in [b.name for b in normalize(func).blocks()]


def test_update_reading_an_uninitialised_reindex_buffer_abstains():
    assert _ops("s14_reindex_init_garbage_min") == []


# ---------------------------------------------------------------- symbolic loops bound to threads

SQRT_BOUND = "i0_1_i2_i0_0_0_i3_fused_1 < (n + T.int64(3)) // T.int64(4) * T.int64(28))"


def test_symbolic_ceiling_split_bound_to_threads():
    # a loop over 28 * ((n + 3) // 4) split by 32 threads: the two loops are one again before
    # the sizes are enumerated (32 is no period of the coverage)
    assert _ops("s14_symbind_ceil_sqrt") == [("sqrt", {})]
    # the fused index stopping one short leaves the last element out
    assert _ops("s14_symbind_ceil_sqrt", SQRT_BOUND,
                "i0_1_i2_i0_0_0_i3_fused_1 < (n + T.int64(3)) // T.int64(4) * T.int64(28) - T.int64(1))") == []


def test_symbolic_group_enumerated_apart_from_constant_loops():
    # the constant loops over the 504 flattened columns are no part of the symbolic group
    assert _ops("s14_symbind_flatten") == [("reshape", {"shape": ("n", 504)})]
    # the thread index f gives the row f % 2 * 3 + f // 2 of each group of four (those past 3
    # masked): f < 5 still reaches rows 0 to 3, f < 4 misses row 2
    assert _ops("s14_symbind_flatten", "fused_1 < T.int64(6))", "fused_1 < T.int64(5))") == [
        ("reshape", {"shape": ("n", 504)})]
    assert _ops("s14_symbind_flatten", "fused_1 < T.int64(6))", "fused_1 < T.int64(4))") == []

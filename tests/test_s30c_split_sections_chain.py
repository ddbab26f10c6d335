"""``split(x, 3)`` on a symbolic ``n`` after cache primitives: TVM prints a section's length
``(n + 3 - 1) // 3`` in the output's shape and ``(n + 2) // 3`` in the domain of the block
filling it (:func:`opinfo.affine.equal_extents` compares floor-division atoms by what they
compute), the cache_write copies run whole tiles past the end of their buffers (clipped as
element copies), and the first section's op block ``T_split_sections`` copies a
``cache_read`` buffer ``x_shared``: the copy dropped, the cache's block takes the op's name
(its compute tag tells ``split(x, 3)`` from ``split(x, [k])``)."""
from __future__ import annotations

from tir.expr import FloorDiv, IntImm, SizeVar, Add, Sub, Mul
from tir.dtype import int64

from tests.fixture_util import fixture_func, fixture_ops
from opinfo.affine import equal_extents
from opinfo.normalize import normalize
from opinfo.tags import compute_tags

SPLIT = "s30c_split_sym_sections"


def _c(v):
    return IntImm(int64, v)


def test_split_after_cache_chains_is_read():
    assert fixture_ops(SPLIT) == [("split", {"axis": 0, "indices_or_sections": 3})]


def test_op_block_name_survives_the_cache_read_chain():
    assert compute_tags(normalize(fixture_func(SPLIT))) == ["T_split_sections"] * 3


def test_floor_division_atoms_compared_by_value():
    n = SizeVar("n", int64)
    a = FloorDiv(Sub(Add(n, _c(3)), _c(1)), _c(3))
    b = FloorDiv(Add(n, _c(2)), _c(3))
    assert equal_extents(a, b)
    assert equal_extents(Sub(Mul(a, _c(2)), a), b)
    assert not equal_extents(a, FloorDiv(Add(n, _c(1)), _c(3)))
    assert not equal_extents(a, FloorDiv(Add(n, _c(2)), _c(2)))
    assert not equal_extents(Sub(Mul(a, _c(2)), a), Mul(b, _c(2)))


def test_wrong_section_offset_is_not_read():
    old = "T_split_sections_shared[v_ax0] = x[(n + T.int64(2)) // T.int64(3) + v_ax0]"
    assert fixture_ops(SPLIT, old, old.replace("T.int64(2)) // T.int64(3) + v_ax0", "T.int64(1)) // T.int64(3) + v_ax0")) == []


def test_copy_leaving_out_elements_is_not_read():
    # the cache_write copy of the second section runs one element per tile of 4
    old = ("for ax0_1_0, ax0_1_1_1, ax0_0, ax0_1_1_0 in T.grid(T.int64(1), T.int64(3), (n + T.int64(11)) // T.int64(12), "
           "T.int64(2)):\n            with T.block(\"T_split_sections_shared\")")
    assert fixture_ops(SPLIT, old, old.replace("T.int64(1), T.int64(3),", "T.int64(1), T.int64(1),")) == []

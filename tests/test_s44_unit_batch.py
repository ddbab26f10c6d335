"""A batch of one read at a constant 0. TVM's dlight rules rebuild a block from its loops and
drop the unit ones (fixture s44_*, a generated case): ``image.affine_grid`` of one matrix writes
``compute[0, d, i, j]`` and reads ``x[0, d, col]``; the store gets its unit variable back
(:mod:`opinfo.unit_axes`), the matrix read stays at 0, and that is the same element."""
from __future__ import annotations

from opinfo.api import analyze
from opinfo.verify import verify_op

from tests.fixture_util import fixture_func

NAME = "s44_affine_grid_dlight_unit_batch"


def test_affine_grid_of_one_matrix_after_dlight_is_named_and_verified():
    func = fixture_func(NAME)
    (op,) = analyze(func).ops
    assert op.name == "image.affine_grid"
    assert list(op.attrs["size"]) == [6, 6] and op.attrs["align_corners"] is False
    assert verify_op(func, op)  # lowered again and run: the same values


def test_a_matrix_row_other_than_the_output_axis_is_refused():
    def edit(text):
        old = "x[T.int64(0), v0, T.int64(2)]"
        assert text.count(old) == 1
        return text.replace(old, "x[T.int64(0), T.int64(1) - v0, T.int64(2)]")
    assert analyze(fixture_func(NAME, edit)).ops == ()

"""A copy that reorders, pads, slices, tiles or reverses its data is named only under its own
op's compute tag (copy_tags.TAG_REQUIRED), as broadcast_to already was (session 32).

Found in session 33: ``layout_transform(x, index_map=lambda n, c, h, w: (n, h, w, c))`` lowers
(TVM 0.27, tag ``te_layout_transform``) to exactly permute_dims' loops and was named
``permute_dims(axes=[0, 2, 3, 1])`` -- a confident wrong answer, since the op is a
layout_transform whose index map the loops show but whose printed form (the lambda's names)
they do not."""
from __future__ import annotations

import pytest

import tir
from opinfo import analyze
from opinfo.copy_tags import TAG_REQUIRED
from opinfo.api import REFUSALS
from tests.fixture_util import fixture_ops, replaced

PERMUTING = "s33_layout_transform_permutation"


def test_permuting_layout_transform_is_not_permute_dims():
    assert fixture_ops(PERMUTING) == []
    # its tag is one of an op opinfo does not name (api.FOREIGN_TAGS): refused outright
    (_, func), = tir.parse(replaced(PERMUTING)).prim_funcs()
    assert analyze(func).refused == REFUSALS["foreign"]
    # without the tag table, the copy reading still needs permute_dims' own tag
    assert fixture_ops(PERMUTING, 'T.sblock("te_layout_transform")', 'T.sblock("te_unknown_op")') == []


def test_the_same_loops_under_transposes_tag_are_permute_dims():
    assert fixture_ops(PERMUTING, 'T.sblock("te_layout_transform")', 'T.sblock("T_transpose")') == [
        ("permute_dims", {"axes": (0, 2, 3, 1)})]


@pytest.mark.parametrize("op, shape, attrs", [
    ("permute_dims", (3, 5, 2), {"axes": (1, 0, 2)}),
    ("tile", (3, 5), {"repeats": (2, 1)}),
    ("flip", (3, 5, 2), {"axis": 1}),
    ("nn.pad", (3, 5), {"pad_width": (0, 0, 1, 2)}),
    ("strided_slice", (3, 5), {"axes": (0, 1), "begin": (1, 1), "end": (3, 4), "strides": (1, 1)}),
])
def test_lowered_copies_keep_their_names_and_lose_them_under_a_foreign_tag(op, shape, attrs):
    assert op in TAG_REQUIRED
    func = tir.topi.lower(op, [(shape, "float32")], **attrs)
    assert [o.name for o in analyze(func).ops] == [op]
    blocks = {b.name for b in func.blocks() if b.name != "root"}
    text = tir.to_script(func)
    for name in blocks:
        text = text.replace(f'T.sblock("{name}")', 'T.sblock("T_some_other_op")')
    assert blocks and "T_some_other_op" in text
    assert analyze(tir.parse(text)).ops == ()

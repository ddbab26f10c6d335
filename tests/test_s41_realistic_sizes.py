"""Ops at the sizes real networks use, which the recognizers refused for their checks' size
limits (the corpora's ops are small): a 1 x 64 x 112 x 112 pad (its guard was evaluated on
all 831,744 output points; now on the axes it can depend on), BERT-base-sized attention, a
128 x 256 scatter_elements, a 2,000 x 64 scatter_nd and a 300 x 400 index_put (the
interpreter runs them; the limits were 4,000,000 multiply-adds and 16,384 elements)."""
import pytest

import opinfo
from tir import topi

F = "float32"
CASES = [
    ("nn.pad", [((1, 64, 112, 112), F)], dict(pad_width=[0, 0, 0, 0, 1, 1, 1, 1]),
     {"pad_width": (0, 0, 0, 0, 1, 1, 1, 1), "pad_value": 0.0}),
    ("nn.pad", [((1, 64, 112, 112), F)], dict(pad_width=[0, 0, 1, 0, 2, 1, 0, 3], pad_value=1.5),
     {"pad_width": (0, 0, 1, 0, 2, 1, 0, 3), "pad_value": 1.5}),
    ("nn.attention", [((1, 128, 12, 64), F)] * 3, {}, {}),
    ("scatter_elements", [((128, 256), F), ((128, 16), "int64"), ((128, 16), F)], dict(axis=1), {"axis": 1}),
    ("scatter_nd", [((2000, 64), F), ((100, 1), "int64"), ((100, 64), F)], {}, {}),
    ("index_put", [((300, 400), F), ((100,), "int64"), ((100,), "int64"), ((100,), F)], dict(accumulate=True),
     {"accumulate": True}),
]


@pytest.mark.parametrize("name, inputs, attrs, want", CASES, ids=[c[0] for c in CASES])
def test_realistic_sizes_are_read(name, inputs, attrs, want):
    (op,) = opinfo.analyze(topi.lower(name, inputs, **attrs)).ops
    assert op.name == name
    for key, value in want.items():
        assert op.attrs[key] == value, key


def test_a_pad_whose_guard_drops_an_inner_row_is_still_refused():
    import tir

    func = topi.lower("nn.pad", [((1, 64, 112, 112), F)], pad_width=[0, 0, 0, 0, 1, 1, 1, 1])
    text = tir.to_script(func).replace("T.int64(1) <= v_i2 and", "T.int64(1) <= v_i2 and v_i2 != T.int64(50) and")
    assert "v_i2 != T.int64(50)" in text
    assert opinfo.analyze(tir.parse(text)).ops == ()

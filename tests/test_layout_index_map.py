"""Layouts and index maps: parsing, shapes, maps between layouts, inverses."""
import itertools

import pytest
from hypothesis import given, settings, strategies as st

from layout.index_map import IndexMap
from layout.layout import Layout, LayoutError
from layout.layout_map import layout_index_map


@pytest.mark.parametrize("text", ["NCHW", "NHWC", "NCHW4c", "NCHW16c", "OIHW", "OHWI", "HWIO",
                                  "OIHW4i4o", "NCW", "NDHWC"])
def test_parse_print_round_trip(text):
    assert str(Layout.parse(text)) == text


@pytest.mark.parametrize("bad", ["", "NCHW4", "NCcHW", "NCHWC", "NCHW4d", "nchw", "NC-HW"])
def test_bad_layouts_are_refused_with_a_message(bad):
    with pytest.raises(LayoutError, match="layout"):
        Layout.parse(bad)


def test_index_of_and_shape_of():
    lay = Layout.parse("NCHW4c")
    assert lay.index_of("C") == 1 and lay.index_of("c") == 4
    assert lay.primal == "NCHW"
    assert lay.shape_of((1, 8, 5, 5)) == (1, 2, 5, 5, 4)
    assert Layout.parse("NHWC").shape_of((1, 8, 5, 6), "NCHW") == (1, 5, 6, 8)
    assert Layout.parse("OIHW4i4o").shape_of((8, 12, 3, 3)) == (2, 3, 3, 3, 4, 4)
    with pytest.raises(LayoutError, match="not divisible"):
        lay.shape_of((1, 6, 5, 5))


def test_layout_map_is_the_expected_lambda():
    m = layout_index_map("NCHW", "NCHW4c")
    assert m.apply((0, 5, 2, 3)) == (0, 1, 2, 3, 1)
    assert m.inverse().apply((0, 1, 2, 3, 1)) == (0, 5, 2, 3)
    assert m.map_shape((2, 8, 3, 3)) == (2, 2, 3, 3, 4)


def test_from_func_inverse_found_without_hint():
    m = IndexMap.from_func(lambda n, c, h, w: [n, c // 4, h, w, c % 4])
    inv = m.inverse((2, 8, 3, 3))
    for idx in itertools.product(range(2), range(8), range(3), range(3)):
        assert inv.apply(m.apply(idx)) == idx
    assert m.is_bijective((2, 8, 3, 3))


def test_affine_and_fusion_inverses():
    skew = IndexMap.from_func(lambda i, j: [i + 2 * j, j])
    assert skew.inverse().apply((7, 3)) == (1, 3)
    fuse = IndexMap.from_func(lambda i, j: [i * 4 + j])
    assert fuse.inverse((3, 4)).apply((9,)) == (2, 1)


def test_non_divisible_split_reports_padding():
    m = IndexMap.from_func(lambda n, c: [n, c // 4, c % 4])
    assert m.map_shape((2, 6)) == (2, 2, 4)
    assert m.padding((2, 6)) == 4  # two rows of 8 slots for 6 channels
    assert not m.is_bijective((2, 6))
    assert m.pad_predicate((2, 6)) is not None
    assert m.pad_predicate((2, 8)) is None


def test_not_injective_map():
    m = IndexMap.from_func(lambda i, j: [i + j])
    assert not m.is_injective((3, 3))


def test_composition():
    a = layout_index_map("NCHW", "NHWC")
    b = layout_index_map("NHWC", "NCHW4c")
    ab = a.then(b)
    assert ab.apply((1, 6, 2, 3)) == layout_index_map("NCHW", "NCHW4c").apply((1, 6, 2, 3))
    assert ab.inverse().apply(ab.apply((1, 6, 2, 3))) == (1, 6, 2, 3)


_PRIMAL = st.permutations("NCHW")


@st.composite
def _layout_and_shape(draw):
    order = "".join(draw(_PRIMAL))
    split = draw(st.sampled_from([None, "C", "H"]))
    factor = draw(st.sampled_from([2, 4]))
    text = order + (f"{factor}{split.lower()}" if split else "")
    logical = {"N": draw(st.integers(1, 2)), "C": 4 * draw(st.integers(1, 2)),
               "H": 4 * draw(st.integers(1, 2)), "W": draw(st.integers(1, 3))}
    return Layout.parse(text), logical


@settings(max_examples=40, deadline=None)
@given(_layout_and_shape(), _layout_and_shape())
def test_map_then_inverse_is_identity(src_case, dst_case):
    (src, logical), (dst, _) = src_case, dst_case
    shape = src.shape_of(tuple(logical[x] for x in "NCHW"), "NCHW")
    m = src.index_map_to(dst)
    inv = m.inverse()
    assert m.map_shape(shape) == dst.shape_of(shape, src)
    for idx in itertools.islice(itertools.product(*(range(s) for s in shape)), 0, None, 7):
        assert inv.apply(m.apply(idx)) == idx
    assert m.is_bijective(shape)

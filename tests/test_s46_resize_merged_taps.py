"""A cubic resize whose one output row comes from pytorch_half_pixel: every tap along H reads
row 0, and TVM's simplifier writes some of those equal loads in two forms, leaving 12 distinct
loads where the recognizer counted on 16 (every tap) or 4 (merged). Any count up to the full
one now admits the candidates; the numbers decide.

Fixture: TVM 0.27's ``resize2d(x, size=[1, 12], method="cubic",
coordinate_transformation_mode="pytorch_half_pixel")`` legalized over ``x: (1, 3, h, w)`` and
bound at h = 5, w = 6 (``opinfo.specialize.bind``)."""
from __future__ import annotations

import tir
from tir.functor import post_order_visit
from tir.stmt import BufferStore
from opinfo import analyze
from opinfo.recognize.resize import _count_loads

from tests.fixture_util import FIXTURES


def _func():
    return tir.parse((FIXTURES / "s46_resize_cubic_pytorch_one_row.py").read_text())


def test_twelve_distinct_loads():
    stores = []
    post_order_visit(_func().body, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    (store,) = stores
    assert _count_loads(store.value) == 12


def test_named_with_its_one_row_mode():
    (op,) = analyze(_func()).ops
    assert op.name == "image.resize2d"
    attrs = op.to_json()["attrs"]
    assert attrs["size"] == [1, 12]
    assert attrs["method"] == "cubic"
    assert attrs["coordinate_transformation_mode"] == "pytorch_half_pixel"
    assert attrs["layout"] == "NCHW"

"""A max/min reduction's init must be the lowest/highest value of the type: uint8's max
starts at 0 (TVM 0.27's output, named); an int8 max starting at -127 would return -127 for
an all -128 row (abstains)."""
from __future__ import annotations

import opinfo

from tests.fixture_util import fixture_func


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_uint8_max_starts_at_zero():
    assert _ops(fixture_func("s19_uint8_max")) == [("max", {"axis": (1,), "keepdims": False})]


def test_an_init_one_above_the_lowest_value_is_not_a_max():
    def as_int8(text, init):
        return text.replace('"uint8"', '"int8"').replace("T.uint8(0)", init)

    assert _ops(fixture_func("s19_uint8_max", lambda t: as_int8(t, "T.int8(-128)"))) == \
        [("max", {"axis": (1,), "keepdims": False})]
    assert _ops(fixture_func("s19_uint8_max", lambda t: as_int8(t, "T.int8(-127)"))) == []


def test_a_max_pool_init_that_is_not_a_constant_is_not_the_lowest():
    # an unknown init used to read as 0.0: the lowest uint8
    from opinfo.recognize.pool import _is_lowest
    from tir import dtype as dt

    assert _is_lowest(0.0, dt.dtype("uint8")) and not _is_lowest(None, dt.dtype("uint8"))
    assert _is_lowest(-128.0, dt.dtype("int8")) and not _is_lowest(-127.0, dt.dtype("int8"))

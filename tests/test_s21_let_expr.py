"""``T.Let(body, where={v: value})``: TVM's print of a let expression is read, printed back,
run by both engines, and a malformed one is a ParseError naming the place."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import tir

TEXT = '''
# from tvm.script import tir as T
@T.prim_func
def f(x: T.Buffer((8,), "float32"), o: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("o"):
            v = T.axis.spatial(8, i)
            o[v] = T.Let(t * t + t, where={t: x[v] * T.float32(2.0)})
'''


def test_let_expression_round_trips_and_runs():
    func = tir.parse(TEXT)
    text = tir.to_script(func)
    assert "T.Let(t * t + t, where={t: x[v] * T.float32(2.0)})" in text
    assert tir.to_script(tir.parse(text)) == text
    x = np.arange(8, dtype="float32")
    want = (2 * x) ** 2 + 2 * x
    np.testing.assert_array_equal(tir.run(func, x), want)
    if shutil.which("gcc"):
        np.testing.assert_array_equal(tir.run(func, x, engine="c"), want)


def test_the_bound_variable_is_local_to_the_body():
    bad = TEXT.replace("o[v] = T.Let(t * t + t, where={t: x[v] * T.float32(2.0)})",
                       "o[v] = T.Let(x[v], where={t: x[v]}) + t")
    with pytest.raises(tir.ParseError, match="t"):
        tir.parse(bad)


@pytest.mark.parametrize("call", ["T.Let(x[v])", "T.Let(x[v], where={t: 1, s: 2})", "T.Let(x[v], where={1: 1})"])
def test_malformed_let_is_a_parse_error(call):
    with pytest.raises(tir.ParseError, match="T.Let"):
        tir.parse(TEXT.replace("T.Let(t * t + t, where={t: x[v] * T.float32(2.0)})", call))

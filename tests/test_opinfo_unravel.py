"""Reshape into a shape whose symbolic extent is not leading (TVM 0.27 fixture: (n, 3, 6, 5)
-> (5, n * 18)): every data index is a row-major digit of the flat output position, proved
on the index forms for every n (:mod:`opinfo.recognize.unravel`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opinfo
import tir

TEXT = (Path(__file__).parent / "fixtures" / "reshape_symbolic_inner.py").read_text()
SEVEN_AND_ONE = "(v_ax0 * n * T.int64(18) + v_ax1) % T.int64(30) // T.int64(5)"


def _reshape(edit=lambda t: t):
    return tir.parse(edit(TEXT))["reshape"]


def test_symbolic_inner_reshape_recognised():
    (op,) = opinfo.analyze(_reshape()).ops
    assert op.name == "reshape" and op.to_json()["attrs"]["shape"][0] == 5


@pytest.mark.parametrize("n", [1, 2, 3])
def test_fixture_is_a_reshape(n):
    """The proof's claim, checked by running: the function is numpy's reshape."""
    x = np.arange(n * 90, dtype="float32").reshape(n, 3, 6, 5)
    out = np.zeros((5, n * 18), "float32")
    tir.interp.interpret(_reshape(), x, out)
    np.testing.assert_array_equal(out, x.reshape(5, n * 18))


@pytest.mark.parametrize("edit", [
    # digits of the wrong stride: (F % 30) // 6 is not the row-major digit of extent 6
    (SEVEN_AND_ONE, "(v_ax0 * n * T.int64(18) + v_ax1) % T.int64(30) // T.int64(6)"),
    # another flat position (columns first) is a transpose, not a reshape
    ("x[(v_ax0 * n * T.int64(18) + v_ax1) // T.int64(90) % n", "x[(v_ax1 * T.int64(5) + v_ax0) // T.int64(90) % n"),
])
def test_other_index_maps_are_not_reshapes(edit):
    assert edit[0] in TEXT
    ops = opinfo.analyze(_reshape(lambda t: t.replace(*edit))).ops
    assert all(op.name != "reshape" for op in ops)

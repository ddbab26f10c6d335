"""argmax/argmin read from their update's effect (:mod:`opinfo.arg_select`), whichever way
round TVM writes the comparisons: every form that keeps the larger (smaller) value and, on
equal values, the first index is named; a form that breaks ties otherwise, mixes argmax
with argmin or starts from a beatable value is not. The interpreter, on data full of ties,
shows each named form computes numpy's argmax/argmin and each unnamed one does not."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from opinfo.api import analyze
from fixture_util import fixture_func

# argmax over axis 0 of a (7, 8) tensor, keepdims (TVM 0.27, ops43 argmax_4343_3)
A, X, I, K = "x_red_temp_v1[v_ax0, v_ax1]", "x[v_k0, v_ax1]", "x_red_temp_v0[v_ax0, v_ax1]", "v_k0"
IDX = f"T.Select({A} > {X} or {A} == {X} and {I} < {K}, {I}, {K})"
VAL = f"T.Select({A} > {X}, {A}, {X})"
INIT = "x_red_temp_v1[v_ax0, v_ax1] = T.float32(-340282346638528859811704183484516925440.0)"

NAMED = {
    "swapped": (f"T.Select({X} < {A} or {X} == {A} and {K} > {I}, {I}, {K})", f"T.Select({X} < {A}, {A}, {X})"),
    "turned": (f"T.Select({A} < {X} or {A} == {X} and {K} < {I}, {K}, {I})", f"T.Select({X} > {A}, {X}, {A})"),
    "ge_value": (IDX, f"T.Select({A} >= {X}, {A}, {X})"),
    "negated": (f"T.Select(not ({A} <= {X}) or {A} == {X} and {I} < {K}, {I}, {K})", VAL),
}
UNNAMED = {
    "last_index": (f"T.Select({A} > {X} or {A} == {X} and {K} < {I}, {I}, {K})", VAL),
    "no_tie_break": (f"T.Select({A} > {X}, {I}, {K})", VAL),
    "argmin_index": (f"T.Select({A} < {X} or {A} == {X} and {I} < {K}, {I}, {K})", VAL),
    "argmin_value": (IDX, f"T.Select({A} < {X}, {A}, {X})"),
}


def _argmax(idx: str, val: str, init: str = INIT):
    def edit(text):
        for old, new in ((IDX, idx), (VAL, val), (INIT, init)):
            assert old in text
            text = text.replace(old, new)
        return text
    return fixture_func("arg_argmax_plain", edit)


def _tied(shape, seed=0, low=0):
    return np.random.default_rng(seed).integers(low, low + 3, shape).astype("float32")


def _ops(func):
    return [(o.name, o.attrs) for o in analyze(func).ops]


@pytest.mark.parametrize("form", sorted(NAMED))
def test_equivalent_forms_are_argmax(form):
    func = _argmax(*NAMED[form])
    assert _ops(func) == [("argmax", {"axis": 0, "keepdims": True})]
    for seed in range(3):
        data = _tied((7, 8), seed)
        np.testing.assert_array_equal(tir.run(func, data), np.argmax(data, axis=0, keepdims=True))


@pytest.mark.parametrize("form", sorted(UNNAMED))
def test_other_tie_breaks_and_mixtures_are_unnamed(form):
    func = _argmax(*UNNAMED[form])
    assert _ops(func) == []
    data = _tied((7, 8))
    differs = [not np.array_equal(tir.run(func, data), getattr(np, op)(data, axis=0, keepdims=True))
               for op in ("argmax", "argmin")]
    assert all(differs)  # naming it either would be wrong


def test_beatable_init_is_unnamed():
    func = _argmax(IDX, VAL, INIT.replace("T.float32(-340282346638528859811704183484516925440.0)", "T.float32(0)"))
    assert _ops(func) == []
    data = _tied((7, 8), low=-5)  # all negative: nothing beats the init
    assert not np.array_equal(tir.run(func, data), np.argmax(data, axis=0, keepdims=True))


def test_argmin_written_either_way():
    a, x, i, k = ("x_red_temp_v1[v_ax0, v_ax1, v_ax2]", "x[v_ax0, v_ax1, v_ax2, v_k3]",
                  "x_red_temp_v0[v_ax0, v_ax1, v_ax2]", "v_k3")
    edits = {f"T.Select({a} < {x} or {a} == {x} and {i} < {k}, {i}, {k})":
             f"T.Select({x} > {a} or {x} == {a} and {k} > {i}, {i}, {k})",
             f"T.Select({a} < {x}, {a}, {x})": f"T.Select({x} > {a}, {a}, {x})"}

    def edit(text):
        for old, new in edits.items():
            assert old in text
            text = text.replace(old, new)
        return text

    func = fixture_func("arg_argmin_plain", edit)
    assert _ops(func) == [("argmin", {"axis": 3, "keepdims": False})]
    data = _tied((8, 3, 6, 9))
    np.testing.assert_array_equal(tir.run(func, data), np.argmin(data, axis=3))


def test_blockized_argmax_written_value_first():
    # TVM's blockize printed `x[..] < acc` (tir dialect, symbolic batch)
    func = fixture_func("arg_blockize_argmax_swapped")
    assert _ops(func) == [("argmax", {"axis": 0, "keepdims": False})]
    data = _tied((4, 6, 3, 3))
    np.testing.assert_array_equal(tir.run(func, data), np.argmax(data, axis=0))
